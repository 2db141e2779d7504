// `syncprims cluster add NAME --pull` and `syncprims cluster revoke NAME`
// (docs/pull.md): a cluster the managing cluster never dials. Registered by
// the Secret `<name>-kubeconfig` with no data (no credential of it is kept
// here), labelled as any cluster and `syncprims.dev/cluster-mode: pull`; its
// assignments namespace, and in it the identity of the cluster (a
// ServiceAccount with a Role there only); then the join bundle: a kubeconfig
// of the managing cluster with that identity's token, whose context names the
// assignments namespace. Revoking deletes the ServiceAccount (every token of
// it stops working at once), its Role and RoleBinding.
import { readFileSync, writeFileSync } from 'node:fs';
import { CLUSTER_LABEL } from '../../api/marks.js';
import { parseDuration } from '../../api/duration.js';
import { readInventory } from '../../clusters/inventory-read.js';
import {
  assignmentNamespace,
  CLUSTER_MODE_LABEL,
  PULL_AGENT_ACCOUNT,
  PULL_AGENT_ROLE,
  PULL_CLUSTER_LABEL,
  PULL_INVENTORY_LABEL,
  PULL_LEASE,
  PULL_MODE,
  PULL_SECRET_TYPE,
} from '../../clusters/pull-names.js';
import { REVOKED_AT_LABEL, revokedAtOf, revokedAtValue } from '../../clusters/pull-target.js';
import { getIfExists, type Requester } from '../../kube/client.js';
import type { KubeConfig } from '../../kube/kubeconfig.js';
import { ApiError } from '../../kube/errors.js';
import { CORE, objectPath, type KubeObject } from '../../kube/resources.js';
import { withCluster } from '../cluster.js';
import { CliError, UsageError } from '../errors.js';
import { toYaml } from '../output.js';
import { CLI_FIELD_MANAGER, CLUSTER_NAME, parseLabels, removeValues, valuesNote } from './cluster-add.js';
import { staleValueAnnotations, valueAnnotations } from './value-flags.js';

export interface PullFlags {
  label: string[];
  value: string[];
  namespace?: string;
  joinFile?: string;
  tokenTtl: string;
  mgmtKubeconfig?: string;
  mgmtContext?: string;
}

const RBAC = 'rbac.authorization.k8s.io';
const SERVICE_ACCOUNTS = { group: '', version: 'v1', kind: 'ServiceAccount', resource: 'serviceaccounts', namespaced: true } as const;
const ROLES = { group: RBAC, version: 'v1', kind: 'Role', resource: 'roles', namespaced: true } as const;
const ROLE_BINDINGS = { group: RBAC, version: 'v1', kind: 'RoleBinding', resource: 'rolebindings', namespaced: true } as const;
/** The shortest token the API server issues (10 minutes). */
const MIN_TOKEN_SECONDS = 600;

/** What a pull cluster's identity may do, in its assignments namespace only (docs/pull.md says why each). */
export function pullAgentRules(): { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }[] {
  const read = ['get', 'list', 'watch'];
  return [
    { apiGroups: ['syncprims.dev'], resources: ['syncs'], verbs: [...read, 'patch', 'update'] },
    { apiGroups: ['syncprims.dev'], resources: ['syncs/status'], verbs: ['get', 'patch', 'update'] },
    { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: read },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: [...read, 'create'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['update', 'patch'], resourceNames: [PULL_LEASE] },
    { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'], resourceNames: [PULL_AGENT_ACCOUNT] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
  ];
}

/** The join bundle: a kubeconfig of the managing cluster (`server`, its CA) as the cluster's identity, in its assignments namespace. */
export function joinBundle(p: { cluster: string; inventoryNamespace: string; server: string; caData?: string; token: string }): string {
  const context = `syncprims-pull/${p.inventoryNamespace}/${p.cluster}`;
  const user = `syncprims-pull/${p.cluster}`;
  return toYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'managing-cluster', cluster: { server: p.server, ...(p.caData && { 'certificate-authority-data': p.caData }) } }],
    users: [{ name: user, user: { token: p.token } }],
    contexts: [{ name: context, context: { cluster: 'managing-cluster', user, namespace: assignmentNamespace(p.inventoryNamespace, p.cluster) } }],
    'current-context': context,
  });
}

/** `--token-ttl`: a duration of at least 10 minutes, in seconds. */
export function tokenSeconds(flag: string): number {
  let ms: number;
  try {
    ms = parseDuration(flag);
  } catch {
    throw new UsageError(`--token-ttl ${flag}: want a duration such as 24h`);
  }
  const seconds = Math.floor(ms / 1000);
  if (seconds < MIN_TOKEN_SECONDS) throw new UsageError(`--token-ttl ${flag}: want at least 10m (the API server issues no shorter token)`);
  return seconds;
}

export async function addPullCluster(name: string, flags: PullFlags): Promise<void> {
  if (!CLUSTER_NAME.test(name)) throw new UsageError(`cluster name ${name}: want a DNS label (at most 63 lower-case letters, digits and '-')`);
  const labels = parseLabels(flags.label);
  const annotations = valueAnnotations(flags.value);
  const ttl = tokenSeconds(flags.tokenTtl);
  const file = flags.joinFile ?? `${name}.join.yaml`;
  await withCluster({ kubeconfig: flags.mgmtKubeconfig, context: flags.mgmtContext, namespace: flags.namespace }, async ({ client, namespace }) => {
    const secret = `${name}-kubeconfig`;
    const path = objectPath(CORE.secrets, secret, namespace);
    const taken = (await readInventory(client, namespace)).find((c) => c.name === name && c.definedBy !== `Secret ${namespace}/${secret}`);
    if (taken) throw new CliError(`cluster name ${name} is taken in namespace ${namespace} by ${taken.definedBy}: choose another name, or remove that one first`);
    const existing = await getIfExists<KubeObject & { type?: string }>(client, path);
    if (existing && existing.type !== PULL_SECRET_TYPE) {
      throw new CliError(`Secret ${namespace}/${secret} exists and is not a pull cluster's registration (a push cluster's kubeconfig, or another Secret): left alone; delete it first to register ${name} as a pull cluster`);
    }
    const ans = assignmentNamespace(namespace, name);
    await apply(client, objectPath(CORE.namespaces, ans), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ans, labels: { [PULL_CLUSTER_LABEL]: name, [PULL_INVENTORY_LABEL]: namespace } } });
    await applyIdentity(client, ans);
    await apply(client, path, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: secret, namespace, labels: { ...labels, [CLUSTER_LABEL]: name, [CLUSTER_MODE_LABEL]: PULL_MODE }, ...(Object.keys(annotations).length > 0 && { annotations }) },
      type: PULL_SECRET_TYPE,
    });
    await removeValues(client, path, staleValueAnnotations(existing?.metadata.annotations, annotations));
    // Registered again after a revoke: a new identity (made above), no longer revoked.
    if (existing?.metadata.labels?.[REVOKED_AT_LABEL]) await client.request({ method: 'PATCH', path, contentType: 'application/merge-patch+json', body: { metadata: { labels: { [REVOKED_AT_LABEL]: null } } } });
    const token = await client.request<{ status: { token: string; expirationTimestamp: string } }>({
      method: 'POST',
      path: objectPath(SERVICE_ACCOUNTS, PULL_AGENT_ACCOUNT, ans, 'token'),
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: ttl } },
    });
    writeFileSync(file, joinBundle({ cluster: name, inventoryNamespace: namespace, ...managingCluster(client.kubeConfig), token: token.status.token }), { mode: 0o600 });
    const verb = existing ? 'updated' : 'registered';
    console.log(
      `pull cluster ${name} ${verb} in namespace ${namespace}: Secret ${secret} (no credential), assignments namespace ${ans}; join bundle ${file} (its token expires ${token.status.expirationTimestamp}; the cluster's operator renews it)${valuesNote(annotations)}`,
    );
  });
}

/** The ServiceAccount, Role and RoleBinding of the cluster's identity in its assignments namespace. */
async function applyIdentity(client: Requester, ans: string): Promise<void> {
  const meta = (name: string) => ({ name, namespace: ans });
  await apply(client, objectPath(SERVICE_ACCOUNTS, PULL_AGENT_ACCOUNT, ans), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(PULL_AGENT_ACCOUNT) });
  await apply(client, objectPath(ROLES, PULL_AGENT_ROLE, ans), { apiVersion: `${RBAC}/v1`, kind: 'Role', metadata: meta(PULL_AGENT_ROLE), rules: pullAgentRules() });
  await apply(client, objectPath(ROLE_BINDINGS, PULL_AGENT_ROLE, ans), {
    apiVersion: `${RBAC}/v1`,
    kind: 'RoleBinding',
    metadata: meta(PULL_AGENT_ROLE),
    roleRef: { apiGroup: RBAC, kind: 'Role', name: PULL_AGENT_ROLE },
    subjects: [{ kind: 'ServiceAccount', name: PULL_AGENT_ACCOUNT, namespace: ans }],
  });
}

/** The managing cluster's address and CA as the CLI reaches it: what the join bundle names. */
function managingCluster(kc: KubeConfig): { server: string; caData?: string } {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new CliError('the managing kubeconfig has no current cluster');
  return { server: cluster.server, caData: cluster.caData ?? (cluster.caFile ? readCa(cluster.caFile) : undefined) };
}

/** The CA file, read where it is named: the bundle goes to another machine, which does not have the file. */
function readCa(file: string): string {
  try {
    return readFileSync(file).toString('base64');
  } catch (err) {
    throw new CliError(`the managing kubeconfig names the CA ${file}, which cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

export async function revokePullCluster(name: string, flags: Pick<PullFlags, 'namespace' | 'mgmtKubeconfig' | 'mgmtContext'>): Promise<void> {
  await withCluster({ kubeconfig: flags.mgmtKubeconfig, context: flags.mgmtContext, namespace: flags.namespace }, async ({ client, namespace }) => {
    const path = objectPath(CORE.secrets, `${name}-kubeconfig`, namespace);
    const secret = await getIfExists<KubeObject & { type?: string }>(client, path);
    if (secret?.type !== PULL_SECRET_TYPE) throw new CliError(`${name} is not a pull cluster of namespace ${namespace} (no Secret ${name}-kubeconfig of type ${PULL_SECRET_TYPE}): nothing revoked`);
    const ans = assignmentNamespace(namespace, name);
    // The ServiceAccount first: its tokens stop working the moment it is gone.
    for (const p of [objectPath(SERVICE_ACCOUNTS, PULL_AGENT_ACCOUNT, ans), objectPath(ROLE_BINDINGS, PULL_AGENT_ROLE, ans), objectPath(ROLES, PULL_AGENT_ROLE, ans)]) {
      await client.request({ method: 'DELETE', path: p }).catch((err: unknown) => {
        if (!(err instanceof ApiError && err.status === 404)) throw err;
      });
    }
    const value = revokedAtValue(new Date());
    const at = revokedAtOf(value);
    await client.request({ method: 'PATCH', path, contentType: 'application/merge-patch+json', body: { metadata: { labels: { [REVOKED_AT_LABEL]: value } } } });
    console.log(`pull cluster ${name} of namespace ${namespace} revoked at ${at}: its identity (ServiceAccount ${ans}/${PULL_AGENT_ACCOUNT}) is deleted, every token of it refused; its assignments stay (register it again with syncprims cluster add ${name} --pull)`);
  });
}

async function apply(client: Requester, path: string, body: Record<string, unknown>): Promise<void> {
  await client.request({ method: 'PATCH', path, query: { fieldManager: CLI_FIELD_MANAGER, force: 'true' }, contentType: 'application/apply-patch+yaml', body });
}
