// What the web view shows, made from the syncs the operator's caches hold:
// per namespace the dependency graph (the CLI's graph model, laid out left to
// right), per remote cluster its syncs and reachability, and everything that
// is not Ready. Pure: the same objects give the same view.
import { isKind } from '../api/kinds.js';
import { Reason } from '../api/conditions.js';
import type { ReachabilitySnapshot } from '../clusters/reachability.js';
import { nodeKey, parseNodeKey, type SyncNode } from '../deps/refs.js';
import type { KubeObject } from '../kube/resources.js';
import { graphModel, stateOf, type GraphModel, type MemberCounts } from '../views/graph-model.js';
import type { NodeLookup } from '../views/graph-read.js';
import { syncRow, type SyncRow } from '../views/sync-rows.js';
import { SyncSet, type SyncEdge } from '../views/sync-set.js';
import { layoutColumns } from './layout.js';
import { fleetViews, type FleetView, type InventoryOf } from './fleets.js';

/** The states a node is coloured by. waiting: on its dependencies; missing: a dependency that does not exist; unknown: not in the caches. */
export type ViewState = 'ready' | 'progressing' | 'waiting' | 'failed' | 'suspended' | 'missing' | 'unknown';

export interface ViewNode {
  key: string;
  kind: string;
  namespace: string;
  name: string;
  label: string;
  state: ViewState;
  reason?: string;
  message?: string;
  revision?: string;
  cluster?: string;
  /** Unmet dependencies, with why (`Kind/name: NotReady`). */
  pending: string[];
  /** When the Ready condition last changed. */
  since?: string;
  resourceVersion?: string;
  /** A FleetSync: its children by state (they are listed under it in `fleets`, not drawn as nodes). */
  members?: MemberCounts;
  /** A FleetSync: `ready/selected` clusters, as its status says. */
  readyClusters?: string;
  col: number;
  row: number;
}

export interface ViewEdge {
  from: string;
  to: string;
  label?: string;
  cycle: boolean;
  /** Why the dependency is not met yet (undefined: met). */
  unmet?: string;
}

export interface NamespaceView {
  namespace: string;
  nodes: ViewNode[];
  edges: ViewEdge[];
  cycles: string[][];
}

export interface ClusterView {
  /** `namespace/name` of the kubeconfig Secret or Cluster. */
  key: string;
  namespace: string;
  name: string;
  /**
   * false: it does not answer (as the operator's connection to it knows now, else as a sync of it
   * last said); true: it answers; undefined: none tried yet.
   */
  reachable?: boolean;
  /** When it last answered, as the operator's connection knows (else as its syncs last said); `never` when it never did. */
  lastReached?: string;
  /** Since when a sync of it has said it is unreachable (its Ready condition's last transition). */
  since?: string;
  message?: string;
  syncs: { key: string; kind: string; name: string; state: ViewState }[];
}

export interface NotReadyItem {
  key: string;
  kind: string;
  namespace: string;
  name: string;
  state: ViewState;
  reason?: string;
  message?: string;
  since?: string;
}

export interface View {
  /** The namespace the operator watches; undefined: all. */
  watched?: string;
  namespaces: NamespaceView[];
  clusters: ClusterView[];
  /** The FleetSyncs, their counts and their children. */
  fleets: FleetView[];
  notReady: NotReadyItem[];
}

interface ReadyCondition {
  type?: string;
  status?: string;
  reason?: string;
  lastTransitionTime?: string;
}

/** The live reachability of the cluster a RemoteSync or ProxySync (`Kind/namespace/name`) last used, if the operator has one. */
export type LiveReachability = (user: string) => ReachabilitySnapshot | undefined;

/** `inventory`: the namespaces' cluster inventories, for the FleetSyncs' clusters (their values and overrides). */
export function buildView(objects: readonly KubeObject[], watched?: string, live?: LiveReachability, inventory?: InventoryOf): View {
  const set = new SyncSet(objects.filter((o) => isKind(o.kind)));
  const namespaces = [...new Set(set.objects.map((o) => o.metadata.namespace ?? ''))].sort();
  const cycles = set.cycles;
  const unmet = new Map(set.edges.map((e) => [`${nodeKey(e.from)}>${nodeKey(e.to)}`, e]));
  const lookup = lookupIn(set, watched);
  const rows = new Map(set.objects.map((o) => [nodeKey(nodeOfObject(o)), o]));
  return {
    watched,
    namespaces: namespaces.map((ns) => namespaceView(set, ns, { cycles, unmet, lookup, rows })),
    clusters: clusterViews(set.objects, live),
    fleets: fleetViews(set.objects, viewState, inventory),
    notReady: notReadyItems(set.objects),
  };
}

interface Shared {
  cycles: string[][];
  unmet: Map<string, SyncEdge>;
  lookup: (node: SyncNode) => NodeLookup;
  rows: Map<string, KubeObject>;
}

function namespaceView(set: SyncSet, namespace: string, shared: Shared): NamespaceView {
  const objects = set.objects.filter((o) => o.metadata.namespace === namespace);
  const edges = objects.flatMap((o) => set.dependenciesOf(nodeOfObject(o)));
  const keys = new Set(objects.map((o) => nodeKey(nodeOfObject(o))));
  const cycles = shared.cycles.filter((c) => c.some((k) => keys.has(k)));
  const model: GraphModel = graphModel({ objects, edges, cycles, namespace, lookup: shared.lookup });
  const places = layoutColumns(model.nodes.map((n) => n.key), model.edges);
  return {
    namespace,
    nodes: model.nodes.map((n) => viewNode(n, shared.rows.get(n.key), places.get(n.key) ?? { col: 0, row: 0 })),
    edges: model.edges.map((e) => {
      const unmet = shared.unmet.get(`${e.from}>${e.to}`)?.unmet;
      return unmet ? { ...e, unmet } : e;
    }),
    cycles: model.cycles,
  };
}

function viewNode(n: GraphModel['nodes'][number], obj: KubeObject | undefined, place: { col: number; row: number }): ViewNode {
  const { kind, namespace, name } = parseNodeKey(n.key);
  const base = { key: n.key, kind, namespace, name, label: n.label, col: place.col, row: place.row, ...(n.members ? { members: n.members } : {}) };
  if (!obj) return { ...base, state: n.state, pending: [] };
  const row = syncRow(obj);
  return {
    ...base,
    state: viewState(obj),
    reason: row.reason,
    message: row.message,
    revision: row.revision,
    cluster: row.cluster,
    pending: pendingOf(obj),
    since: readyOf(obj)?.lastTransitionTime,
    resourceVersion: obj.metadata.resourceVersion,
    ...(row.fleet?.clusters ? { readyClusters: row.fleet.clusters } : {}),
  };
}

/** The graph's state, told apart further: suspended, and waiting on dependencies (not an error). */
export function viewState(obj: KubeObject): ViewState {
  const spec = obj.spec as { suspend?: unknown } | undefined;
  if (spec?.suspend === true) return 'suspended';
  const ready = readyOf(obj);
  if (ready?.reason === Reason.DependencyNotReady) return 'waiting';
  return stateOf(obj);
}

function readyOf(obj: KubeObject): ReadyCondition | undefined {
  const conditions = (obj.status as { conditions?: ReadyCondition[] } | undefined)?.conditions;
  return conditions?.find((c) => c.type === 'Ready');
}

function pendingOf(obj: KubeObject): string[] {
  const deps = (obj.status as { pendingDependencies?: { kind?: string; name?: string; namespace?: string; reason?: string }[] } | undefined)?.pendingDependencies ?? [];
  const ns = obj.metadata.namespace;
  return deps.map((d) => `${d.kind}/${d.namespace && d.namespace !== ns ? `${d.namespace}/` : ''}${d.name}: ${d.reason ?? 'pending'}`);
}

/** A dependency outside the set: missing when the operator watches its namespace (it would be cached), else unknown. */
function lookupIn(set: SyncSet, watched: string | undefined): (node: SyncNode) => NodeLookup {
  return (node) => {
    const object = set.get(node);
    if (object) return { found: true, object };
    if (watched === undefined || node.namespace === watched) return { found: false, missing: true };
    return { found: false, missing: false, why: `namespace ${node.namespace} is not watched by this operator` };
  };
}

function nodeOfObject(o: KubeObject): SyncNode {
  return { kind: o.kind as SyncNode['kind'], namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '' };
}

const LAST_REACHED = /\((?:last reached (\S+)|never reached)\)/;

/**
 * The remote clusters: their reachability as the operator's connections know it now (`live`), else
 * as their RemoteSyncs and ProxySyncs last said. No cluster is asked.
 */
function clusterViews(objects: readonly KubeObject[], live?: LiveReachability): ClusterView[] {
  const byCluster = new Map<string, ClusterView>();
  for (const o of objects) {
    const row: SyncRow = syncRow(o);
    if (o.kind === 'Sync' || !row.cluster) continue;
    const key = `${row.namespace}/${row.cluster}`;
    let view = byCluster.get(key);
    if (!view) byCluster.set(key, (view = { key, namespace: row.namespace, name: row.cluster, syncs: [] }));
    view.syncs.push({ key: nodeKey(nodeOfObject(o)), kind: o.kind, name: row.name, state: viewState(o) });
    const since = readyOf(o)?.lastTransitionTime;
    const snapshot = live?.(`${o.kind}/${row.namespace}/${row.name}`);
    // A cluster not asked anything yet is not known to answer: its syncs' word stands.
    if (snapshot && (snapshot.lastReached || !snapshot.reachable)) noteLive(view, snapshot, row.reason === Reason.ClusterUnreachable ? since : undefined);
    else noteReachability(view, row, since);
  }
  return [...byCluster.values()].sort((a, b) => a.key.localeCompare(b.key));
}

function noteLive(view: ClusterView, live: ReachabilitySnapshot, since: string | undefined): void {
  if (live.lastReached && (!view.lastReached || view.lastReached === 'never' || live.lastReached > view.lastReached)) view.lastReached = live.lastReached;
  if (live.reachable) {
    view.reachable ??= true;
    return;
  }
  view.reachable = false;
  view.message = live.error;
  view.lastReached ??= 'never';
  if (since && (!view.since || since < view.since)) view.since = since;
}

function noteReachability(view: ClusterView, row: SyncRow, since: string | undefined): void {
  if (row.reason === Reason.ClusterUnreachable) {
    view.reachable = false;
    view.message = row.message;
    if (since && (!view.since || since < view.since)) view.since = since;
    const m = row.message ? LAST_REACHED.exec(row.message) : null;
    if (m) view.lastReached = m[1] ?? 'never';
    return;
  }
  // Ready, or failed for a reason found in the cluster: it answered.
  const reached = row.ready === 'True' || (row.ready === 'False' && row.reason !== Reason.DependencyNotReady && row.reason !== Reason.Suspended);
  if (reached && view.reachable === undefined) view.reachable = true;
}

/** Everything not Ready (suspended syncs included: they are not working), oldest first (those with no time at the end). */
function notReadyItems(objects: readonly KubeObject[]): NotReadyItem[] {
  return objects
    .map((o) => ({ o, state: viewState(o) }))
    .filter(({ state }) => state !== 'ready')
    .map(({ o, state }) => {
      const row = syncRow(o);
      return { key: nodeKey(nodeOfObject(o)), kind: o.kind, namespace: row.namespace, name: row.name, state, reason: row.reason, message: row.message, since: readyOf(o)?.lastTransitionTime ?? row.createdAt };
    })
    .sort((a, b) => timeOf(a.since) - timeOf(b.since) || a.key.localeCompare(b.key));
}

function timeOf(timestamp: string | undefined): number {
  const at = timestamp ? Date.parse(timestamp) : NaN;
  return Number.isNaN(at) ? Number.MAX_SAFE_INTEGER : at;
}
