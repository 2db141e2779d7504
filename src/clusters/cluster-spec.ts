// How a RemoteSync or ProxySync names its cluster, read from its spec: the
// kubeconfig Secret (directly or through a Cluster) and the registry's name
// for the sync. Shared by the controllers and the CLI, which opens the same
// cluster from the same spec.
import { kubeconfigSecret, type ClusterRef, type KubeConfigRef } from '../api/cluster.js';
import type { KubeObject } from '../kube/resources.js';
import type { ClusterSecretRef } from './registry.js';

/** How a RemoteSync or ProxySync names its cluster. */
export interface ClusterSpec {
  kubeConfig?: KubeConfigRef;
  clusterRef?: ClusterRef;
}

/** Why a sync's cluster could not be opened: `refused` (its kubeconfig fails the checks), `missing`, `forbidden`, `pull` (a pull cluster: never dialled). */
export type RemoteProblem = 'refused' | 'missing' | 'forbidden' | 'pull';

/** The registry's name for a sync that uses a cluster: `Kind/namespace/name`. */
export function clusterUser(obj: KubeObject): string {
  return `${obj.kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}

/** The Secret and key of the sync's kubeconfig, and the spec field that names it (for messages). */
export function secretRefOf(obj: KubeObject, spec: ClusterSpec): ClusterSecretRef {
  const { name, key } = kubeconfigSecret(spec);
  const field = spec.kubeConfig ? 'spec.kubeConfig.secretRef' : 'spec.clusterRef.name';
  return { namespace: obj.metadata.namespace ?? '', name, key, field };
}
