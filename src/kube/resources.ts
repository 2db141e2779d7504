import { apiPath } from './paths.js';

/** Where a kind lives in the API: what discovery says about it. */
export interface ResourceInfo {
  group: string;
  version: string;
  kind: string;
  /** The plural resource name used in paths, e.g. `configmaps`. */
  resource: string;
  namespaced: boolean;
}

/** The minimum of a Kubernetes object that names it. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: string;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export function groupVersionPath(group: string, version: string): string {
  return apiPath({ group, version });
}

/** The path of a collection: every namespace when `namespace` is undefined. */
export function collectionPath(info: ResourceInfo, namespace?: string): string {
  return apiPath({ ...info, namespace: info.namespaced ? namespace : undefined });
}

export function objectPath(info: ResourceInfo, name: string, namespace?: string, subresource?: string): string {
  if (info.namespaced && !namespace) {
    throw new Error(`${info.kind} ${name} is namespaced but has no namespace`);
  }
  return apiPath({ ...info, namespace: info.namespaced ? namespace : undefined, name, subresource });
}

/** Kinds whose place in the API is fixed: no discovery needed to name them. */
export const CORE = {
  configMaps: { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true },
  secrets: { group: '', version: 'v1', kind: 'Secret', resource: 'secrets', namespaced: true },
  namespaces: { group: '', version: 'v1', kind: 'Namespace', resource: 'namespaces', namespaced: false },
  events: { group: '', version: 'v1', kind: 'Event', resource: 'events', namespaced: true },
  serviceAccounts: { group: '', version: 'v1', kind: 'ServiceAccount', resource: 'serviceaccounts', namespaced: true },
  leases: { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', resource: 'leases', namespaced: true },
  crds: { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', resource: 'customresourcedefinitions', namespaced: false },
} as const satisfies Record<string, ResourceInfo>;

/**
 * Orders two resourceVersions of one cluster: negative, zero or positive, or
 * undefined when either is not a number. Kubernetes calls them opaque; on an
 * etcd-backed API server they are etcd revisions, which only grow. Use it to
 * tell which of two copies of an object is fresher, never across clusters.
 */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number | undefined {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return undefined;
  const x = BigInt(a);
  const y = BigInt(b);
  return x === y ? 0 : x < y ? -1 : 1;
}

/** The object without `metadata.managedFields` (a shallow copy; the object itself is left as it is). */
export function withoutManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/**
 * The Accept header that asks for an object's metadata only (a
 * PartialObjectMetadata), the whole object from a server that cannot: for
 * reads and watches of metadata, and for writes whose answer is only read for
 * its resourceVersion (the server then neither encodes nor sends the rest).
 */
export const METADATA_ONLY_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json';
/** The same for a list (a PartialObjectMetadataList). */
export const METADATA_LIST_ONLY_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json';
