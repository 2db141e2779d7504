// A stand-in for Cluster API's Cluster CRD (cluster.x-k8s.io/v1beta1,
// namespaced, any fields): enough to create a Cluster, hold it in deletion
// with a finalizer of the test's, and let it go.
import { ApiError } from '../../src/kube/errors.js';
import type { KubeClient } from '../../src/kube/client.js';
import { eventually } from './eventually.js';

const CRD_NAME = 'clusters.cluster.x-k8s.io';
const API = '/apis/cluster.x-k8s.io/v1beta1';

export const clusterApiClusterPath = (namespace: string, name: string): string => `${API}/namespaces/${namespace}/clusters/${name}`;

/** Creates the Cluster CRD unless it exists (it is left installed: other tests may use it), and waits until it is served. */
export async function installClusterApiCrd(client: KubeClient): Promise<void> {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME },
    spec: {
      group: 'cluster.x-k8s.io',
      scope: 'Namespaced',
      names: { plural: 'clusters', singular: 'cluster', kind: 'Cluster', listKind: 'ClusterList' },
      versions: [{ name: 'v1beta1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
  await client.request({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd }).catch((err: unknown) => {
    if (!(err instanceof ApiError && err.conflict)) throw err;
  });
  await eventually('Cluster API Clusters to be served', async () => {
    await client.request({ path: `${API}/clusters`, query: { limit: 1 } });
    return true;
  });
}

/** A Cluster held by the finalizer `test.syncprims.dev/hold`, so that deleting it leaves it being deleted. */
export async function createHeldCluster(client: KubeClient, namespace: string, name: string): Promise<void> {
  await client.request({
    method: 'POST',
    path: `${API}/namespaces/${namespace}/clusters`,
    body: { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', metadata: { name, namespace, finalizers: ['test.syncprims.dev/hold'] } },
  });
}

/** Lets a held Cluster go. */
export async function releaseCluster(client: KubeClient, namespace: string, name: string): Promise<void> {
  await client.request({
    method: 'PATCH',
    path: clusterApiClusterPath(namespace, name),
    contentType: 'application/merge-patch+json',
    body: { metadata: { finalizers: null } },
  });
}
