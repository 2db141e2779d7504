// Which replicas are live, as this replica sees their membership Leases (runtime/shards.ts).
// Judged as leader election judges a lease, by OUR clock only: a member is live while its
// record (holder, renewTime, ...) changed less than its leaseDurationSeconds ago, counted from
// the moment we first saw that record. The other replica's timestamps are never compared with
// ours. A member seen for the first time counts as live for one lease duration (it may be).
import { performance } from 'node:perf_hooks';
import { sameRecord, type Lease, type LeaseSpec } from './lease-lock.js';

interface Seen {
  spec: LeaseSpec | undefined;
  /** When (monotonic ms) this record was first seen. */
  at: number;
}

export class ShardMembers {
  private readonly seen = new Map<string, Seen>();

  constructor(
    /** A member without leaseDurationSeconds on its Lease is given this long. */
    private readonly defaultDurationMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A membership Lease read or watched: its record restarts the member's clock only when it changed. */
  observe(lease: Lease): void {
    const member = lease.spec?.holderIdentity ?? '';
    if (member === '') return;
    const seen = this.seen.get(member);
    if (seen && sameRecord(seen.spec, lease.spec)) return;
    this.seen.set(member, { spec: lease.spec, at: this.now() });
  }

  /** A membership Lease deleted (its replica shut down cleanly): that member is gone at once. */
  forget(member: string): void {
    this.seen.delete(member);
  }

  /** Whether `member` renewed within its lease duration (by our clock). */
  isLive(member: string): boolean {
    const seen = this.seen.get(member);
    return seen !== undefined && this.now() < seen.at + this.durationOf(seen);
  }

  /** Whether `lease` holds exactly the record we last saw of its member (nothing renewed since). */
  unchanged(lease: Lease | undefined, member: string): boolean {
    const seen = this.seen.get(member);
    return seen !== undefined && lease !== undefined && sameRecord(seen.spec, lease.spec);
  }

  /** The live members, sorted (every replica hashes over the same list). */
  live(): string[] {
    return [...this.seen.keys()].filter((m) => this.isLive(m)).sort();
  }

  /** Members not renewed for `factor` lease durations: their Leases are left over from replicas that died. */
  longGone(factor: number): string[] {
    return [...this.seen].filter(([, s]) => this.now() >= s.at + factor * this.durationOf(s)).map(([m]) => m);
  }

  /** When (monotonic ms) the member next lapses unless it renews; undefined when not live. */
  lapsesAt(member: string): number | undefined {
    const seen = this.seen.get(member);
    return seen && this.isLive(member) ? seen.at + this.durationOf(seen) : undefined;
  }

  private durationOf(seen: Seen): number {
    const seconds = seen.spec?.leaseDurationSeconds;
    return typeof seconds === 'number' && seconds > 0 ? seconds * 1000 : this.defaultDurationMs;
  }
}
