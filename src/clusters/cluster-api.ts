// The Cluster API objects a RemoteSync or ProxySync with `clusterRef` may
// look at: whether its Cluster is being deleted (then its cluster is going
// away, and pruning there is moot).
import { getIfExists, type Requester } from '../kube/client.js';
import { Discovery, UnknownKindError } from '../kube/discovery.js';
import { objectPath, type KubeObject } from '../kube/resources.js';

/** The versions of `cluster.x-k8s.io` that serve Cluster, newest first. */
const CLUSTER_API_VERSIONS = ['cluster.x-k8s.io/v1beta2', 'cluster.x-k8s.io/v1beta1'];

/**
 * Whether the Cluster API Cluster `namespace/name` exists and is being
 * deleted; false where Cluster API is not served or there is no such Cluster.
 */
export async function clusterApiClusterBeingDeleted(client: Requester, discovery: Discovery, namespace: string, name: string): Promise<boolean> {
  for (const apiVersion of CLUSTER_API_VERSIONS) {
    let resource;
    try {
      resource = await discovery.resolve(apiVersion, 'Cluster');
    } catch (err) {
      if (err instanceof UnknownKindError) continue;
      throw err;
    }
    const cluster = await getIfExists<KubeObject>(client, objectPath(resource, name, namespace));
    return cluster?.metadata.deletionTimestamp !== undefined;
  }
  return false;
}
