// What `syncprims tree` shows, as data: `-o yaml|json` print it as it is,
// the text view (cli/tree-render.ts) draws it. Built by cli/tree-deps.ts (the
// dependency part, pure) and cli/tree-build.ts (what the syncs applied, read
// from the clusters).
import type { PendingReason } from '../api/conditions.js';
import type { Kind } from '../api/kinds.js';
import type { RequiredStatus } from '../api/sync-spec.js';
import type { HealthStatus } from '../apply/health.js';
import type { KubeObject } from '../kube/resources.js';
import type { RemoteProblem } from '../clusters/cluster-spec.js';
import type { WaveView } from './rollout-view.js';
import { syncRow, type ReadyStatus } from './sync-rows.js';

/** A sync's state, from its status. */
export interface SyncState {
  kind: Kind;
  namespace: string;
  name: string;
  /** The Ready condition's status; absent when it has none yet. */
  ready?: ReadyStatus;
  reason?: string;
  message?: string;
  /** `status.lastAppliedRevision`. */
  revision?: string;
  /** Its unmet dependencies (`status.pendingDependencies`), as `Kind/name (reason)`. */
  pending?: string[];
  /** A FleetSync: its phase. */
  phase?: string;
  /** A FleetSync: its clusters, `ready/selected`. */
  clusters?: string;
  /** A FleetSync rolling out in waves: `3/5 waves, 412/1000` (waves done, clusters updated of selected). */
  progress?: string;
}

/** A sync met while following `dependsOn`, one way or the other. */
export interface RelatedSync extends Partial<SyncState> {
  kind: Kind;
  namespace: string;
  name: string;
  /** The requiredStatus of the edge that leads here. */
  requiredStatus: RequiredStatus;
  /** Why the dependency of that edge is not met yet (the operator's rule); absent when it is met. */
  unmet?: PendingReason;
  /** The sync does not exist (or could not be read). */
  missing?: true;
  /** It is already on the path from the root: the edge closes a cycle, and it is not followed again. */
  cycle?: true;
  /** Its own edges are shown where it first appears. */
  shownAbove?: true;
  /** What it depends on (in the `dependsOn` tree). */
  dependsOn?: RelatedSync[];
  /** What depends on it (in the `dependents` tree). */
  dependents?: RelatedSync[];
}

/** Why a sync's cluster could not be looked into. */
export type ClusterProblem = RemoteProblem | 'unreachable' | 'error';

/** The cluster a RemoteSync or ProxySync applies to, as the CLI reached it (or could not). */
export interface ClusterView {
  /** The API server, once its kubeconfig was read and accepted. */
  server?: string;
  /** Where its kubeconfig came from: `Secret ns/name key k`. */
  kubeconfig?: string;
  problem?: ClusterProblem;
  /** One line: why it could not be looked into. */
  message?: string;
}

/** An object a sync applied (an entry of its inventory), with its kstatus as read now. */
export interface AppliedObject {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  /** kstatus, computed by the operator's health rules from the live object. */
  status: HealthStatus;
  message: string;
  /** The object is a sync itself: what it applied, in turn. */
  sync?: SyncTree;
}

/** A sync and what it applied, following RemoteSyncs and ProxySyncs into their clusters. */
export interface SyncTree extends SyncState {
  /** RemoteSync and ProxySync: the cluster their objects are in. */
  cluster?: ClusterView;
  /** Its inventory, as found now (each Unknown when its cluster could not be looked into). */
  objects?: AppliedObject[];
  /** Not followed further: the nesting is deeper than the CLI goes, or it was already shown. */
  notFollowed?: string;
  /** A FleetSync: its children, one per cluster, by cluster name. */
  children?: FleetChildTree[];
  /** A FleetSync rolling out in waves: its waves in order (their `members` name the children's clusters). */
  waves?: WaveView[];
  /** A FleetSync: the clusters it selects whose template of its spec as it is now cannot be made (views/fleet-unmade.ts), and why. */
  unmade?: UnmadeCluster[];
}

/** A cluster a FleetSync cannot make a template for (an override that does not apply, a value missing). */
export interface UnmadeCluster {
  cluster: string;
  reason: string;
  message: string;
}

/** A FleetSync's child for one cluster (a ProxySync or RemoteSync), and what it has there. */
export interface FleetChildTree {
  /** The cluster of the namespace's inventory it is for (its label `syncprims.dev/cluster`). */
  clusterName: string;
  /** The template revision it was given (its annotation `syncprims.dev/fleet-revision`). */
  fleetRevision?: string;
  sync: SyncTree;
}

/** `syncprims tree` with no argument: every sync of a namespace, a FleetSync's children under it only. */
export interface Forest {
  /** The API server the syncs live in. */
  server: string;
  namespace: string;
  roots: SyncTree[];
}

/** The whole answer of `syncprims tree kind/name`. */
export interface Tree extends SyncTree {
  /** The API server the sync lives in. */
  server: string;
  dependsOn: RelatedSync[];
  dependents: RelatedSync[];
  /** The shortest dependency cycle through the sync, as `Kind/namespace/name` keys (first repeated last). */
  cycle?: string[];
}

/** The state of a sync object, read from its status. */
export function syncState(obj: KubeObject): SyncState {
  const row = syncRow(obj);
  const state: SyncState = { kind: row.kind, namespace: row.namespace, name: row.name };
  if (row.ready) state.ready = row.ready;
  if (row.reason) state.reason = row.reason;
  if (row.message) state.message = row.message;
  if (row.revision) state.revision = row.revision;
  if (row.fleet?.phase) state.phase = row.fleet.phase;
  if (row.fleet) state.clusters = row.fleet.clusters;
  if (row.fleet?.progress) state.progress = row.fleet.progress;
  const pending = pendingOf(obj);
  if (pending.length > 0) state.pending = pending;
  return state;
}

/** `status.pendingDependencies` as `Kind/name (reason)` (`Kind/namespace/name` outside its namespace). */
function pendingOf(obj: KubeObject): string[] {
  const deps = (obj.status as { pendingDependencies?: { kind?: string; name?: string; namespace?: string; reason?: string }[] } | undefined)?.pendingDependencies;
  if (!Array.isArray(deps)) return [];
  return deps.map((d) => {
    const where = d.namespace && d.namespace !== obj.metadata.namespace ? `${d.namespace}/` : '';
    return `${d.kind}/${where}${d.name}${d.reason ? ` (${d.reason})` : ''}`;
  });
}
