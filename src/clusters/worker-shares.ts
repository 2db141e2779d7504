// A fair share of a controller's workers for each group of remote-cluster
// work (issue 43): a server (whatever identities reach it) and a namespace
// (whatever clusters its syncs name) may each hold up to half the workers;
// more only while the other workers are idle, and never the last quarter.
// One slow or hostile server, or one tenant's many clusters, hangs at most
// that many reconciles: the reserve goes on with everyone else's syncs.

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

export class WorkerShares {
  /** Reconciles in flight by pool (a controller) and group. */
  private readonly held = new Map<string, number>();
  /** ...and by pool alone. */
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly limits: ShareLimits) {}

  /**
   * One of `pool`'s workers asks to work for every group in `groups` (e.g.
   * `server <location>`, `namespace <ns>`). Each group may hold `share`
   * workers; past that only when, with this one, `reserve` stay free.
   * `onLeave` runs once, when the admitted reconcile leaves.
   */
  tryEnter(pool: string, groups: string[], onLeave?: () => void): ShareAdmission {
    const busy = this.inFlight.get(pool) ?? 0;
    const roomPastShare = busy + 1 <= this.limits.workers - this.limits.reserve;
    for (const group of groups) {
      if ((this.held.get(keyOf(pool, group)) ?? 0) >= this.limits.share && !roomPastShare) return { ok: false, group };
    }
    this.add(pool, groups, 1);
    let left = false;
    return {
      ok: true,
      leave: () => {
        if (left) return;
        left = true;
        this.add(pool, groups, -1);
        onLeave?.();
      },
    };
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
