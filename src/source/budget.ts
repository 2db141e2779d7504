import { SourceError } from './errors.js';
import { formatBytes } from './limits.js';

/**
 * The memory budget of reading sources, shared by every sync of the process:
 * the bytes held in memory at once by all fetches together (bodies fetched,
 * manifest files kept from archives to be parsed). Without it, each source is
 * bounded only by its own limits (50 MiB fetched, 200 MiB unpacked), and a few
 * gzip bombs read at once took the operator past 1 GiB.
 *
 * Each read takes a lease and grows it chunk by chunk (as the bytes arrive),
 * and gives it all back once its objects are parsed. A chunk that does not fit
 * waits for others to give theirs back. Waiting cannot deadlock: when every
 * lease that holds bytes is itself waiting, nobody would ever give any back,
 * so the waiter holding the most is refused (a SourceError; the sync is
 * retried later) and its bytes go to the others. A read that alone would need
 * more than the whole budget is refused at once.
 */
export class ByteBudget {
  private used = 0;
  private readonly waiters: Waiter[] = [];
  /** Leases that hold bytes now. */
  private readonly holders = new Set<BudgetLease>();

  constructor(readonly capacity: number) {}

  /** Bytes held now by all leases. */
  get inUse(): number {
    return this.used;
  }

  /** A lease for one read; `label` names the source in messages (its URL). */
  lease(label: string): BudgetLease {
    return new BudgetLease(this, label);
  }

  /** @internal */
  async take(lease: BudgetLease, n: number, signal?: AbortSignal): Promise<void> {
    if (n <= 0) return;
    if (lease.held + n > this.capacity) throw neverFits(lease.label, this.capacity);
    if (this.waiters.length === 0 && this.used + n <= this.capacity) return this.grant(lease, n);
    if (signal?.aborted) throw signal.reason;
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { lease, n, resolve, reject, signal, onAbort: () => this.drop(waiter, signal?.reason) };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiters.push(waiter);
      lease.waiting = true;
      this.settle();
    });
  }

  /** @internal Gives back `n` of the lease's bytes (all of them when omitted). */
  release(lease: BudgetLease, n = lease.held): void {
    const back = Math.min(n, lease.held);
    this.used -= back;
    lease.held -= back;
    if (lease.held === 0) this.holders.delete(lease);
    this.settle();
  }

  private grant(lease: BudgetLease, n: number): void {
    this.used += n;
    lease.held += n;
    this.holders.add(lease);
  }

  /** Grants every waiter that fits, in order; then breaks a deadlock, if there is one, and tries again. */
  private settle(): void {
    for (;;) {
      for (let i = 0; i < this.waiters.length; ) {
        const w = this.waiters[i] as Waiter;
        if (this.used + w.n > this.capacity) {
          i++;
          continue;
        }
        this.waiters.splice(i, 1);
        this.finish(w);
        this.grant(w.lease, w.n);
        w.resolve();
      }
      if (this.waiters.length === 0 || [...this.holders].some((l) => !l.waiting)) return;
      // Every holder waits for the others: refuse the one holding the most, and give its bytes back.
      const victim = this.waiters.reduce((a, b) => (b.lease.held > a.lease.held ? b : a));
      this.waiters.splice(this.waiters.indexOf(victim), 1);
      this.finish(victim);
      victim.reject(busy(victim.lease.label, this.capacity, victim.lease.held));
      this.used -= victim.lease.held;
      victim.lease.held = 0;
      this.holders.delete(victim.lease);
    }
  }

  private drop(w: Waiter, reason: unknown): void {
    const at = this.waiters.indexOf(w);
    if (at < 0) return;
    this.waiters.splice(at, 1);
    this.finish(w);
    w.reject(reason);
    this.settle();
  }

  private finish(w: Waiter): void {
    w.lease.waiting = false;
    w.signal?.removeEventListener('abort', w.onAbort);
  }
}

interface Waiter {
  lease: BudgetLease;
  n: number;
  resolve: () => void;
  reject: (err: unknown) => void;
  signal?: AbortSignal;
  onAbort: () => void;
}

/** The bytes one read holds; give them back with `release` (in a finally). */
export class BudgetLease {
  held = 0;
  /** @internal */
  waiting = false;

  constructor(
    private readonly budget: ByteBudget,
    readonly label: string,
  ) {}

  /** Adds `n` bytes, waiting for room if need be; a SourceError when they cannot be had. */
  take(n: number, signal?: AbortSignal): Promise<void> {
    return this.budget.take(this, n, signal);
  }

  /** Gives back `n` bytes no longer held (content dropped), or all of them when omitted. */
  release(n?: number): void {
    this.budget.release(this, n);
  }
}

function neverFits(label: string, capacity: number): SourceError {
  return new SourceError(
    `${label}: more than ${formatBytes(capacity)} to hold in memory at once (fetched bytes and the manifest files to parse; ` +
      `the operator's memory budget for sources); refused: split the source, or keep other files out of its manifests`,
  );
}

function busy(label: string, capacity: number, held: number): SourceError {
  return new SourceError(
    `${label}: the operator's memory budget for sources (${formatBytes(capacity)}, shared by all syncs) is in use ` +
      `by other sources being read at the same time (this one held ${formatBytes(held)} of it); retried later`,
  );
}

/**
 * The default budget: room for sources far larger than manifests usually are,
 * while the operator with all of it in use stays well under 450 MiB.
 */
export const DEFAULT_SOURCE_MEMORY_BUDGET = 128 * 1024 * 1024;

let shared = new ByteBudget(DEFAULT_SOURCE_MEMORY_BUDGET);

/** The process-wide budget that every fetch of a source draws on. */
export function sourceMemoryBudget(): ByteBudget {
  return shared;
}

/** Replaces the process-wide budget (a flag of `syncprims run`, tests); reads already started keep the old one. */
export function setSourceMemoryBudget(bytes: number): void {
  shared = new ByteBudget(bytes);
}
