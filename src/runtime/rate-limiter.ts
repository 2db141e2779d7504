/**
 * Rate limiters for the work queue, after client-go's `default_rate_limiters.go`:
 * a per-key exponential backoff, an overall token bucket, and the max of both
 * (client-go's `DefaultControllerRateLimiter`). All delays are in milliseconds.
 */

/** Decides how long a key waits before it is retried. */
export interface RateLimiter {
  /** The delay before `key` may run again; counts one more retry of it. */
  when(key: string): number;
  /** Forgets a key's retries (its backoff starts again from the base delay). */
  forget(key: string): void;
  /** How many times `key` has been retried since it was last forgotten. */
  numRequeues(key: string): number;
}

export const DEFAULT_BASE_DELAY_MS = 5;
export const DEFAULT_MAX_DELAY_MS = 5 * 60_000;
export const DEFAULT_JITTER = 0.1;
export const DEFAULT_QPS = 10;
export const DEFAULT_BURST = 100;

export interface BackoffOptions {
  /** First retry delay; doubles on each retry. Default 5 ms. */
  baseDelayMs?: number;
  /** Cap on the backoff before jitter. Default 5 minutes. */
  maxDelayMs?: number;
  /** Relative jitter: the delay is spread uniformly over ±jitter of it. Default 0.1; 0 disables. */
  jitter?: number;
  /** Source of randomness in [0, 1); default Math.random. */
  random?: () => number;
}

/**
 * Per-key exponential backoff: base·2^retries, capped, then spread by ±jitter so
 * that keys failing together do not all come back together.
 */
export class ExponentialBackoffRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly jitter: number;
  private readonly random: () => number;

  constructor(opts: BackoffOptions = {}) {
    this.baseDelayMs = opts.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
    this.maxDelayMs = opts.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
    this.jitter = opts.jitter ?? DEFAULT_JITTER;
    this.random = opts.random ?? Math.random;
    requireRange('baseDelayMs', this.baseDelayMs, 0, Infinity);
    requireRange('maxDelayMs', this.maxDelayMs, this.baseDelayMs, Infinity);
    requireRange('jitter', this.jitter, 0, 1);
  }

  when(key: string): number {
    const retries = this.failures.get(key) ?? 0;
    this.failures.set(key, retries + 1);
    // 2 ** retries becomes Infinity for large counts; the cap still applies.
    const backoff = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** retries);
    if (this.jitter === 0) return backoff;
    return backoff * (1 + this.jitter * (2 * this.random() - 1));
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

export interface TokenBucketOptions {
  /** Sustained rate in tokens per second. Default 10; Infinity disables the limit. */
  qps?: number;
  /** Bucket size (and initial content). Default 100. */
  burst?: number;
  /** Monotonic milliseconds. Default performance.now. */
  now?: () => number;
}

/**
 * Overall token bucket shared by all keys, like golang.org/x/time/rate's
 * `Reserve().Delay()`: each call takes a token, borrowing against the future
 * when the bucket is empty, and returns how long until that token exists.
 */
export class TokenBucketRateLimiter implements RateLimiter {
  private readonly qps: number;
  private readonly burst: number;
  private readonly now: () => number;
  private tokens: number;
  private last: number;

  constructor(opts: TokenBucketOptions = {}) {
    this.qps = opts.qps ?? DEFAULT_QPS;
    this.burst = opts.burst ?? DEFAULT_BURST;
    this.now = opts.now ?? (() => performance.now());
    if (!(this.qps > 0)) throw new RangeError(`qps must be > 0, got ${this.qps}`);
    requireRange('burst', this.burst, 1, Infinity);
    this.tokens = this.burst;
    this.last = this.now();
  }

  when(_key: string): number {
    if (this.qps === Infinity) return 0;
    const now = Math.max(this.now(), this.last);
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(_key: string): void {}

  numRequeues(_key: string): number {
    return 0;
  }
}

/** The longest delay of several limiters (every limiter is consulted, so each counts the retry). */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    if (limiters.length === 0) throw new RangeError('MaxOfRateLimiter needs at least one limiter');
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(...this.limiters.map((l) => l.when(key)));
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    return Math.max(...this.limiters.map((l) => l.numRequeues(key)));
  }
}

export type ControllerRateLimiterOptions = BackoffOptions & Omit<TokenBucketOptions, 'now'>;

/**
 * client-go's default controller rate limiter (per-key exponential backoff, max'd
 * with a 10 qps / 100 burst bucket), with a 5-minute cap and jitter by default.
 */
export function defaultControllerRateLimiter(
  opts: ControllerRateLimiterOptions = {},
  now?: () => number,
): RateLimiter {
  return new MaxOfRateLimiter(
    new ExponentialBackoffRateLimiter(opts),
    new TokenBucketRateLimiter({ qps: opts.qps, burst: opts.burst, now }),
  );
}

function requireRange(name: string, value: number, min: number, max: number): void {
  if (!(value >= min && value <= max)) {
    throw new RangeError(`${name} must be within [${min}, ${max}], got ${value}`);
  }
}
