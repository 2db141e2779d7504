/**
 * client-go's client-side rate limit (`QPS`, `Burst`): a token bucket that
 * holds up to `burst` tokens and refills at `qps` a second. `take()` resolves
 * when the caller may send: at once while tokens last, then in order, one per
 * 1/qps seconds. For remote clusters (`--qps`, `--burst`); the managing
 * cluster is bounded by concurrency and its API server's Priority and Fairness.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;
  /** When the last reservation may go: callers are served in order. */
  private throttledMs = 0;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(qps > 0) || !(burst >= 1)) throw new Error(`rate limit: want qps > 0 and burst >= 1 (got ${qps}, ${burst})`);
    this.tokens = burst;
    this.last = now();
  }

  /** How long the caller must wait before sending (0: at once); the token is taken either way. */
  reserve(): number {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    const wait = this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
    this.throttledMs += wait;
    return wait;
  }

  /** Waits for a token; rejects with the signal's reason when it is aborted meanwhile. */
  async take(signal?: AbortSignal): Promise<void> {
    const wait = this.reserve();
    if (wait <= 0) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(done, wait);
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      function done(): void {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }
    });
  }

  /** Milliseconds callers have been told to wait in all (for metrics). */
  get throttledMilliseconds(): number {
    return this.throttledMs;
  }
}
