// What `syncprims graph` draws, apart from how: nodes with a state, edges
// (from a sync to a sync it depends on) with the required status when it is
// InProgress, and the edges that lie on a cycle. Sorted, so that the same
// syncs give the same text.
import { displayNode, nodeKey, parseNodeKey, type SyncNode } from '../deps/refs.js';
import type { KubeObject } from '../kube/resources.js';
import type { NodeLookup } from './graph-read.js';
import type { SyncEdge } from './sync-set.js';
import { kindRank } from './sync-rows.js';
import { FleetMembers } from './fleet-members.js';

/** ready: Ready=True; failed: Ready=False; progressing: Ready=Unknown or none yet; missing: does not exist; unknown: could not be read. */
export type NodeState = 'ready' | 'failed' | 'progressing' | 'missing' | 'unknown';

export interface GraphNode {
  key: string;
  /** `Kind/name` (`Kind/namespace/name` outside the namespace drawn, or for every node with -A). */
  label: string;
  state: NodeState;
  /** A FleetSync: its children (one per cluster) by state, drawn as its members rather than as nodes. */
  members?: MemberCounts;
}

export interface MemberCounts {
  total: number;
  ready: number;
  failed: number;
  progressing: number;
}

export interface GraphEdge {
  from: string;
  to: string;
  /** `per cluster` between FleetSyncs (each cluster's child waits for that cluster's child), `InProgress` when that is the status required. */
  label?: string;
  /** On a cycle: the dependency leads back to the dependent. */
  cycle: boolean;
}

export interface GraphModel {
  /** What is drawn: `namespace <ns>` or `all namespaces`. */
  title: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** Each cycle once, as labels, the first repeated at the end. */
  cycles: string[][];
}

export interface GraphInput {
  objects: readonly KubeObject[];
  edges: readonly SyncEdge[];
  cycles: readonly string[][];
  /** The namespace drawn; undefined: all. */
  namespace?: string;
  lookup(node: SyncNode): NodeLookup;
}

interface Drawn {
  node: SyncNode;
  state: NodeState;
  members?: MemberCounts;
}

/**
 * The graph of `input`. The children of a FleetSync in it are not nodes:
 * they are counted on their FleetSync, and their edges drawn from (or to) it.
 */
export function graphModel(input: GraphInput): GraphModel {
  const { namespace } = input;
  const label = (n: SyncNode): string => (namespace === undefined ? `${n.kind}/${n.namespace}/${n.name}` : displayNode(n, namespace));
  const members = new FleetMembers(input.objects);
  const nodes = drawnNodes(input, members);
  const edges = drawnEdges(input.edges, members);
  const successors = new Map<string, string[]>();
  for (const e of edges) successors.set(e.from, [...(successors.get(e.from) ?? []), e.to]);
  const sorted = [...nodes.values()].sort((a, b) => compareNodes(a.node, b.node));
  const order = new Map(sorted.map((n, i) => [nodeKey(n.node), i]));
  const labelOf = new Map(sorted.map((n) => [nodeKey(n.node), label(n.node)]));
  return {
    title: namespace === undefined ? 'all namespaces' : `namespace ${namespace}`,
    nodes: sorted.map((n) => ({ key: nodeKey(n.node), label: labelOf.get(nodeKey(n.node))!, state: n.state, ...(n.members ? { members: n.members } : {}) })),
    edges: edges
      .map((e) => ({ ...e, cycle: reaches(e.to, e.from, successors) }))
      .sort((a, b) => order.get(a.from)! - order.get(b.from)! || order.get(a.to)! - order.get(b.to)!),
    cycles: members
      .liftCycles(input.cycles)
      .map((c) => canonicalCycle(c).map((k) => labelOf.get(k) ?? k))
      .sort((a, b) => a.length - b.length || a.join().localeCompare(b.join())),
  };
}

/** The nodes: every object but the FleetSyncs' children (counted on their FleetSync), and the dependencies outside the set. */
function drawnNodes(input: GraphInput, members: FleetMembers): Map<string, Drawn> {
  const nodes = new Map<string, Drawn>();
  for (const o of input.objects) {
    if (members.isMember(o)) continue;
    const node = { kind: o.kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '' } as SyncNode;
    const drawn: Drawn = { node, state: stateOf(o) };
    if (o.kind === 'FleetSync') drawn.members = countMembers(members.membersOf(nodeKey(node)).map((m) => m.object));
    nodes.set(nodeKey(node), drawn);
  }
  for (const e of input.edges) {
    const key = members.lift(nodeKey(e.to));
    if (nodes.has(key)) continue;
    const found = input.lookup(e.to);
    nodes.set(key, { node: e.to, state: found.found ? stateOf(found.object) : found.missing ? 'missing' : 'unknown' });
  }
  return nodes;
}

function countMembers(children: readonly KubeObject[]): MemberCounts {
  const counts: MemberCounts = { total: children.length, ready: 0, failed: 0, progressing: 0 };
  for (const c of children) {
    const state = stateOf(c);
    if (state === 'ready' || state === 'failed' || state === 'progressing') counts[state]++;
  }
  return counts;
}

/**
 * The edges between drawn nodes: a child's lifted to its FleetSync, each
 * pair once (a FleetSync's per-cluster edges are its FleetSync edge).
 */
function drawnEdges(edges: readonly SyncEdge[], members: FleetMembers): Omit<GraphEdge, 'cycle'>[] {
  const drawn = new Map<string, Omit<GraphEdge, 'cycle'> & { labels: Set<string> }>();
  for (const e of edges) {
    const from = members.lift(nodeKey(e.from));
    const to = members.lift(nodeKey(e.to));
    // A child waiting on its own FleetSync is not drawn as a loop (a sync waiting on itself is).
    if (from === to && nodeKey(e.from) !== nodeKey(e.to)) continue;
    const edge = drawn.get(`${from}>${to}`) ?? { from, to, labels: new Set<string>() };
    if (e.from.kind === 'FleetSync' && e.to.kind === 'FleetSync') edge.labels.add('per cluster');
    if (e.to.requiredStatus === 'InProgress') edge.labels.add('InProgress');
    drawn.set(`${from}>${to}`, edge);
  }
  return [...drawn.values()].map(({ labels, ...e }) => (labels.size > 0 ? { ...e, label: [...labels].join(', ') } : e));
}

/** The state a node is drawn in, from its Ready condition. */
export function stateOf(obj: KubeObject): NodeState {
  const conditions = (obj.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions;
  const ready = conditions?.find((c) => c.type === 'Ready')?.status;
  return ready === 'True' ? 'ready' : ready === 'False' ? 'failed' : 'progressing';
}

/**
 * A cycle of node keys (`[a, ..., a]`) told from the node that sorts first,
 * so that the same cycle reads the same whichever node it was found from.
 */
export function canonicalCycle(cycle: readonly string[]): string[] {
  const ring = cycle.slice(0, -1);
  if (ring.length === 0) return [...cycle];
  let first = 0;
  ring.forEach((key, i) => {
    if (compareNodes(parseNodeKey(key), parseNodeKey(ring[first]!)) < 0) first = i;
  });
  const rotated = [...ring.slice(first), ...ring.slice(0, first)];
  return [...rotated, rotated[0]!];
}

/** Namespace, then Sync, RemoteSync, ProxySync, then name. */
function compareNodes(a: SyncNode, b: SyncNode): number {
  return a.namespace.localeCompare(b.namespace) || kindRank(a.kind) - kindRank(b.kind) || a.name.localeCompare(b.name);
}

/** Whether `to` can be reached from `from` (an edge into `from` then closes a cycle). */
function reaches(from: string, to: string, successors: ReadonlyMap<string, readonly string[]>): boolean {
  const seen = new Set([from]);
  const queue = [from];
  for (let i = 0; i < queue.length; i++) {
    const at = queue[i]!;
    if (at === to) return true;
    for (const next of successors.get(at) ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  return false;
}
