// What an apply cannot do when switching a cluster to the multi-tenant mode:
// take away the default mode's apply-everything role (an apply never deletes).
import type { KubeClient } from '../../kube/client.js';
import { ApiError } from '../../kube/errors.js';
import { objectPath, type ResourceInfo } from '../../kube/resources.js';
import { describeApiError } from '../errors.js';
import { APPLY_ROLE } from './install-rbac.js';

const RBAC = { group: 'rbac.authorization.k8s.io', version: 'v1', namespaced: false };
/** The binding first: from then on the operator no longer holds the role. */
const APPLY_OBJECTS: ResourceInfo[] = [
  { ...RBAC, kind: 'ClusterRoleBinding', resource: 'clusterrolebindings' },
  { ...RBAC, kind: 'ClusterRole', resource: 'clusterroles' },
];

/**
 * Deletes the ClusterRoleBinding and ClusterRole `syncprims-apply` that an
 * install in the default mode left, so that the operator keeps no right to
 * write what syncs apply; `report` is told of each one deleted.
 */
export async function removeApplyRole(client: KubeClient, report: (line: string) => void): Promise<void> {
  for (const info of APPLY_OBJECTS) {
    try {
      await client.request({ method: 'DELETE', path: objectPath(info, APPLY_ROLE) });
    } catch (err) {
      if (err instanceof ApiError && err.notFound) continue;
      throw describeApiError(err, `deleting ${info.kind} ${APPLY_ROLE}`) ?? err;
    }
    report(`${info.kind} ${APPLY_ROLE} deleted (the default mode's: with --multi-tenant the operator writes nothing that syncs apply)`);
  }
}
