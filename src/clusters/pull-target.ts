// Whether a sync's cluster Secret registers a pull cluster (pull-names.ts),
// and where that cluster's assignments are kept: read from the Secret's
// labels, as the metadata watch of Secrets has them (nothing else of it is
// read: it holds no credential).
import { CLUSTER_LABEL } from '../api/marks.js';
import type { KubeObject } from '../kube/resources.js';
import { assignmentNamespace, CLUSTER_MODE_LABEL, PULL_MODE } from './pull-names.js';

/** The revoked-at annotation `syncprims cluster revoke` puts on a pull cluster's Secret. */
export const REVOKED_AT_ANNOTATION = 'syncprims.dev/revoked-at';

/** A pull cluster, as a sync that names it reaches it: through its assignments namespace in the managing cluster. */
export interface PullTarget {
  /** The cluster's name in its inventory. */
  cluster: string;
  /** Its inventory namespace (where its Secret is). */
  inventoryNamespace: string;
  /** Its assignments namespace (assignmentNamespace). */
  namespace: string;
  /** When its identity was revoked (`syncprims cluster revoke`), if it was. */
  revokedAt?: string;
}

/** The pull cluster `secret` registers (`syncprims.dev/cluster-mode: pull`), or undefined: a push cluster's kubeconfig, or no Secret. */
export function pullTargetOf(secret: KubeObject | undefined, ref: { namespace: string; name: string }): PullTarget | undefined {
  const labels = secret?.metadata.labels ?? {};
  if (labels[CLUSTER_MODE_LABEL] !== PULL_MODE) return undefined;
  const cluster = labels[CLUSTER_LABEL] || ref.name.replace(/-kubeconfig$/, '');
  const revokedAt = secret?.metadata.annotations?.[REVOKED_AT_ANNOTATION];
  return { cluster, inventoryNamespace: ref.namespace, namespace: assignmentNamespace(ref.namespace, cluster), ...(revokedAt && { revokedAt }) };
}
