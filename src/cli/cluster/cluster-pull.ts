// `syncprims cluster add NAME --pull` and `syncprims cluster revoke NAME`
// (docs/pull.md): a cluster the managing cluster never dials. Registered by
// the Secret `<name>-kubeconfig` with no data (no credential of it is kept
// here), labelled as any cluster and `syncprims.dev/cluster-mode: pull`; its
// assignments namespace, and in it the identity of the cluster (a
// ServiceAccount with a Role there only); then the join bundle: a kubeconfig
// of the managing cluster with that identity's token, whose context names the
// assignments namespace. Revoking deletes the ServiceAccount (every token of
// it stops working at once), its Role and RoleBinding.
import { statSync } from 'node:fs';
import path from 'node:path';
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
import { writePrivateFile } from '../../runtime/private-file.js';
import { toYaml } from '../output.js';
import { CLI_FIELD_MANAGER, CLUSTER_NAME, parseLabels, removeValues, valuesNote } from './cluster-add.js';
import { inline } from './cluster-kubeconfig.js';
import { staleValueAnnotations, valueAnnotations } from './value-flags.js';

export interface PullFlags {
  label: string[];
  value: string[];
  namespace?: string;
  joinFile?: string;
  /** `--token-ttl` (default DEFAULT_TOKEN_TTL). */
  tokenTtl?: string;
  mgmtKubeconfig?: string;
  mgmtContext?: string;
}

/** The join bundle token's life when `--token-ttl` is not given. */
export const DEFAULT_TOKEN_TTL = '24h';

/** The flags of `cluster add` that decide its mode (the others are the same for both). */
export interface AddModeFlags {
  kubeconfig?: string;
  pull?: boolean;
  context?: string;
  joinFile?: string;
  tokenTtl?: string;
}

/**
 * Whether `cluster add` registers a push cluster (`--kubeconfig`) or a pull
 * one (`--pull`): exactly one of them, and no flag of the other mode (it
 * would be ignored, and the user would believe it was used).
 */
export function addMode(flags: AddModeFlags): 'push' | 'pull' {
  if (flags.pull && flags.kubeconfig !== undefined) throw new UsageError('--pull and --kubeconfig: a pull cluster keeps no kubeconfig here; give one of them');
  if (!flags.pull && flags.kubeconfig === undefined) throw new UsageError("want --kubeconfig (the cluster's kubeconfig), or --pull (a cluster that connects upward)");
  if (flags.pull) {
    if (flags.context !== undefined) throw new UsageError('--context names a context of --kubeconfig: a pull cluster has none (leave it out)');
    return 'pull';
  }
  const pullOnly = [flags.joinFile !== undefined && '--join-file', flags.tokenTtl !== undefined && '--token-ttl'].filter(Boolean);
  if (pullOnly.length > 0) throw new UsageError(`${pullOnly.join(' and ')}: only with --pull (a push cluster has no join bundle)`);
  return 'push';
}

const RBAC = 'rbac.authorization.k8s.io';
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

/** The managing cluster as the join bundle names it: its address, and how its certificate is checked. */
export interface ManagingCluster {
  server: string;
  /** Its CA (base64 PEM), inlined: the bundle goes to another machine. */
  caData?: string;
  tlsServerName?: string;
  skipTLSVerify?: boolean;
}

/** The join bundle: a kubeconfig of the managing cluster (`server`, its CA) as the cluster's identity, in its assignments namespace. */
export function joinBundle(p: ManagingCluster & { cluster: string; inventoryNamespace: string; token: string }): string {
  const context = `syncprims-pull/${p.inventoryNamespace}/${p.cluster}`;
  const user = `syncprims-pull/${p.cluster}`;
  const cluster = {
    server: p.server,
    ...(p.caData && { 'certificate-authority-data': p.caData }),
    ...(p.tlsServerName && { 'tls-server-name': p.tlsServerName }),
    ...(p.skipTLSVerify && { 'insecure-skip-tls-verify': true }),
  };
  return toYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'managing-cluster', cluster }],
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
  const ttl = tokenSeconds(flags.tokenTtl ?? DEFAULT_TOKEN_TTL);
  const file = flags.joinFile ?? `${name}.join.yaml`;
  checkJoinFile(file);
  await withCluster({ kubeconfig: flags.mgmtKubeconfig, context: flags.mgmtContext, namespace: flags.namespace }, async ({ client, namespace }) => {
    const secret = `${name}-kubeconfig`;
    const secretPath = objectPath(CORE.secrets, secret, namespace);
    const taken = (await readInventory(client, namespace)).find((c) => c.name === name && c.definedBy !== `Secret ${namespace}/${secret}`);
    if (taken) throw new CliError(`cluster name ${name} is taken in namespace ${namespace} by ${taken.definedBy}: choose another name, or remove that one first`);
    const existing = await getIfExists<KubeObject & { type?: string }>(client, secretPath);
    if (existing && existing.type !== PULL_SECRET_TYPE) {
      throw new CliError(`Secret ${namespace}/${secret} exists and is not a pull cluster's registration (a push cluster's kubeconfig, or another Secret): left alone; delete it first to register ${name} as a pull cluster`);
    }
    // Before anything is made: the assignments namespace of an inventory that does not exist would be left behind.
    if (!existing && !(await getIfExists(client, objectPath(CORE.namespaces, namespace)))) throw new CliError(`namespace ${namespace} does not exist: create it first (the inventory's clusters are registered in it)`);
    const ans = assignmentNamespace(namespace, name);
    await apply(client, objectPath(CORE.namespaces, ans), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ans, labels: { [PULL_CLUSTER_LABEL]: name, [PULL_INVENTORY_LABEL]: namespace } } });
    await applyIdentity(client, ans);
    await apply(client, secretPath, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: secret, namespace, labels: { ...labels, [CLUSTER_LABEL]: name, [CLUSTER_MODE_LABEL]: PULL_MODE }, ...(Object.keys(annotations).length > 0 && { annotations }) },
      type: PULL_SECRET_TYPE,
    });
    await removeValues(client, secretPath, staleValueAnnotations(existing?.metadata.annotations, annotations));
    // Registered again after a revoke: a new identity (made above), no longer revoked.
    if (existing?.metadata.labels?.[REVOKED_AT_LABEL]) await client.request({ method: 'PATCH', path: secretPath, contentType: 'application/merge-patch+json', body: { metadata: { labels: { [REVOKED_AT_LABEL]: null } } } });
    const token = await client.request<{ status: { token: string; expirationTimestamp: string } }>({
      method: 'POST',
      path: objectPath(CORE.serviceAccounts, PULL_AGENT_ACCOUNT, ans, 'token'),
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: ttl } },
    });
    const managing = managingCluster(client.kubeConfig);
    writePrivate(file, joinBundle({ cluster: name, inventoryNamespace: namespace, ...managing, token: token.status.token }));
    if (managing.skipTLSVerify) console.error(`warning: the managing kubeconfig skips TLS verification (insecure-skip-tls-verify), and so does the join bundle ${file}: its token goes to whoever answers at ${managing.server}`);
    const verb = existing ? 'updated' : 'registered';
    console.log(
      `pull cluster ${name} ${verb} in namespace ${namespace}: Secret ${secret} (no credential), assignments namespace ${ans}; join bundle ${file} (its token expires ${token.status.expirationTimestamp}; the cluster's operator renews it)${valuesNote(annotations)}`,
    );
  });
}

/** The ServiceAccount, Role and RoleBinding of the cluster's identity in its assignments namespace. */
async function applyIdentity(client: Requester, ans: string): Promise<void> {
  const meta = (name: string) => ({ name, namespace: ans });
  await apply(client, objectPath(CORE.serviceAccounts, PULL_AGENT_ACCOUNT, ans), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(PULL_AGENT_ACCOUNT) });
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
function managingCluster(kc: KubeConfig): ManagingCluster {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new CliError('the managing kubeconfig has no current cluster');
  return {
    server: cluster.server,
    // Read in where it is named: the bundle goes to another machine, which does not have the file.
    caData: cluster.caData ?? inline(cluster.caFile, 'the managing kubeconfig'),
    ...(cluster.tlsServerName && { tlsServerName: cluster.tlsServerName }),
    ...(cluster.skipTLSVerify && { skipTLSVerify: true }),
  };
}

/** Refuses, before anything is made, a join file that cannot be written: one in no directory, or a directory. */
function checkJoinFile(file: string): void {
  const dir = path.dirname(file);
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--join-file ${file}: ${dir} is not a directory`);
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--join-file ${file}: a directory; want a file name`);
}

/** Writes the join bundle (it holds a token) to `file`, readable by its owner only (writePrivateFile). */
export function writePrivate(file: string, text: string): void {
  try {
    writePrivateFile(file, text);
  } catch (err) {
    throw new CliError(`the join bundle ${file} cannot be written: ${(err as NodeJS.ErrnoException).code ?? String(err)} (the identity is made; run this again to issue another token)`);
  }
}

export async function revokePullCluster(name: string, flags: Pick<PullFlags, 'namespace' | 'mgmtKubeconfig' | 'mgmtContext'>): Promise<void> {
  await withCluster({ kubeconfig: flags.mgmtKubeconfig, context: flags.mgmtContext, namespace: flags.namespace }, async ({ client, namespace }) => {
    const secretPath = objectPath(CORE.secrets, `${name}-kubeconfig`, namespace);
    const secret = await getIfExists<KubeObject & { type?: string }>(client, secretPath);
    if (secret?.type !== PULL_SECRET_TYPE) {
      const what = secret ? `Secret ${name}-kubeconfig is of type ${secret.type ?? 'Opaque'}, not ${PULL_SECRET_TYPE}: a push cluster's kubeconfig, or another Secret` : `no Secret ${name}-kubeconfig`;
      throw new CliError(`${name} is not a pull cluster of namespace ${namespace} (${what}): nothing revoked`);
    }
    const ans = assignmentNamespace(namespace, name);
    // The ServiceAccount first: its tokens stop working the moment it is gone.
    for (const p of [objectPath(CORE.serviceAccounts, PULL_AGENT_ACCOUNT, ans), objectPath(ROLE_BINDINGS, PULL_AGENT_ROLE, ans), objectPath(ROLES, PULL_AGENT_ROLE, ans)]) {
      await client.request({ method: 'DELETE', path: p }).catch((err: unknown) => {
        if (!(err instanceof ApiError && err.status === 404)) throw err;
      });
    }
    // Revoked before: the time it was first revoked stays (what ran again found nothing left to delete).
    const before = revokedAtOf(secret.metadata.labels?.[REVOKED_AT_LABEL]);
    if (before) {
      console.log(`pull cluster ${name} of namespace ${namespace} was revoked at ${before} already: its identity stays deleted`);
      return;
    }
    const value = revokedAtValue(new Date());
    await client.request({ method: 'PATCH', path: secretPath, contentType: 'application/merge-patch+json', body: { metadata: { labels: { [REVOKED_AT_LABEL]: value } } } });
    console.log(
      `pull cluster ${name} of namespace ${namespace} revoked at ${revokedAtOf(value)}: its identity (ServiceAccount ${ans}/${PULL_AGENT_ACCOUNT}) is deleted, every token of it refused; its assignments stay (register it again with syncprims cluster add ${name} --pull)`,
    );
  });
}

async function apply(client: Requester, path: string, body: Record<string, unknown>): Promise<void> {
  await client.request({ method: 'PATCH', path, query: { fieldManager: CLI_FIELD_MANAGER, force: 'true' }, contentType: 'application/apply-patch+yaml', body });
}
