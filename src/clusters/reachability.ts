import { DENY_CIDRS_FLAG } from '../kube/address-policy.js';
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
  private downSince: number | undefined;
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

  /** When the current outage began (undefined while reachable). */
  get since(): number | undefined {
    return this.downSince;
  }

  /** A request got an answer (any status). */
  answered(): void {
    const wasDown = this.lastError !== undefined;
    this.lastReached = this.now();
    this.failures = 0;
    this.lastError = undefined;
    this.downSince = undefined;
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
    if (wasUp) this.downSince = this.now();
    this.lastError ??= error;
    this.probing = false;
    if (wasUp) this.tell(false);
  }

  /** Lets the next caller probe at once (if it is down and nobody probes): something suggests it may answer now. Returns whether it is down. */
  probeSoon(): boolean {
    if (this.lastError === undefined) return false;
    if (!this.probing) this.nextProbeAt = this.now();
    return true;
  }

  /** Forgets the current outage, told as reachable again: what failed were other credentials (rotated since). */
  forget(): void {
    if (this.lastError === undefined) return;
    this.failures = 0;
    this.lastError = undefined;
    this.downSince = undefined;
    this.probing = false;
    this.tell(true);
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

/**
 * Whose failure an error is: the server's, when nothing reached it whoever
 * asked (connection refused, no such host, no route, no TCP or TLS connection
 * in time, an address the policy denies), else the identity's own (a request
 * timed out or reset, its certificate refused, an answer that is not
 * Kubernetes'): a server may be slow or closed to one identity (its flow
 * throttled, its token's webhook hanging) and answer the others.
 */
export type FailureScope = 'server' | 'identity';

const SERVER_FAILURES = new RegExp(`\\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|EADDRDENIED)\\b|no TLS connection within|which ${DENY_CIDRS_FLAG} denies`);

export function failureScopeOf(error: string): FailureScope {
  return SERVER_FAILURES.test(error) ? 'server' : 'identity';
}

/**
 * What one identity (a kubeconfig's user) knows of a remote cluster's
 * reachability: its own requests' outcomes (`own`), and what every identity
 * on its server shares (`server`, one per server: URL, CA, TLS name). A
 * failure of the server's (failureScopeOf) turns every identity there away
 * at once, one of them probing for all after the backoff; any identity's
 * answer ends it. A failure of its own turns away only this identity: one
 * tenant's broken credential or throttled flow holds nobody else's syncs.
 */
export class IdentityReachability {
  private readonly listeners = new Set<(reachable: boolean) => void>();
  private last: boolean;
  private readonly offs: (() => void)[];

  constructor(
    readonly own: Reachability,
    readonly server: Reachability,
  ) {
    this.last = this.reachable;
    this.offs = [
      own.onChange(() => this.changed(false)),
      // The server back after its outage: an identity down on its own meanwhile (its connections reset
      // as the server went) is probed at its next admission, and its syncs are told to come and try.
      server.onChange((up) => this.changed(up && own.probeSoon())),
    ];
  }

  private changed(nudge: boolean): void {
    const now = this.reachable;
    if (now === this.last && !nudge) return;
    this.last = now;
    for (const fn of this.listeners) fn(now);
  }

  get reachable(): boolean {
    return this.server.reachable && this.own.reachable;
  }

  /** A request of this identity got an answer (any status): the server answers, and answers it. */
  answered(): void {
    this.own.answered();
    this.server.answered();
  }

  /** A request of this identity got no answer: the server's outage or its own, by the error (failureScopeOf). */
  failed(error: string): void {
    (failureScopeOf(error) === 'server' ? this.server : this.own).failed(error);
  }

  /**
   * A probe this identity was let through for failed: whichever outage let
   * it through is told (its one probe is over, the next one backs off), and
   * whichever the error is of.
   */
  probeFailed(error: string): void {
    const scope = failureScopeOf(error);
    if (!this.server.reachable || scope === 'server') this.server.failed(error);
    if (!this.own.reachable || scope === 'identity') this.own.failed(error);
  }

  /** The server's outage first (one probe for every identity), else this identity's own. */
  admit(): Admission {
    return this.server.reachable ? this.own.admit() : this.server.admit();
  }

  /**
   * The outage told: the one that began first when both are on. A server
   * going away often resets this identity's connections (its own outage)
   * before it refuses new ones (the server's): one outage, told once, not
   * rewritten in every status when the second begins.
   */
  private told(): Reachability {
    if (this.server.reachable) return this.own;
    if (this.own.reachable) return this.server;
    return (this.own.since ?? 0) <= (this.server.since ?? 0) ? this.own : this.server;
  }

  describe(): string {
    return this.told().describe();
  }

  snapshot(): ReachabilitySnapshot {
    const own = this.own.snapshot();
    const { error } = this.told().snapshot();
    return { ...own, reachable: this.reachable, ...(error !== undefined && { error }) };
  }

  /**
   * Calls `fn` with whether this identity can reach the cluster when that
   * changes by either outage, and (with false) when the server answers again
   * while this identity is down on its own: its syncs may try (one probes).
   * Returns the way to stop.
   */
  onChange(fn: (reachable: boolean) => void): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  /** Stops following the server (the identity's cluster is closed). */
  close(): void {
    for (const off of this.offs.splice(0)) off();
    this.listeners.clear();
  }
}
