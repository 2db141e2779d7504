// What each sync's shard key is (--shards; runtime/shards.ts), which keys are in use, and the
// pins users put on clusters. A RemoteSync or ProxySync belongs to its cluster (by kubeconfig
// Secret: the same cluster named by `kubeConfig` or by `clusterRef` is one key); a Sync or a
// FleetSync to its namespace. Every replica computes the same keys from the same caches.
import { clusterApiKubeconfigSecret, kubeconfigSecret, type ClusterRef, type KubeConfigRef } from '../api/cluster.js';
import { clusterShardKey, namespaceShardKey, SHARD_PIN_LABEL, shardKeyString, type ShardKey } from '../api/shard-marks.js';
import type { Kind } from '../api/index.js';
import type { KubeObject } from '../kube/resources.js';
import { UnknownKindError, type Discovery } from '../kube/discovery.js';
import type { ClusterCache } from '../runtime/cache.js';
import type { Informer } from '../runtime/informer.js';
import type { KeyInUse } from '../runtime/shards.js';
import { CLUSTER_API_VERSIONS, CLUSTER_PROFILE_VERSIONS, clusterProfileCluster, projectClusterProfile } from '../clusters/inventory-sources.js';

/** The shard key of a sync of `kind`. */
export function shardKeyOf(kind: Kind, obj: KubeObject): ShardKey {
  const namespace = obj.metadata.namespace ?? '';
  if (kind === 'RemoteSync' || kind === 'ProxySync') {
    const spec = obj.spec as { kubeConfig?: KubeConfigRef; clusterRef?: ClusterRef } | undefined;
    if (spec?.kubeConfig?.secretRef?.name || spec?.clusterRef?.name) return clusterShardKey(namespace, kubeconfigSecret(spec).name);
  }
  return namespaceShardKey(namespace);
}

/**
 * The cluster key a pinned object stands for: a Secret for itself; a Cluster for its `<name>-kubeconfig`; a
 * ClusterProfile for the Secret its access provider names (as its FleetSync children name it), else `<name>-kubeconfig`.
 */
export function pinnedKeyOf(obj: KubeObject): string {
  const name = obj.metadata.name ?? '';
  const profileSecret = obj.kind === 'ClusterProfile' ? clusterProfileCluster(obj).ref.kubeConfig?.secretRef.name : undefined;
  const secret = obj.kind === 'Secret' ? name : (profileSecret ?? clusterApiKubeconfigSecret(name));
  return shardKeyString(clusterShardKey(obj.metadata.namespace ?? '', secret));
}

/**
 * The keys in use, counted again only after a change that can alter them (a sync added or
 * deleted, a spec changed, a pin changed): a pass of the shards asks often.
 */
export class ShardKeysInUse {
  private cached: Map<string, KeyInUse> | undefined;

  constructor(
    private readonly syncs: Record<Kind, Informer<KubeObject>>,
    private readonly pins: Informer<KubeObject>[],
    changed: () => void,
  ) {
    const dirty = (): void => {
      this.cached = undefined;
      changed();
    };
    for (const informer of Object.values(syncs)) {
      informer.onEvent((e) => {
        if (e.type !== 'updated' || e.old?.metadata.generation !== e.object.metadata.generation) dirty();
      });
    }
    for (const informer of pins) informer.onEvent(dirty);
  }

  keys(): Map<string, KeyInUse> {
    if (this.cached) return this.cached;
    const pinned = new Map<string, string>();
    for (const informer of this.pins) {
      for (const obj of informer.store.list()) {
        const pin = obj.metadata.labels?.[SHARD_PIN_LABEL];
        if (pin) pinned.set(pinnedKeyOf(obj), pin);
      }
    }
    const keys = new Map<string, KeyInUse>();
    for (const [kind, informer] of Object.entries(this.syncs) as [Kind, Informer<KubeObject>][]) {
      for (const obj of informer.store.list()) {
        const key = shardKeyOf(kind, obj);
        const id = shardKeyString(key);
        if (!keys.has(id)) keys.set(id, { key, ...(pinned.has(id) && { pin: pinned.get(id) }) });
      }
    }
    this.cached = keys;
    return keys;
  }
}

/** The objects that may carry a pin: Secrets and Clusters as metadata, ClusterProfiles as the inventory projects them; the two CRDs where served (at start). */
export async function pinInformers(cache: ClusterCache, discovery: Discovery, namespace: string | undefined): Promise<Informer<KubeObject>[]> {
  const metadata = { namespace, labelSelector: SHARD_PIN_LABEL, metadataOnly: true };
  const projected = { namespace, labelSelector: SHARD_PIN_LABEL, project: { name: 'shard-pin-cluster-profile', fn: projectClusterProfile } };
  const informers = [await cache.informer('v1', 'Secret', metadata)];
  for (const [kind, versions] of [['Cluster', CLUSTER_API_VERSIONS], ['ClusterProfile', CLUSTER_PROFILE_VERSIONS]] as const) {
    for (const apiVersion of versions) {
      try {
        await discovery.resolve(apiVersion, kind);
      } catch (err) {
        if (err instanceof UnknownKindError) continue;
        throw err;
      }
      informers.push(await cache.informer(apiVersion, kind, kind === 'Cluster' ? metadata : projected));
      break;
    }
  }
  return informers;
}
