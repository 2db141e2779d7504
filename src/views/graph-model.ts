// What `syncprims graph` draws, apart from how: nodes with a state, edges
// (from a sync to a sync it depends on) with the required status when it is
// InProgress, and the edges that lie on a cycle. Sorted, so that the same
// syncs give the same text.
import { displayNode, nodeKey, parseNodeKey, type SyncNode } from '../deps/refs.js';
import type { KubeObject } from '../kube/resources.js';
import type { NodeLookup } from './graph-read.js';
import type { SyncEdge } from './sync-set.js';

/** ready: Ready=True; failed: Ready=False; progressing: Ready=Unknown or none yet; missing: does not exist; unknown: could not be read. */
export type NodeState = 'ready' | 'failed' | 'progressing' | 'missing' | 'unknown';

export interface GraphNode {
  key: string;
  /** `Kind/name` (`Kind/namespace/name` outside the namespace drawn, or for every node with -A). */
  label: string;
  state: NodeState;
}

export interface GraphEdge {
  from: string;
  to: string;
  /** `InProgress` when that is the status required of the dependency. */
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

const KIND_ORDER: Record<string, number> = { Sync: 0, RemoteSync: 1, ProxySync: 2 };

export function graphModel(input: GraphInput): GraphModel {
  const { namespace } = input;
  const label = (n: SyncNode): string => (namespace === undefined ? `${n.kind}/${n.namespace}/${n.name}` : displayNode(n, namespace));
  const nodes = new Map<string, { node: SyncNode; state: NodeState }>();
  for (const o of input.objects) {
    const node = { kind: o.kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '' } as SyncNode;
    nodes.set(nodeKey(node), { node, state: stateOf(o) });
  }
  for (const e of input.edges) {
    const key = nodeKey(e.to);
    if (nodes.has(key)) continue;
    const found = input.lookup(e.to);
    nodes.set(key, { node: e.to, state: found.found ? stateOf(found.object) : found.missing ? 'missing' : 'unknown' });
  }
  const successors = new Map<string, string[]>();
  for (const e of input.edges) successors.set(nodeKey(e.from), [...(successors.get(nodeKey(e.from)) ?? []), nodeKey(e.to)]);
  const sorted = [...nodes.values()].sort((a, b) => compareNodes(a.node, b.node));
  const order = new Map(sorted.map((n, i) => [nodeKey(n.node), i]));
  const edges = input.edges
    .map((e) => ({
      from: nodeKey(e.from),
      to: nodeKey(e.to),
      ...(e.to.requiredStatus === 'InProgress' ? { label: 'InProgress' } : {}),
      cycle: reaches(nodeKey(e.to), nodeKey(e.from), successors),
    }))
    .sort((a, b) => order.get(a.from)! - order.get(b.from)! || order.get(a.to)! - order.get(b.to)!);
  const labelOf = new Map(sorted.map((n) => [nodeKey(n.node), label(n.node)]));
  return {
    title: namespace === undefined ? 'all namespaces' : `namespace ${namespace}`,
    nodes: sorted.map((n) => ({ key: nodeKey(n.node), label: labelOf.get(nodeKey(n.node))!, state: n.state })),
    edges,
    cycles: input.cycles
      .map((c) => canonicalCycle(c).map((k) => labelOf.get(k) ?? k))
      .sort((a, b) => a.length - b.length || a.join().localeCompare(b.join())),
  };
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
  return a.namespace.localeCompare(b.namespace) || (KIND_ORDER[a.kind] ?? 9) - (KIND_ORDER[b.kind] ?? 9) || a.name.localeCompare(b.name);
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
