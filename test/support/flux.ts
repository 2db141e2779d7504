// A stand-in for Flux's source CRDs: just enough of GitRepository and
// ExternalArtifact (source.toolkit.fluxcd.io/v1, namespaced, status
// subresource, any fields) for tests to create them and write their
// status.artifact as source-controller (or an artifact generator) would.
import { ApiError } from '../../src/kube/errors.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { clusterClient } from './controlplane.js';
import { eventually } from './eventually.js';

export const FLUX_SOURCE_API_VERSION = 'source.toolkit.fluxcd.io/v1';
/** The Flux source kinds the tests stand in for, by kind: their plural names. */
const KINDS = { GitRepository: 'gitrepositories', ExternalArtifact: 'externalartifacts' } as const;
export type FluxSourceKind = keyof typeof KINDS;

function crdOf(kind: FluxSourceKind): Record<string, unknown> {
  const plural = KINDS[kind];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.source.toolkit.fluxcd.io` },
    spec: {
      group: 'source.toolkit.fluxcd.io',
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
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
}

/**
 * Creates the CRD of a Flux source kind unless it exists (then it is left as
 * it is, and left installed afterwards: other test files may use it at the
 * same time), and waits until the kind is served.
 */
export async function installFluxSourceCrd(cluster: string, kind: FluxSourceKind): Promise<void> {
  const client = await clusterClient(cluster);
  await client
    .request({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crdOf(kind) })
    .catch((err: unknown) => {
      if (!(err instanceof ApiError && err.conflict)) throw err;
    });
  await eventually(`${kind} to be served`, async () => {
    await client.request({ path: `/apis/source.toolkit.fluxcd.io/v1/${KINDS[kind]}`, query: { limit: 1 } });
    return true;
  });
}

export function installGitRepositoryCrd(cluster: string): Promise<void> {
  return installFluxSourceCrd(cluster, 'GitRepository');
}

export interface FluxArtifact {
  url: string;
  digest?: string;
  revision?: string;
}

export function fluxSourcePath(kind: FluxSourceKind, namespace: string, name = ''): string {
  return `/apis/source.toolkit.fluxcd.io/v1/namespaces/${namespace}/${KINDS[kind]}${name ? `/${name}` : ''}`;
}

/** Creates a GitRepository with no status (not ready yet). */
export async function createGitRepository(cluster: string, namespace: string, name: string): Promise<KubeObject> {
  return createFluxSource(cluster, 'GitRepository', namespace, name, { url: 'https://git.example.test/repo', interval: '1m', ref: { branch: 'main' } });
}

/** Creates an ExternalArtifact with no status (its generator has not written an artifact yet). */
export async function createExternalArtifact(cluster: string, namespace: string, name: string): Promise<KubeObject> {
  return createFluxSource(cluster, 'ExternalArtifact', namespace, name, { sourceRef: { apiVersion: 'example.test/v1', kind: 'Generator', name } });
}

async function createFluxSource(cluster: string, kind: FluxSourceKind, namespace: string, name: string, spec: Record<string, unknown>): Promise<KubeObject> {
  const client = await clusterClient(cluster);
  return client.request<KubeObject>({
    method: 'POST',
    path: fluxSourcePath(kind, namespace),
    body: { apiVersion: FLUX_SOURCE_API_VERSION, kind, metadata: { name }, spec },
  });
}

/** Writes status.artifact through the status subresource, as source-controller does (a GitRepository by default). */
export async function setArtifact(
  cluster: string,
  namespace: string,
  name: string,
  artifact: FluxArtifact,
  kind: FluxSourceKind = 'GitRepository',
): Promise<void> {
  const client = await clusterClient(cluster);
  const path = fluxSourcePath(kind, namespace, name);
  const current = await client.request<KubeObject>({ path });
  await client.request({
    method: 'PUT',
    path: `${path}/status`,
    body: {
      ...current,
      status: {
        artifact: { path: `${kind.toLowerCase()}/${namespace}/${name}/x.tar.gz`, lastUpdateTime: new Date().toISOString(), ...artifact },
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Succeeded', message: 'stored artifact', lastTransitionTime: new Date().toISOString() },
        ],
      },
    },
  });
}
