// A RemoteSync being deleted: prune in its cluster, or say why it cannot and
// stay; go without pruning only when its cluster is going away (its Cluster
// API Cluster is being deleted) or is lost (its Secret gone, and pruning
// failed until the grace period after its deletion), naming what it left.
import { parseSyncObject } from '../api/validate.js';
import { Reason } from '../api/conditions.js';
import type { InventoryEntry } from '../api/status.js';
import { displayName } from '../apply/inventory.js';
import { clusterApiClusterBeingDeleted } from '../clusters/cluster-api.js';
import type { ClusterRegistry, ClusterSecretRef } from '../clusters/registry.js';
import type { RemoteCluster } from '../clusters/remote-cluster.js';
import type { Requester } from '../kube/client.js';
import type { Discovery } from '../kube/discovery.js';
import type { KubeObject } from '../kube/resources.js';
import type { Logger } from '../runtime/logger.js';
import { ClusterNotUsable, enterCluster, reportUnusable, secretRefOf } from './cluster-access.js';
import type { LifecycleDeps } from './lifecycle.js';
import type { ApplyTarget, SyncPipeline } from './sync-pipeline.js';
import type { SyncStatusDraft } from './sync-status.js';

/** How often a RemoteSync being deleted whose Secret is gone tries to prune again, within its grace period. */
const LOST_CLUSTER_RETRY_MS = 15_000;
/** The Event reason of a deletion that left objects in the cluster. */
export const LEFT_BEHIND_REASON = 'LeftBehind';
/** How many left-behind objects the Event names (then: "and N more"). */
const LEFT_BEHIND_LISTED = 20;

export interface RemoteSyncSettings {
  registry: ClusterRegistry;
  /** `--cluster-id`: the origin label of objects applied remotely. */
  origin: string;
  /** The managing cluster, where Cluster API Clusters live. */
  home: Requester;
  homeDiscovery: Discovery;
  /** `--lost-cluster-grace`: how long, from its deletion, a RemoteSync whose kubeconfig Secret is gone tries to prune. */
  lostClusterGraceMs: number;
}

export type RemoteFinalizer = (key: string, obj: KubeObject, log: Logger) => Promise<void | { requeueAfterMs: number }>;

export function remoteSyncFinalizer(
  deps: LifecycleDeps,
  pipeline: SyncPipeline,
  settings: RemoteSyncSettings,
  targetOf: (cluster: RemoteCluster) => ApplyTarget,
): RemoteFinalizer {
  const { registry } = settings;

  /** Lets the RemoteSync go without pruning: a Warning Event and a log line name what stays in its cluster. */
  async function leaveBehind(obj: KubeObject, why: string, log: Logger): Promise<void> {
    const entries = ((obj.status as SyncStatusDraft | undefined)?.inventory?.entries ?? []) as InventoryEntry[];
    const names = entries.map((e) => displayName(e.id));
    const more = names.length - LEFT_BEHIND_LISTED;
    const listed = names.slice(0, LEFT_BEHIND_LISTED).join(', ') + (more > 0 ? `, and ${more} more` : '');
    const message = `deleted without pruning: ${why}; ${names.length === 0 ? 'nothing was left behind' : `left behind: ${listed}`}`;
    log.warn({ why, leftBehind: names.length }, 'deleted without pruning');
    await deps.events.record(obj, 'Warning', LEFT_BEHIND_REASON, message);
  }

  /** Pruning failed with `err` and the Secret is gone: wait within the grace period, then go. */
  async function lost(key: string, obj: KubeObject, { name, namespace }: ClusterSecretRef, err: unknown, log: Logger): Promise<void | { requeueAfterMs: number }> {
    const why = err instanceof Error ? err.message : String(err);
    const giveUpAt = Date.parse(obj.metadata.deletionTimestamp ?? '') + settings.lostClusterGraceMs;
    const until = new Date(giveUpAt).toISOString();
    if (Date.now() >= giveUpAt) {
      const how = registry.lastClusterOf(key) ? `pruning with the last client of its cluster failed (${why})` : `no client of its cluster is left (${why})`;
      return leaveBehind(obj, `its kubeconfig Secret ${namespace}/${name} is gone and ${how} until ${until}`, log);
    }
    const message = `deletion cannot prune: ${why}; its kubeconfig Secret is gone, so it gives up at ${until} (--lost-cluster-grace)`;
    await reportUnusable(deps, obj, (obj.status ?? {}) as SyncStatusDraft, new ClusterNotUsable(Reason.ClusterUnreachable, message), log);
    return { requeueAfterMs: Math.min(giveUpAt - Date.now(), LOST_CLUSTER_RETRY_MS) };
  }

  return async (key, obj, log) => {
    const parsed = parseSyncObject('RemoteSync', obj);
    const spec = parsed.ok ? parsed.value.spec : undefined;
    if (!spec || spec.deletionPolicy === 'Orphan') return;
    const ref = secretRefOf(obj, spec);
    if (spec.clusterRef && (await clusterApiClusterBeingDeleted(settings.home, settings.homeDiscovery, ref.namespace, spec.clusterRef.name))) {
      return leaveBehind(obj, `its Cluster API Cluster ${ref.namespace}/${spec.clusterRef.name} is being deleted`, log);
    }
    try {
      const entered = await enterCluster(registry, key, obj, spec, true);
      try {
        await pipeline.finalize(obj, spec, targetOf(entered.cluster), log);
      } finally {
        entered.leave();
      }
    } catch (err) {
      const busy = err instanceof ClusterNotUsable && err.busy;
      if (!busy && !(await registry.secretExists(ref))) return lost(key, obj, ref, err, log);
      if (err instanceof ClusterNotUsable) await reportUnusable(deps, obj, (obj.status ?? {}) as SyncStatusDraft, err, log);
      throw err;
    }
  };
}
