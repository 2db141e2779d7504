// The dependency part of `syncprims tree`: what a sync depends on and what
// depends on it, followed recursively through a SyncSet (edges and unmet
// reasons as the operator judges them). Pure: the caller reads the set.
import { nodeKey, type SyncNode } from '../../deps/refs.js';
import type { SyncEdge, SyncSet } from '../../views/sync-set.js';
import { kindRank } from '../../views/sync-rows.js';
import { syncState, type RelatedSync } from '../../views/tree-model.js';

type Direction = 'dependsOn' | 'dependents';

/**
 * The syncs `root` depends on (`dependsOn`) or that depend on it
 * (`dependents`), each with its own edges the same way. A sync already on
 * the path closes a cycle and is not followed again; one already shown
 * elsewhere in the tree is shown again without its edges.
 */
export function relatedTree(set: SyncSet, root: SyncNode, direction: Direction): RelatedSync[] {
  const shown = new Set<string>([nodeKey(root)]);
  return follow(set, root, direction, [nodeKey(root)], shown);
}

function follow(set: SyncSet, from: SyncNode, direction: Direction, path: string[], shown: Set<string>): RelatedSync[] {
  const edges = direction === 'dependsOn' ? set.dependenciesOf(from) : set.dependentsOf(from);
  return [...edges].sort(byTarget(direction)).map((edge) => {
    const target = direction === 'dependsOn' ? edge.to : edge.from;
    const key = nodeKey(target);
    const node = relatedNode(set, target, edge);
    if (path.includes(key)) return { ...node, cycle: true };
    if (shown.has(key)) return node.missing ? node : { ...node, shownAbove: true };
    shown.add(key);
    const next = follow(set, target, direction, [...path, key], shown);
    return next.length > 0 ? { ...node, [direction]: next } : node;
  });
}

function relatedNode(set: SyncSet, target: SyncNode, edge: SyncEdge): RelatedSync {
  const obj = set.get(target);
  const base: RelatedSync = { kind: target.kind, namespace: target.namespace, name: target.name, requiredStatus: edge.to.requiredStatus };
  if (edge.unmet) base.unmet = edge.unmet;
  if (!obj) return { ...base, missing: true };
  const { pending: _pending, ...state } = syncState(obj);
  return { ...state, ...base };
}

/** Sync, RemoteSync, ProxySync; then namespace and name: the same order on every run. */
function byTarget(direction: Direction): (a: SyncEdge, b: SyncEdge) => number {
  const pick = (e: SyncEdge): SyncNode => (direction === 'dependsOn' ? e.to : e.from);
  return (a, b) => {
    const x = pick(a);
    const y = pick(b);
    return kindRank(x.kind) - kindRank(y.kind) || x.namespace.localeCompare(y.namespace) || x.name.localeCompare(y.name);
  };
}
