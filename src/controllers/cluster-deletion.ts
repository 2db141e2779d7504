// What RemoteSync and ProxySync share when they are deleted and their cluster
// cannot be reached: they stay and say why, unless the cluster is going away
// (its Cluster API Cluster is being deleted) or is lost (its kubeconfig Secret
// gone, and the work failed until the grace period after their deletion);
// then they go without cleaning up, naming what they left behind.
import { Reason } from '../api/conditions.js';
import type { InventoryEntry } from '../api/status.js';
import { displayName } from '../apply/inventory.js';
import { clusterApiClusterBeingDeleted } from '../clusters/cluster-api.js';
import type { ClusterRegistry, ClusterSecretRef } from '../clusters/registry.js';
import type { KubeClient } from '../kube/client.js';
import type { Discovery } from '../kube/discovery.js';
import type { KubeObject } from '../kube/resources.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Logger } from '../runtime/logger.js';
import type { ObjectWriter } from '../runtime/object-writer.js';
import { ClusterNotUsable, clusterUser, reportUnusable, secretRefOf, type ClusterSpec } from './cluster-access.js';
import type { SyncStatusDraft } from './sync-status.js';

/** How often a sync being deleted whose Secret is gone tries again, within its grace period. */
const LOST_CLUSTER_RETRY_MS = 15_000;
/** The Event reason of a deletion that left objects in the cluster. */
export const LEFT_BEHIND_REASON = 'LeftBehind';
/** How many left-behind objects the Event names (then: "and N more"). */
const LEFT_BEHIND_LISTED = 20;

export interface RemoteSettings {
  registry: ClusterRegistry;
  /** `--cluster-id`: the origin label of objects applied remotely. */
  origin: string;
  /** The managing cluster, where Cluster API Clusters live. */
  home: KubeClient;
  homeDiscovery: Discovery;
  /** `--lost-cluster-grace`: how long, from its deletion, a sync whose kubeconfig Secret is gone keeps trying. */
  lostClusterGraceMs: number;
  /**
   * `--default-service-account`, given to remote Syncs whose template names none (ProxySync); set, the
   * operator impersonates: a ProxySync writes in its cluster as its account (proxy/remote-sync.ts remoteWriter).
   */
  defaultServiceAccount?: string;
}

export type FinalizeResult = void | { requeueAfterMs: number };

interface Deps {
  writer: ObjectWriter;
  events: EventRecorder;
}

/**
 * Runs `cleanUp` (in the sync's cluster) for a sync being deleted. Without
 * it when the sync's Cluster API Cluster is being deleted; and when cleanUp
 * fails with the Secret gone, it is tried again until the grace period
 * after the deletion has passed, and then given up. Otherwise a failure is
 * reported and thrown (to be retried).
 */
export async function cleanUpInCluster(
  deps: Deps,
  settings: RemoteSettings,
  obj: KubeObject,
  spec: ClusterSpec,
  log: Logger,
  cleanUp: () => Promise<FinalizeResult>,
): Promise<FinalizeResult> {
  const ref = secretRefOf(obj, spec);
  if (spec.clusterRef && (await clusterApiClusterBeingDeleted(settings.home, settings.homeDiscovery, ref.namespace, spec.clusterRef.name))) {
    return leaveBehind(deps, obj, `its Cluster API Cluster ${ref.namespace}/${spec.clusterRef.name} is being deleted`, log);
  }
  try {
    return await cleanUp();
  } catch (err) {
    const busy = err instanceof ClusterNotUsable && err.busy;
    // Its Secret gone, or now a pull registration (which holds no credential: a RemoteSync cannot reach a pull cluster), the cluster is lost to it.
    const credential = busy ? 'kubeconfig' : await settings.registry.credentialOf(ref);
    if (credential === 'gone' || (credential === 'pull' && obj.kind !== 'ProxySync')) return lost(deps, settings, obj, ref, err, log, credential);
    if (err instanceof ClusterNotUsable) await reportUnusable(deps, obj, (obj.status ?? {}) as SyncStatusDraft, err, log);
    throw err;
  }
}

/** Cleaning up failed with `err` and the Secret is gone (or holds no credential: a pull registration now): wait within the grace period, then go. */
async function lost(deps: Deps, settings: RemoteSettings, obj: KubeObject, ref: ClusterSecretRef, err: unknown, log: Logger, credential: 'gone' | 'pull'): Promise<FinalizeResult> {
  const why = err instanceof Error ? err.message : String(err);
  const giveUpAt = Date.parse(obj.metadata.deletionTimestamp ?? '') + settings.lostClusterGraceMs;
  const until = new Date(giveUpAt).toISOString();
  const secret = credential === 'gone' ? `its kubeconfig Secret ${ref.namespace}/${ref.name} is gone` : `its Secret ${ref.namespace}/${ref.name} registers a pull cluster now (no credential)`;
  if (Date.now() >= giveUpAt) {
    const last = settings.registry.lastClusterOf(clusterUser(obj));
    const how = last ? `cleaning up with the last client of its cluster failed (${why})` : `no client of its cluster is left (${why})`;
    return leaveBehind(deps, obj, `${secret} and ${how} until ${until}`, log);
  }
  const message = `deletion cannot clean up: ${why}; ${secret}, so it gives up at ${until} (--lost-cluster-grace)`;
  await reportUnusable(deps, obj, (obj.status ?? {}) as SyncStatusDraft, new ClusterNotUsable(Reason.ClusterUnreachable, message), log);
  return { requeueAfterMs: Math.min(giveUpAt - Date.now(), LOST_CLUSTER_RETRY_MS) };
}

/** Lets the sync go without cleaning up: a Warning Event and a log line name what stays in its cluster (its inventory). */
export async function leaveBehind(deps: Deps, obj: KubeObject, why: string, log: Logger): Promise<void> {
  const entries = ((obj.status as SyncStatusDraft | undefined)?.inventory?.entries ?? []) as InventoryEntry[];
  const names = entries.map((e) => displayName(e.id));
  const more = names.length - LEFT_BEHIND_LISTED;
  const listed = names.slice(0, LEFT_BEHIND_LISTED).join(', ') + (more > 0 ? `, and ${more} more` : '');
  const message = `deleted without cleaning up: ${why}; ${names.length === 0 ? 'nothing was left behind' : `left behind: ${listed}`}`;
  log.warn({ why, leftBehind: names.length }, 'deleted without cleaning up');
  await deps.events.record(obj, 'Warning', LEFT_BEHIND_REASON, message);
}
