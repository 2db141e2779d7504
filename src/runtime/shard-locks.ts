// The Leases of sharding as runtime/shards.ts writes them: a key's Lease taken (created, or
// written over the version seen: a conflict is a lost race) or freed (holder emptied, or the
// Lease deleted when no sync needs the key), and the membership Leases of the replicas.
import { memberLeaseName, SHARD_KEY_ANNOTATION, SHARD_LEASE_LABEL, shardLeaseName, type ShardKey } from '../api/shard-marks.js';
import { LeaseLock, microTime, type CallOptions, type Lease, type LeaseClient } from './lease-lock.js';

export class ShardLocks {
  constructor(
    private readonly client: LeaseClient,
    readonly namespace: string,
    /** This replica: the holder it writes. */
    private readonly member: string,
    private readonly leaseSeconds: number,
  ) {}

  /** The Lease of `key` (labelled and annotated with it when created). */
  key(key: ShardKey): LeaseLock {
    return new LeaseLock(this.client, this.namespace, shardLeaseName(key), { [SHARD_LEASE_LABEL]: key.kind }, { [SHARD_KEY_ANNOTATION]: key.id });
  }

  /** The membership Lease of `member`. */
  ofMember(member: string): LeaseLock {
    return new LeaseLock(this.client, this.namespace, memberLeaseName(member));
  }

  /** Writes this replica as the holder of `key`: over `lease` (guarded by its resourceVersion), or a new Lease. */
  take(key: ShardKey, lease: Lease | undefined, call: CallOptions): Promise<Lease> {
    const stamp = microTime(new Date());
    const ours = lease?.spec?.holderIdentity === this.member;
    const spec = {
      holderIdentity: this.member,
      leaseDurationSeconds: this.leaseSeconds,
      acquireTime: stamp,
      renewTime: stamp,
      leaseTransitions: (lease?.spec?.leaseTransitions ?? 0) + (ours ? 0 : 1),
    };
    const lock = this.key(key);
    return lease ? lock.update(lease, spec, call) : lock.create(spec, call);
  }

  /** Frees `lease` if this replica holds it: its holder emptied (the next owner need not wait), or deleted (`remove`). */
  async free(lock: LeaseLock, lease: Lease | undefined, remove: boolean, deadline: number): Promise<void> {
    if (!lease || lease.spec?.holderIdentity !== this.member) return;
    if (remove) await lock.delete(lease, { deadline });
    else await lock.update(lease, { ...lease.spec, holderIdentity: '', renewTime: microTime(new Date()) }, { deadline });
  }
}
