// The simulated fleet's pieces, shared by bench/remote.ts and bench/fleet.ts:
// ConfigMaps to apply, identities confined to one namespace of a local API
// server (a ServiceAccount, its Role and RoleBinding, a token), and their
// kubeconfigs (everything inline) in Secrets of the managing cluster.
import { parse, stringify } from 'yaml';
import { ApiError } from '../src/kube/errors.js';
import type { KubeClient } from '../src/kube/client.js';
import { KubeConfig } from '../src/kube/kubeconfig.js';
import type { KubeObject } from '../src/kube/resources.js';

export const LABEL_PART_OF = 'app.kubernetes.io/part-of';

/** `n` ConfigMaps `<prefix>-<k>` holding `value` (about 200 B each), in `namespace` if given, labelled part of `partOf`. */
export function configMaps(partOf: string, n: number, prefix: string, value: string, namespace?: string, labels: Record<string, string> = {}): KubeObject[] {
  return Array.from({ length: n }, (_, k) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${prefix}-${String(k).padStart(4, '0')}`, ...(namespace ? { namespace } : {}), labels: { [LABEL_PART_OF]: partOf, ...labels } },
    data: { index: String(k), value, 'settings.yaml': `replicas: ${k % 5}\nlevel: info\nowner: team-${k % 17}\nnote: ${'x'.repeat(64)}\n` },
  }));
}

/** A Secret holding `kubeconfig` under the key `value`, with `labels` (e.g. `syncprims.dev/cluster`: an inventory cluster). */
export function secretObject(name: string, kubeconfig: string, labels?: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, ...(labels ? { labels } : {}) }, data: { value: Buffer.from(kubeconfig).toString('base64') } } as KubeObject;
}

export interface Kubeconfig {
  clusters: { name: string; cluster: Record<string, unknown> }[];
  users: { name: string; user: Record<string, unknown> }[];
}

/** A kubeconfig of the CA in `admin` (a cluster's admin kubeconfig), a bearer token, and `server` (default the cluster's own): everything inline. */
export function tokenKubeconfig(admin: string, cluster: string, token: string, server?: string): string {
  const c = (parse(admin) as Kubeconfig).clusters[0]!.cluster;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: server ?? c.server, 'certificate-authority-data': c['certificate-authority-data'] } }],
    users: [{ name: 'token', user: { token } }],
    contexts: [{ name: cluster, context: { cluster, user: 'token' } }],
    'current-context': cluster,
  });
}

export function kubeConfigOf(text: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(text);
  return kc;
}

const ignoreConflict = (promise: Promise<unknown>): Promise<unknown> =>
  promise.catch((err: unknown) => {
    if (!(err instanceof ApiError && err.conflict)) throw err;
  });

/**
 * An identity confined to one namespace: the namespace (created if missing,
 * labelled part of `partOf`), ServiceAccount `sa`, a Role granting everything
 * in that namespace, its RoleBinding, and a token (TokenRequest of
 * `tokenSeconds`). Returns the token.
 */
export async function confinedIdentity(remote: KubeClient, namespace: string, o: { sa: string; partOf: string; tokenSeconds: number }): Promise<string> {
  const { sa } = o;
  await ignoreConflict(remote.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: { [LABEL_PART_OF]: o.partOf } } } }));
  await ignoreConflict(remote.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/serviceaccounts`, body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa } } }));
  const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}`;
  await ignoreConflict(
    remote.request({
      method: 'POST',
      path: `${rbac}/roles`,
      body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: sa }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
    }),
  );
  await ignoreConflict(
    remote.request({
      method: 'POST',
      path: `${rbac}/rolebindings`,
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: sa },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: sa },
        subjects: [{ kind: 'ServiceAccount', name: sa, namespace }],
      },
    }),
  );
  const req = await remote.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${sa}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: o.tokenSeconds } },
  });
  return req.status.token;
}
