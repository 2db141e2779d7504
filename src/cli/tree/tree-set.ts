// The syncs around one sync, for the dependency part of `syncprims tree`:
// its namespace's, and those of any namespace a `dependsOn` there names
// (with --allow-cross-namespace-refs), as one SyncSet.
import type { KubeClient } from '../../kube/client.js';
import { ApiError } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/resources.js';
import { findCause } from '../errors.js';
import { listKinds } from '../../views/sync-api.js';
import { SyncSet } from '../../views/sync-set.js';

/** How many namespaces are read at most (the sync's own first). */
const MAX_NAMESPACES = 20;

/**
 * The SyncSet of `namespace` and of the namespaces its dependencies name,
 * transitively. A namespace that may not be read is left out (its syncs then
 * count as missing). Dependents are found in the namespaces read only.
 */
export async function readSetAround(client: KubeClient, namespace: string): Promise<SyncSet> {
  const read = new Set<string>();
  const objects: KubeObject[] = [];
  let next = [namespace];
  while (next.length > 0 && read.size < MAX_NAMESPACES) {
    const batch = next.slice(0, MAX_NAMESPACES - read.size);
    batch.forEach((ns) => read.add(ns));
    const found = await Promise.all(batch.map((ns) => readNamespace(client, ns, ns === namespace)));
    objects.push(...found.flat());
    const set = new SyncSet(objects);
    next = [...new Set(set.edges.map((e) => e.to.namespace))].filter((ns) => !read.has(ns));
  }
  return new SyncSet(objects);
}

async function readNamespace(client: KubeClient, namespace: string, own: boolean): Promise<KubeObject[]> {
  try {
    const lists = await listKinds(client, namespace);
    return lists.flatMap((l) => l.items);
  } catch (err) {
    // Another namespace we may not read: its syncs stay unknown. Our own must be readable.
    if (!own && findCause(err, ApiError)?.status === 403) return [];
    throw err;
  }
}
