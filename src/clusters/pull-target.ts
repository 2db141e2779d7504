// Whether a sync's cluster Secret registers a pull cluster (pull-names.ts),
// and where that cluster's assignments are kept: read from the Secret's
// labels, as the metadata watch of Secrets has them (nothing else of it is
// read: it holds no credential).
import { CLUSTER_LABEL } from '../api/marks.js';
import type { KubeObject } from '../kube/resources.js';
import { assignmentNamespace, CLUSTER_MODE_LABEL, PULL_MODE } from './pull-names.js';

/**
 * The label `syncprims cluster revoke` puts on a pull cluster's Secret: when, in seconds since the epoch (a
 * label, since the Secrets are watched as metadata without annotations; a label value holds no ':').
 */
export const REVOKED_AT_LABEL = 'syncprims.dev/revoked-at';

/** The revoked-at label's value for `at`, and back (undefined: not a time). */
export function revokedAtValue(at: Date): string {
  return String(Math.floor(at.getTime() / 1000));
}
export function revokedAtOf(value: string | undefined): string | undefined {
  if (!value || !/^\d{1,12}$/.test(value)) return undefined;
  return new Date(Number(value) * 1000).toISOString().replace('.000Z', 'Z');
}

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
  const revokedAt = revokedAtOf(labels[REVOKED_AT_LABEL]);
  return { cluster, inventoryNamespace: ref.namespace, namespace: assignmentNamespace(ref.namespace, cluster), ...(revokedAt && { revokedAt }) };
}
