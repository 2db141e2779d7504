// The sharding Leases of the operator's namespace read once, for `get clusters` and `doctor`:
// one LIST of that namespace's Leases (membership and key Leases both; only `list` on
// leases.coordination.k8s.io there is needed). A refusal is an answer (`?` in SHARD, a warning
// in doctor), not a failure; other errors are thrown.
import { clusterApiKubeconfigSecret, kubeconfigSecret } from '../api/cluster.js';
import { clusterShardKey, type ShardKey } from '../api/shard-marks.js';
import type { InventoryCluster } from '../clusters/inventory.js';
import type { Requester } from '../kube/client.js';
import { ApiError } from '../kube/errors.js';
import { collectionPath, CORE } from '../kube/resources.js';
import type { Lease } from '../runtime/lease-lock.js';
import { serverMessage } from './errors.js';
import { holdingOf, shardStateOf, type ShardHolding, type ShardState } from './shard-holders.js';

/** The operator's namespace when none is named: `syncprims run`'s --leader-election-namespace and `syncprims install`'s default. */
export const DEFAULT_OPERATOR_NAMESPACE = 'syncprims-system';

export type ShardRead = { ok: true; state: ShardState } | { ok: false; namespace: string; message: string };

/** The sharding Leases of `namespace`, judged at `now`; refused (401, 403): why. */
export async function readShards(client: Requester, namespace: string, now: number): Promise<ShardRead> {
  try {
    const list = await client.request<{ items?: Lease[] }>({ path: collectionPath(CORE.leases, namespace) });
    return { ok: true, state: shardStateOf(namespace, list.items ?? [], now) };
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) return { ok: false, namespace, message: serverMessage(err) };
    throw err;
  }
}

/**
 * Pure: the shard key of an inventory cluster: its kubeconfig Secret, as the syncs that use it
 * name it (a Secret's cluster: that Secret, a pull cluster's registration too; a Cluster API
 * Cluster: `<name>-kubeconfig`; a ClusterProfile: the Secret its access provider names, else
 * `<name>-kubeconfig`, where a clusterRef to it leads).
 */
export function inventoryShardKey(cluster: Pick<InventoryCluster, 'namespace' | 'name' | 'ref'>): ShardKey {
  const secret = cluster.ref.kubeConfig || cluster.ref.clusterRef ? kubeconfigSecret(cluster.ref).name : clusterApiKubeconfigSecret(cluster.name);
  return clusterShardKey(cluster.namespace, secret);
}

/** Pure: who holds each cluster's key, by what was read. */
export function clusterHolding(read: ShardRead, cluster: Pick<InventoryCluster, 'namespace' | 'name' | 'ref'>): ShardHolding {
  if (!read.ok) return { state: 'unknown', message: `listing Leases in namespace ${read.namespace} is refused (${read.message})` };
  return holdingOf(read.state, inventoryShardKey(cluster));
}
