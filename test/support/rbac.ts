// RBAC for tests: a Role in a namespace, bound to a ServiceAccount (or a user).
import type { KubeClient } from '../../src/kube/client.js';

/** A Role `name` in `namespace` with `rules`, and a RoleBinding of it to the ServiceAccount `subject` (or the user, `kind: 'User'`). */
export async function bindRole(
  client: KubeClient,
  namespace: string,
  name: string,
  rules: unknown[],
  subject: { name: string; namespace: string } | { kind: 'User'; name: string },
): Promise<void> {
  const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}`;
  await client.request({ method: 'POST', path: `${rbac}/roles`, body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules } });
  await client.request({
    method: 'POST',
    path: `${rbac}/rolebindings`,
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: ['kind' in subject ? { apiGroup: 'rbac.authorization.k8s.io', ...subject } : { kind: 'ServiceAccount', ...subject }],
    },
  });
}

/**
 * What a ProxySync's account needs in its namespace of the remote cluster
 * when the operator impersonates (docs/proxysync.md): its remote Sync and
 * the copies beside it, written, read and deleted as that account.
 */
export const PROXYSYNC_WRITER_RULES = [
  { apiGroups: ['syncprims.dev'], resources: ['syncs'], verbs: ['get', 'create', 'patch', 'delete'] },
  { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'create', 'patch', 'delete'] },
];
