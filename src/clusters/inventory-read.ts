// The cluster inventory of one namespace read once (LISTs, no watch): for the
// CLI (`syncprims cluster add`, `syncprims get clusters`), which checks and
// shows what the operator's live inventory (inventory.ts) would hold.
import { CLUSTER_LABEL } from '../api/marks.js';
import type { Requester } from '../kube/client.js';
import { ApiError } from '../kube/errors.js';
import { apiPath } from '../kube/paths.js';
import { collectionPath, CORE, METADATA_LIST_ONLY_ACCEPT, splitApiVersion, type KubeObject } from '../kube/resources.js';
import {
  CLUSTER_API_VERSIONS,
  CLUSTER_PROFILE_VERSIONS,
  clusterApiCluster,
  clusterProfileCluster,
  secretCluster,
  withConflicts,
} from './inventory-sources.js';
import type { InventoryCluster } from './inventory-types.js';

interface List {
  items?: KubeObject[];
}

/** The namespace's clusters, sorted by name, with their conflicts: Secrets and Cluster API Clusters read as metadata only. */
export async function readInventory(client: Requester, namespace: string): Promise<InventoryCluster[]> {
  const [secrets, clusters, profiles] = await Promise.all([
    listIfServed(client, collectionPath(CORE.secrets, namespace), { labelSelector: CLUSTER_LABEL }, true).then((items) => items ?? []),
    firstServed(client, CLUSTER_API_VERSIONS, (v) => apiPath({ ...splitApiVersion(v), resource: 'clusters', namespace }), true),
    firstServed(client, CLUSTER_PROFILE_VERSIONS, (v) => apiPath({ ...splitApiVersion(v), resource: 'clusterprofiles', namespace }), false),
  ]);
  return withConflicts([...secrets.map(secretCluster), ...clusters.map(clusterApiCluster), ...profiles.map(clusterProfileCluster)]);
}

/** The objects at the first version's path that is served (none where no version is). */
async function firstServed(client: Requester, versions: string[], path: (v: string) => string, metadataOnly: boolean): Promise<KubeObject[]> {
  for (const v of versions) {
    const items = await listIfServed(client, path(v), {}, metadataOnly);
    if (items !== undefined) return items;
  }
  return [];
}

async function listIfServed(client: Requester, path: string, query: Record<string, string>, metadataOnly: boolean): Promise<KubeObject[] | undefined> {
  try {
    const list = await client.request<List>({ path, query, ...(metadataOnly && { accept: METADATA_LIST_ONLY_ACCEPT }) });
    return list.items ?? [];
  } catch (err) {
    // Not served: its CRD is not installed.
    if (err instanceof ApiError && err.status === 404) return undefined;
    throw err;
  }
}
