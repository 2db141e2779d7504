// A fair share of a controller's workers for each group of remote-cluster
// work (issue 43): a server (whatever identities reach it) and a namespace
// (whatever clusters its syncs name) may each hold up to half the workers;
// more only while the other workers are idle, and never the last quarter.
// One slow or hostile server, or one tenant's many clusters, hangs at most
// that many reconciles: the reserve goes on with everyone else's syncs. A
// sync turned away waits to be woken when a worker is given back.

/** How the workers of one controller are shared. */
export interface ShareLimits {
  /** The controller's workers (`--concurrency`). */
  workers: number;
  /** What one group may always hold. */
  share: number;
  /** Workers a group past its share never takes: kept for the others. */
  reserve: number;
}

/** Half the workers each; a quarter (at least one) kept for the others. */
export function shareLimits(workers: number): ShareLimits {
  return { workers, share: Math.max(1, Math.ceil(workers / 2)), reserve: Math.max(1, Math.ceil(workers / 4)) };
}

/** Admitted (`leave` once done), or turned away because `group` holds its share. */
export type ShareAdmission = { ok: true; leave: () => void } | { ok: false; group: string };

/** What a reconcile asks to enter for: its controller (`pool`), its groups, and its key (to be woken when turned away). */
export interface ShareRequest {
  pool: string;
  /** e.g. `server <location>`, `namespace <ns>` */
  groups: string[];
  /** The sync's key (`namespace/name`): turned away, it waits to be woken (`wake`) when a worker of its pool is given back. */
  key?: string;
}

export class WorkerShares {
  /** Reconciles in flight by pool (a controller) and group. */
  private readonly held = new Map<string, number>();
  /** ...and by pool alone. */
  private readonly inFlight = new Map<string, number>();
  /** Keys turned away, by pool, in the order they came, with their groups: woken one per worker given back. */
  private readonly waiting = new Map<string, Map<string, string[]>>();

  /** `wake(pool, key)`: queue that key again (its controller's queue); a key turned away is not requeued by a timer in a loop. */
  constructor(
    private readonly limits: ShareLimits,
    private readonly wake: (pool: string, key: string) => void = () => undefined,
  ) {}

  /**
   * One of the pool's workers asks to work for every group of the request.
   * Each group may hold `share` workers; past that only when, with this one,
   * `reserve` stay free. `onLeave` runs once, when the admitted reconcile
   * leaves; then the oldest key turned away that would be admitted now is woken.
   */
  tryEnter(request: ShareRequest, onLeave?: () => void): ShareAdmission {
    const { pool, groups, key } = request;
    const group = this.refusedBy(pool, groups);
    if (group !== undefined) {
      if (key !== undefined) this.waitersOf(pool).set(key, groups);
      return { ok: false, group };
    }
    if (key !== undefined) this.waiting.get(pool)?.delete(key);
    this.add(pool, groups, 1);
    let left = false;
    return {
      ok: true,
      leave: () => {
        if (left) return;
        left = true;
        this.add(pool, groups, -1);
        onLeave?.();
        this.wakeNext(pool);
      },
    };
  }

  /** Keys turned away in `pool` and not yet woken (for tests). */
  waitingIn(pool: string): string[] {
    return [...(this.waiting.get(pool)?.keys() ?? [])];
  }

  /** The group that holds its share (and no room past it), if any. */
  private refusedBy(pool: string, groups: string[]): string | undefined {
    const busy = this.inFlight.get(pool) ?? 0;
    if (busy + 1 <= this.limits.workers - this.limits.reserve) return undefined;
    return groups.find((group) => (this.held.get(keyOf(pool, group)) ?? 0) >= this.limits.share);
  }

  private wakeNext(pool: string): void {
    const waiting = this.waiting.get(pool);
    for (const [key, groups] of waiting ?? []) {
      if (this.refusedBy(pool, groups) !== undefined) continue;
      waiting!.delete(key);
      this.wake(pool, key);
      return;
    }
  }

  private waitersOf(pool: string): Map<string, string[]> {
    let waiting = this.waiting.get(pool);
    if (!waiting) this.waiting.set(pool, (waiting = new Map()));
    return waiting;
  }

  /** Reconciles `pool` has in flight for `group` now (for tests and metrics). */
  heldBy(pool: string, group: string): number {
    return this.held.get(keyOf(pool, group)) ?? 0;
  }

  private add(pool: string, groups: string[], n: number): void {
    bump(this.inFlight, pool, n);
    for (const group of groups) bump(this.held, keyOf(pool, group), n);
  }
}

function keyOf(pool: string, group: string): string {
  return `${pool}\u0000${group}`;
}

function bump(counts: Map<string, number>, key: string, n: number): void {
  const next = (counts.get(key) ?? 0) + n;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
