// The Leases of `syncprims run --shards` made by hand, as its replicas write them
// (src/api/shard-marks.ts): for the tests of `get clusters`' SHARD and `doctor`'s checks,
// which must not need the operator's sharding to run.
import { memberLeaseName, SHARD_KEY_ANNOTATION, SHARD_LEASE_LABEL, SHARD_MEMBER_LABEL, shardLeaseName, type ShardKey } from '../../src/api/shard-marks.js';
import type { Lease } from '../../src/runtime/lease-lock.js';

/** The leaseDurationSeconds of the Leases made here unless told (the operator's default). */
export const LEASE_SECONDS = 15;

export interface MemberOptions {
  /** leaseDurationSeconds (default LEASE_SECONDS). */
  seconds?: number;
  /** holderIdentity (default: the member's name). */
  holder?: string;
  /** acquireTime (ms since the epoch; default: none). */
  acquiredAt?: number;
}

/** A Lease's time as the API server keeps a MicroTime. */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/Z$/, '000Z');

/** A replica's membership Lease in `namespace`, last renewed at `renewedAt` (ms since the epoch). */
export function memberLeaseAt(namespace: string, member: string, renewedAt: number, opts: MemberOptions = {}): Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: memberLeaseName(member), namespace, labels: { [SHARD_MEMBER_LABEL]: 'true' } },
    spec: {
      holderIdentity: opts.holder ?? member,
      leaseDurationSeconds: opts.seconds ?? LEASE_SECONDS,
      renewTime: microTime(renewedAt),
      ...(opts.acquiredAt === undefined ? {} : { acquireTime: microTime(opts.acquiredAt) }),
    },
  };
}

/** A shard key's Lease in `namespace`, taken by `holder` ('' released) at `takenAt` (ms since the epoch). */
export function keyLeaseAt(namespace: string, key: ShardKey, holder: string, takenAt: number, opts: { labelled?: boolean; seconds?: number } = {}): Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: shardLeaseName(key),
      namespace,
      ...(opts.labelled === false ? {} : { labels: { [SHARD_LEASE_LABEL]: key.kind } }),
      annotations: { [SHARD_KEY_ANNOTATION]: key.id },
    },
    spec: { holderIdentity: holder, leaseDurationSeconds: opts.seconds ?? LEASE_SECONDS, acquireTime: microTime(takenAt), renewTime: microTime(takenAt) },
  };
}
