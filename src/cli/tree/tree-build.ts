// Builds what `syncprims tree` shows: the sync's dependencies (tree-deps.ts)
// and what it applied, following RemoteSyncs and ProxySyncs into their
// clusters through their kubeconfig Secrets (remote.ts: checked as the
// operator checks them). A cluster that cannot be looked into is said on its
// node; only the managing cluster's errors end the command.
import { GROUP, isKind, type Kind } from '../../api/kinds.js';
import type { InventoryEntry } from '../../api/status.js';
import { entryApiVersion, parseObjectId } from '../../apply/inventory.js';
import { mapLimit } from '../../apply/map-limit.js';
import { ownerOf } from '../../apply/owner.js';
import { nodeOf } from '../../deps/refs.js';
import type { KubeClient } from '../../kube/client.js';
import { Discovery } from '../../kube/discovery.js';
import { ApiError, TransportError } from '../../kube/errors.js';
import { splitApiVersion, type KubeObject } from '../../kube/resources.js';
import { errorLine, findCause } from '../errors.js';
import { lazyClusterId } from '../managing-cluster-id.js';
import { openRemote, remoteFailure } from '../remote.js';
import { relatedTree } from './tree-deps.js';
import { syncState, type AppliedObject, type ClusterView, type Forest, type SyncTree, type Tree } from '../../views/tree-model.js';
import { FleetMembers, type FleetMember } from '../../views/fleet-members.js';
import { compareRows, syncRow } from '../../views/sync-rows.js';
import { listKinds } from '../../views/sync-api.js';
import { childTrees, readMembers, unmadeOf, wavesOf } from './tree-fleet.js';
import { inventoryEntries, readApplied } from './tree-objects.js';
import { readSetAround } from './tree-set.js';

/** Syncs applied by syncs are followed this many levels below the one asked for. */
export const MAX_NESTING = 4;
/** Nested syncs looked into at once. */
const CONCURRENCY = 4;

/** A cluster the tree reads from. */
interface Place {
  client: KubeClient;
  discovery: Discovery;
  /** The FleetSyncs' children, when already read (else each FleetSync's are read by their label). */
  members?: FleetMembers;
  /** This cluster's id as its operator has it: in a remote cluster only objects of that origin are its syncs' (read only when one is entered). */
  origin: () => Promise<string>;
}

/**
 * The whole tree of `root`, a sync read from the managing cluster through
 * `client`; `origin` gives the managing cluster's id (`--cluster-id`, else
 * kube-system's uid), asked only when a remote cluster is entered.
 */
export async function buildTree(client: KubeClient, root: KubeObject, origin: () => Promise<string>): Promise<Tree> {
  const node = nodeOf(root.kind as Kind, root);
  const [set, applied] = await Promise.all([readSetAround(client, node.namespace), syncTree({ client, discovery: new Discovery(client), origin }, root, 0, new Set())]);
  const { kind, namespace, name, cluster, objects, children, notFollowed: _notFollowed, ...state } = applied;
  const cycle = set.cycleThrough(node);
  return {
    kind,
    namespace,
    name,
    server: client.server.origin,
    ...state,
    ...(cycle ? { cycle } : {}),
    dependsOn: relatedTree(set, node, 'dependsOn'),
    dependents: relatedTree(set, node, 'dependents'),
    ...(cluster ? { cluster } : {}),
    ...(objects ? { objects } : {}),
    ...(children ? { children } : {}),
  };
}

/**
 * Every sync of `namespace` as a root with what it has; a FleetSync's
 * children are under it, not roots of their own.
 */
export async function buildForest(client: KubeClient, namespace: string, origin: () => Promise<string>): Promise<Forest> {
  const objects = (await listKinds(client, namespace)).flatMap((l) => l.items);
  const members = new FleetMembers(objects);
  const roots = objects.filter((o) => !members.isMember(o)).sort((a, b) => compareRows(syncRow(a), syncRow(b)));
  const place: Place = { client, discovery: new Discovery(client), members, origin };
  const seen = new Set<string>();
  return { server: client.server.origin, namespace, roots: await mapLimit(roots, CONCURRENCY, (root) => syncTree(place, root, 0, seen)) };
}

/** A sync and what it applied; `seen` (server and key) stops a sync from being followed twice. */
async function syncTree(place: Place, obj: KubeObject, depth: number, seen: Set<string>): Promise<SyncTree> {
  const state: SyncTree = syncState(obj);
  const key = `${place.client.server.origin}|${state.kind}/${state.namespace}/${state.name}`;
  if (seen.has(key)) return { ...state, notFollowed: 'shown above' };
  if (depth > MAX_NESTING) return { ...state, notFollowed: `nested more than ${MAX_NESTING} levels deep: run syncprims tree on it` };
  seen.add(key);
  if (state.kind === 'Sync') return { ...state, objects: await appliedIn(place, obj, depth, seen) };
  if (state.kind === 'FleetSync') {
    const [children, unmade] = await Promise.all([childTrees(await membersOf(place, obj), (child) => syncTree(place, child, depth + 1, seen)), unmadeOf(place.client, obj)]);
    return { ...state, ...wavesOf(obj), ...unmade, children };
  }
  return { ...state, ...(await remoteApplied(place, obj, depth, seen)) };
}

/**
 * A RemoteSync's or ProxySync's objects, in the cluster its kubeconfig Secret
 * names. When that cluster cannot be looked into, its inventory is still
 * listed, each object Unknown.
 */
async function remoteApplied(place: Place, obj: KubeObject, depth: number, seen: Set<string>): Promise<Pick<SyncTree, 'cluster' | 'objects'>> {
  const entries = inventoryEntries(obj);
  const target = await openRemote({ client: place.client }, obj);
  if (!target.ok) return { cluster: { problem: target.problem, message: target.message }, objects: unknownObjects(entries, `its cluster's kubeconfig: ${target.problem}`) };
  const cluster: ClusterView = { server: target.client.server.origin, kubeconfig: target.kubeconfigFrom };
  try {
    // Nothing to read there: ask the server something, to say whether it can be reached.
    if (entries.length === 0) await target.client.request({ path: '/version' });
    // The syncs found there are that cluster's own: their remote objects carry its id (its operator's default --cluster-id).
    const remote: Place = { client: target.client, discovery: new Discovery(target.client), origin: lazyClusterId(target.client, undefined) };
    const objects = await appliedIn(remote, obj, depth, seen, await place.origin());
    return { cluster, objects };
  } catch (err) {
    const problem = clusterProblem(err, target.client);
    return { cluster: { ...cluster, ...problem }, objects: unknownObjects(entries, `its cluster: ${problem.problem}`) };
  } finally {
    target.client.close();
  }
}

/** The inventory's objects, their state unknown: `why` they could not be read. */
function unknownObjects(entries: InventoryEntry[], why: string): AppliedObject[] {
  return entries.map((e) => {
    const ref = parseObjectId(e.id);
    return { apiVersion: entryApiVersion(e), kind: ref.kind, ...(ref.namespace ? { namespace: ref.namespace } : {}), name: ref.name, status: 'Unknown', message: `not read (${why})` };
  });
}

/** What went wrong in a remote cluster, in one line. */
function clusterProblem(err: unknown, client: KubeClient): Pick<ClusterView, 'problem' | 'message'> {
  const line = remoteFailure(err, client) ?? `${client.server.origin}: ${errorLine(err)}`;
  if (findCause(err, TransportError)) return { problem: 'unreachable', message: line };
  if (err instanceof ApiError && err.status === 403) return { problem: 'forbidden', message: line };
  return { problem: 'error', message: line };
}

/**
 * The inventory of `obj` as found in `place`; syncs among the objects are
 * followed in turn. `origin`: in a remote cluster, the managing cluster's id,
 * which its objects there carry: another managing cluster's twin (the same
 * owner labels, another origin) is not its (apply/owner.ts ownedBy).
 */
async function appliedIn(place: Place, obj: KubeObject, depth: number, seen: Set<string>, origin?: string): Promise<AppliedObject[]> {
  const owner = ownerOf(obj, obj.kind, origin);
  const live = await readApplied(place.client, place.discovery, owner, inventoryEntries(obj));
  return mapLimit(live, CONCURRENCY, async ({ ref, apiVersion, object, health }) => {
    const applied: AppliedObject = { apiVersion, kind: ref.kind, ...(ref.namespace ? { namespace: ref.namespace } : {}), name: ref.name, status: health.status, message: health.message };
    if (object && isSyncObject(object)) applied.sync = await syncTree(place, object, depth + 1, seen);
    return applied;
  });
}

function isSyncObject(obj: KubeObject): boolean {
  return splitApiVersion(obj.apiVersion).group === GROUP && isKind(obj.kind);
}

function membersOf(place: Place, fleet: KubeObject): Promise<FleetMember[]> | FleetMember[] {
  const key = `FleetSync/${fleet.metadata.namespace ?? ''}/${fleet.metadata.name ?? ''}`;
  const known = place.members?.membersOf(key);
  return known && known.length > 0 ? known : readMembers(place.client, fleet);
}
