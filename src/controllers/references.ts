import { clusterApiKubeconfigSecret } from '../api/cluster.js';
import type { SyncKind } from '../api/kinds.js';
import type { KubeObject } from '../kube/resources.js';
import type { ReferencedObject } from '../runtime/referenced-objects.js';
import { referencedObjectsOf } from '../source/index.js';

/**
 * What a sync object of each kind references but does not own, read from
 * the cached (unvalidated) object: its source's objects and its chart's
 * values (`spec.helm.valuesFrom`; a ProxySync's are
 * in its template, and are copied to the remote cluster), and for a
 * RemoteSync or ProxySync the Secret that holds its cluster's kubeconfig.
 */
export function referencesOf(kind: SyncKind, obj: KubeObject): ReferencedObject[] {
  const namespace = obj.metadata.namespace ?? '';
  const spec = (obj.spec ?? {}) as Record<string, unknown>;
  if (kind === 'Sync') return referencedObjectsOf(spec.source, namespace, spec.helm);
  const cluster = kubeconfigSecretOf(spec, namespace);
  const sync = kind === 'RemoteSync' ? spec : ((spec.template as { spec?: Record<string, unknown> } | undefined)?.spec ?? {});
  return [...referencedObjectsOf(sync.source, namespace, sync.helm), ...(cluster ? [cluster] : [])];
}

/** The kubeconfig Secret of `kubeConfig.secretRef` or `clusterRef` (Cluster API: `<name>-kubeconfig`). */
function kubeconfigSecretOf(spec: Record<string, unknown>, namespace: string): ReferencedObject | undefined {
  const secretRef = (spec.kubeConfig as { secretRef?: { name?: unknown } } | undefined)?.secretRef;
  const clusterRef = spec.clusterRef as { name?: unknown } | undefined;
  let name: string | undefined;
  if (typeof secretRef?.name === 'string' && secretRef.name !== '') name = secretRef.name;
  else if (typeof clusterRef?.name === 'string' && clusterRef.name !== '') name = clusterApiKubeconfigSecret(clusterRef.name);
  return name ? { apiVersion: 'v1', kind: 'Secret', namespace, name } : undefined;
}
