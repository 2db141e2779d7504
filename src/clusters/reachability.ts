import { backoffDelay } from '../runtime/backoff.js';

/** What a reconcile may do with a cluster now. */
export type Admission =
  /** Go on: the cluster answered lately (or is being tried now by this caller: `probe`). */
  | { go: true; probe: boolean }
  /** Do not touch it: it is unreachable; try again after `retryInMs`. */
  | { go: false; retryInMs: number; message: string };

export interface ReachabilityOptions {
  /** Backoff between probes of an unreachable cluster (capped, jittered). */
  backoff?: { initialMs: number; maxMs: number };
  now?: () => number;
}

/** A cluster's reachability at one moment. */
export interface ReachabilitySnapshot {
  reachable: boolean;
  /** When it last answered (ISO 8601); absent if it never did. */
  lastReached?: string;
  /** The error that began the current outage. */
  error?: string;
}

/**
 * Whether a remote cluster can be reached, from what its requests meet: a
 * transport failure (refused, timed out, reset, half-open) marks it
 * unreachable; any answer marks it reachable. While unreachable, reconciles
 * are turned away at once (they hold no worker), and one caller at a time,
 * after a capped, jittered backoff, is let through to probe it.
 */
export class Reachability {
  private failures = 0;
  private lastError: string | undefined;
  private lastReached: number | undefined;
  private nextProbeAt = 0;
  private probing = false;
  private readonly now: () => number;
  private readonly listeners = new Set<(reachable: boolean) => void>();

  constructor(private readonly opts: ReachabilityOptions = {}) {
    this.now = opts.now ?? Date.now;
  }

  /**
   * Calls `fn(false)` when the cluster stops answering and `fn(true)` when it
   * answers again (a watch reconnecting, a probe): on each change, not each
   * request. Returns the way to stop.
   */
  onChange(fn: (reachable: boolean) => void): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  get reachable(): boolean {
    return this.lastError === undefined;
  }

  /** A request got an answer (any status). */
  answered(): void {
    const wasDown = this.lastError !== undefined;
    this.lastReached = this.now();
    this.failures = 0;
    this.lastError = undefined;
    this.probing = false;
    if (wasDown) this.tell(true);
  }

  /** A request got no answer: the cluster is unreachable until it answers again (the first error of an outage is the one told). */
  failed(error: string): void {
    if (this.lastError === undefined || this.probing) {
      this.failures++;
      this.nextProbeAt = this.now() + backoffDelay(this.failures, this.opts.backoff ?? { initialMs: 2_000, maxMs: 60_000 });
    }
    // The error that began the outage is kept: a message that changed with every failed request
    // would rewrite the status (and raise an Event) of every sync of the cluster each time.
    const wasUp = this.lastError === undefined;
    this.lastError ??= error;
    this.probing = false;
    if (wasUp) this.tell(false);
  }

  private tell(reachable: boolean): void {
    for (const fn of this.listeners) fn(reachable);
  }

  /** Asks to use the cluster now. A caller let through with `probe: true` must report answered() or failed(). */
  admit(): Admission {
    if (this.reachable) return { go: true, probe: false };
    const now = this.now();
    if (!this.probing && now >= this.nextProbeAt) {
      this.probing = true;
      return { go: true, probe: true };
    }
    return { go: false, retryInMs: Math.max(this.nextProbeAt - now, 1_000), message: this.describe() };
  }

  /** What is known now, for a view of the fleet. */
  snapshot(): ReachabilitySnapshot {
    return {
      reachable: this.reachable,
      ...(this.lastReached !== undefined && { lastReached: new Date(this.lastReached).toISOString() }),
      ...(this.lastError !== undefined && { error: this.lastError }),
    };
  }

  /** `unreachable since ...: <error>; last reached <time>` for conditions and logs. */
  describe(): string {
    const last = this.lastReached === undefined ? 'never reached' : `last reached ${new Date(this.lastReached).toISOString()}`;
    return `${this.lastError ?? 'reachable'} (${last})`;
  }
}
