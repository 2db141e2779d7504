/** Capped exponential backoff with ±20% jitter: the delay before retry number `attempt` (1-based). */
export function backoffDelay(attempt: number, opts: { initialMs: number; maxMs: number } = { initialMs: 500, maxMs: 30_000 }): number {
  const exp = Math.min(opts.maxMs, opts.initialMs * 2 ** Math.max(0, attempt - 1));
  return exp * (0.8 + Math.random() * 0.4);
}

/** `ms` give or take 5%, so periodic work of many objects spreads out. */
export function jitter(ms: number): number {
  return Math.round(ms * (0.95 + Math.random() * 0.1));
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
