// A stand-in for Flux's source CRDs: just enough of GitRepository
// (source.toolkit.fluxcd.io/v1, namespaced, status subresource, any fields)
// for tests to create one and write its status.artifact as source-controller would.
import { ApiError } from '../../src/kube/errors.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { clusterClient } from './controlplane.js';
import { eventually } from './eventually.js';

export const FLUX_SOURCE_API_VERSION = 'source.toolkit.fluxcd.io/v1';
const CRD_NAME = 'gitrepositories.source.toolkit.fluxcd.io';

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: CRD_NAME },
  spec: {
    group: 'source.toolkit.fluxcd.io',
    scope: 'Namespaced',
    names: { plural: 'gitrepositories', singular: 'gitrepository', kind: 'GitRepository', listKind: 'GitRepositoryList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

/**
 * Creates the GitRepository CRD unless it exists (then it is left as it is,
 * and left installed afterwards: other test files may use it at the same time),
 * and waits until GitRepositories are served.
 */
export async function installGitRepositoryCrd(cluster: string): Promise<void> {
  const client = await clusterClient(cluster);
  await client
    .request({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd })
    .catch((err: unknown) => {
      if (!(err instanceof ApiError && err.conflict)) throw err;
    });
  await eventually('GitRepository to be served', async () => {
    await client.request({ path: '/apis/source.toolkit.fluxcd.io/v1/gitrepositories', query: { limit: 1 } });
    return true;
  });
}

export interface FluxArtifact {
  url: string;
  digest?: string;
  revision?: string;
}

function gitRepositoryPath(namespace: string, name = ''): string {
  return `/apis/source.toolkit.fluxcd.io/v1/namespaces/${namespace}/gitrepositories${name ? `/${name}` : ''}`;
}

/** Creates a GitRepository with no status (not ready yet). */
export async function createGitRepository(cluster: string, namespace: string, name: string): Promise<KubeObject> {
  const client = await clusterClient(cluster);
  return client.request<KubeObject>({
    method: 'POST',
    path: gitRepositoryPath(namespace),
    body: {
      apiVersion: FLUX_SOURCE_API_VERSION,
      kind: 'GitRepository',
      metadata: { name },
      spec: { url: 'https://git.example.test/repo', interval: '1m', ref: { branch: 'main' } },
    },
  });
}

/** Writes status.artifact through the status subresource, as source-controller does. */
export async function setArtifact(cluster: string, namespace: string, name: string, artifact: FluxArtifact): Promise<void> {
  const client = await clusterClient(cluster);
  const current = await client.request<KubeObject>({ path: gitRepositoryPath(namespace, name) });
  await client.request({
    method: 'PUT',
    path: `${gitRepositoryPath(namespace, name)}/status`,
    body: {
      ...current,
      status: {
        artifact: { path: `gitrepository/${namespace}/${name}/x.tar.gz`, lastUpdateTime: new Date().toISOString(), ...artifact },
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Succeeded', message: 'stored artifact', lastTransitionTime: new Date().toISOString() },
        ],
      },
    },
  });
}
