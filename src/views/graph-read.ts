// The syncs of a namespace (or of all) as a graph, for `graph` and `doctor`,
// with the dependencies they name in other namespaces looked up one by one:
// a sync missing from the set is then known to be missing, not merely unread.
import { KIND_NAMES } from '../api/kinds.js';
import { nodeKey, type SyncNode } from '../deps/refs.js';
import type { KubeClient } from '../kube/client.js';
import { ApiError } from '../kube/errors.js';
import type { KubeObject } from '../kube/resources.js';
import { syncObjectPath, withKind } from './sync-api.js';
import { readSyncSet, type SyncSet } from './sync-set.js';

/** What is known of a node: its object, that it does not exist, or that it could not be read (e.g. forbidden). */
export type NodeLookup = { found: true; object: KubeObject } | { found: false; missing: boolean; why?: string };

export interface SyncGraph {
  /** The syncs read (of the namespace, or of all), with their edges. */
  set: SyncSet;
  /** The namespace read; undefined: all. */
  namespace?: string;
  /** What is known of a node: in the set, or one of its dependencies outside the namespace read. */
  lookup(node: SyncNode): NodeLookup;
}

export async function readSyncGraph(client: KubeClient, namespace?: string): Promise<SyncGraph> {
  const set = await readSyncSet(client, namespace);
  const outside = new Map<string, NodeLookup>();
  if (namespace !== undefined) {
    const targets = set.edges.map((e) => e.to).filter((to) => to.namespace !== namespace);
    const unique = [...new Map(targets.map((t) => [nodeKey(t), t])).values()];
    await Promise.all(unique.map(async (t) => outside.set(nodeKey(t), await readOne(client, t))));
  }
  return {
    set,
    namespace,
    lookup(node) {
      const object = set.get(node);
      if (object) return { found: true, object };
      return outside.get(nodeKey(node)) ?? { found: false, missing: true };
    },
  };
}

async function readOne(client: KubeClient, node: SyncNode): Promise<NodeLookup> {
  try {
    const obj = await client.request<KubeObject>({ path: syncObjectPath(node.kind, node.namespace, node.name) });
    return { found: true, object: withKind(obj, node.kind) };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (err.notFound) return { found: false, missing: true };
    return { found: false, missing: false, why: `cannot read ${KIND_NAMES[node.kind].singular} ${node.namespace}/${node.name}: ${err.message}` };
  }
}
