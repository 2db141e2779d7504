// The names, labels and annotations of sharding (`syncprims run --shards`, docs/shards.md): the
// membership Lease each replica renews, the Lease of each shard key (a remote cluster, or a
// namespace of local syncs) that fences the replica working it, and the pin a user may put on a
// cluster. Shared by the operator, `get clusters` and `doctor`, which read the same Leases.
import { createHash } from 'node:crypto';

/** On a replica's membership Lease (value `true`): how the replicas find each other. */
export const SHARD_MEMBER_LABEL = 'syncprims.dev/shard-member';
/** On a shard key's Lease: `cluster` or `namespace` (ShardKeyKind). */
export const SHARD_LEASE_LABEL = 'syncprims.dev/shard-lease';
/** On a shard key's Lease: the key itself (a Lease name holds only its hash). */
export const SHARD_KEY_ANNOTATION = 'syncprims.dev/shard-key';
/**
 * On a cluster's kubeconfig Secret (a pull cluster's registration too), Cluster or ClusterProfile:
 * the replica (its shard name) that should hold it while that replica is live.
 */
export const SHARD_PIN_LABEL = 'syncprims.dev/shard';

/** What a shard key names: a remote cluster (by its kubeconfig Secret), or a namespace (its Syncs and FleetSyncs). */
export type ShardKeyKind = 'cluster' | 'namespace';

export interface ShardKey {
  kind: ShardKeyKind;
  /** `cluster`: `<namespace>/<kubeconfig Secret name>`; `namespace`: the namespace. */
  id: string;
}

/** The key of the cluster a RemoteSync or ProxySync names: its kubeconfig Secret (clusterRef X names `X-kubeconfig`). */
export function clusterShardKey(namespace: string, secretName: string): ShardKey {
  return { kind: 'cluster', id: `${namespace}/${secretName}` };
}

/** The key of a namespace's Syncs and FleetSyncs. */
export function namespaceShardKey(namespace: string): ShardKey {
  return { kind: 'namespace', id: namespace };
}

/** One string per key (`cluster:team/edge-1-kubeconfig`, `namespace:team`): what is hashed and compared. */
export function shardKeyString(key: ShardKey): string {
  return `${key.kind}:${key.id}`;
}

/** The name of a replica's membership Lease. */
export function memberLeaseName(member: string): string {
  return `syncprims-member-${member}`;
}

/** How the name of a shard key's Lease begins, by the kind of key. */
export const KEY_LEASE_PREFIXES: Readonly<Record<ShardKeyKind, string>> = { cluster: 'syncprims-shard-c-', namespace: 'syncprims-shard-n-' };

/** The name of a shard key's Lease: a hash of the key (names, namespaces and `/` would not all fit a name). */
export function shardLeaseName(key: ShardKey): string {
  const digest = createHash('sha256').update(shardKeyString(key)).digest('hex').slice(0, 24);
  return `${KEY_LEASE_PREFIXES[key.kind]}${digest}`;
}
