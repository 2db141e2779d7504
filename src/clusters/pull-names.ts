// The names of pull mode (docs/pull.md): a cluster the managing cluster
// never dials. It is registered by a Secret with no credential in it; what
// the managing cluster addresses to it lives in a namespace of its own there
// (its assignments), which is all its identity may read; the downstream
// operator fetches from it, applies at home and writes the status back.
import { boundedName } from '../api/names.js';

/** On a cluster's registration Secret: `pull` (no kubeconfig: the cluster connects upward). Absent: push. */
export const CLUSTER_MODE_LABEL = 'syncprims.dev/cluster-mode';
export const PULL_MODE = 'pull';
/** The type of a pull cluster's registration Secret (it holds no credential). */
export const PULL_SECRET_TYPE = 'syncprims.dev/pull-cluster';

/** On the assignments namespace: the cluster's name, and the inventory namespace it is registered in. */
export const PULL_CLUSTER_LABEL = 'syncprims.dev/pull-cluster';
export const PULL_INVENTORY_LABEL = 'syncprims.dev/pull-inventory';

/** The pull cluster's identity in the managing cluster: this service account of its assignments namespace. */
export const PULL_AGENT_ACCOUNT = 'syncprims-pull-agent';
/** Its Role and RoleBinding there. */
export const PULL_AGENT_ROLE = 'syncprims-pull-agent';
/** The Lease the downstream operator renews there: when it was last seen. */
export const PULL_LEASE = 'syncprims-pull-agent';
/** How long a renewal of that Lease holds; it is renewed every third of it. */
export const PULL_LEASE_SECONDS = 30;

/**
 * On each assignment (a Sync in the assignments namespace, which the
 * managing operator never reconciles): the pull cluster's name. The Syncs
 * informer of the managing operator selects those without it.
 */
export const PULL_CARRIER_LABEL = 'syncprims.dev/pull-carrier';
/** On an assignment: `<namespace>/<name>` of the Sync it is in the downstream cluster. */
export const PULL_TARGET_ANNOTATION = 'syncprims.dev/pull-target';
/** On the downstream Sync and its copies: the assignment it comes from. */
export const PULL_ASSIGNMENT_LABEL = 'syncprims.dev/pull-assignment';
/** On the downstream Sync: the generation of the assignment its spec was written from. */
export const UPSTREAM_GENERATION_ANNOTATION = 'syncprims.dev/upstream-generation';
/** On an assignment, held by the downstream operator: its Sync there is deleted before the assignment goes (also when it was offline at the time). */
export const PULL_FINALIZER = 'syncprims.dev/pull-agent';
/** The field manager of what the downstream operator writes for its assignments. */
export const PULL_FIELD_MANAGER = 'syncprims-pull';

/** The assignments namespace of pull cluster `cluster` of inventory namespace `namespace`: `syncprims-pull-<namespace>-<cluster>`, bounded to 63. */
export function assignmentNamespace(namespace: string, cluster: string): string {
  return boundedName(`syncprims-pull-${namespace}-${cluster}`);
}
