// `syncprims cluster add --pull`, `cluster revoke` and `get clusters` as a
// user runs them on mgmt (docs/pull.md): the objects made, the join bundle's
// token tried for real (what it may read, and what not), the LAST-SEEN of a
// Lease made with that token as the cluster's operator makes it, and the
// token refused once revoked. No operator runs: this is the CLI's part.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { chmodSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import {
  assignmentNamespace,
  CLUSTER_MODE_LABEL,
  PULL_AGENT_ACCOUNT,
  PULL_AGENT_ROLE,
  PULL_CLUSTER_LABEL,
  PULL_INVENTORY_LABEL,
  PULL_LEASE,
  PULL_SECRET_TYPE,
} from '../../src/clusters/pull-names.js';
import { REVOKED_AT_LABEL } from '../../src/clusters/pull-target.js';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfigFile } from '../../src/kube/config.js';
import { ApiError } from '../../src/kube/errors.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { assertCliBuilt, runCli, tableCells, tempDir } from '../support/cli.js';
import { clusterClient, closeClients, ensureClusters, kubeconfigPath } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { find } from '../support/syncs.js';

const MGMT = kubeconfigPath('mgmt');
const ns = useTestNamespace('mgmt', 'cli-pull');
const dir = tempDir('syncprims-cli-pull-');
const identities: KubeClient[] = [];
let mgmt: KubeClient;

const joinFile = (name: string): string => path.join(dir, `${name}.join.yaml`);
const ans = (name: string): string => assignmentNamespace(ns(), name);
const cli = (...args: string[]) => runCli([...args, '-n', ns(), '--mgmt-kubeconfig', MGMT]);
const addPull = (name: string, ...args: string[]) => cli('cluster', 'add', name, '--pull', '--join-file', joinFile(name), ...args);
const getClusters = (...args: string[]) => runCli(['get', 'clusters', '--kubeconfig', MGMT, '-n', ns(), ...args]);
const secretPath = (namespace: string, name: string) => `/api/v1/namespaces/${namespace}/secrets/${name}`;
const syncsPath = (namespace: string) => `/apis/syncprims.dev/v1alpha1/namespaces/${namespace}/syncs`;
const rbacPath = (namespace: string, kind: 'roles' | 'rolebindings', name: string) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/${kind}/${name}`;
const accountPath = (namespace: string) => `/api/v1/namespaces/${namespace}/serviceaccounts/${PULL_AGENT_ACCOUNT}`;
const leasePath = (namespace: string, name = '') => `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases${name && `/${name}`}`;

type Secret = KubeObject & { type?: string; data?: Record<string, string> };
type Bundle = {
  clusters: { name: string; cluster: Record<string, string> }[];
  users: { name: string; user: { token: string } }[];
  contexts: { name: string; context: { cluster: string; user: string; namespace: string } }[];
  'current-context': string;
};

/** A client of mgmt as the join bundle's identity (its token). */
async function identity(file: string): Promise<KubeClient> {
  const client = await KubeClient.create(`pull-identity-${identities.length}`, loadKubeConfigFile(file));
  identities.push(client);
  return client;
}

/** The HTTP status a request gets (200 or 201 when it succeeds). */
async function statusOf(client: KubeClient, p: string, method: 'GET' | 'POST' = 'GET', body?: unknown): Promise<number> {
  try {
    await client.request({ method, path: p, ...(body !== undefined && { body }) });
    return method === 'POST' ? 201 : 200;
  } catch (err) {
    if (err instanceof ApiError) return err.status;
    throw err;
  }
}

/** The `get clusters` row of `name`, by column name. */
async function clusterRow(name: string): Promise<Record<string, string>> {
  const listed = await getClusters();
  expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
  const [header, ...rows] = tableCells(listed.stdout);
  const row = rows.find((r) => r[0] === name);
  if (!row) throw new Error(`get clusters lists no ${name}:\n${listed.stdout}`);
  return Object.fromEntries(header!.map((h, i) => [h, row[i]!]));
}

async function clusterJson(name: string): Promise<Record<string, unknown>> {
  const listed = await getClusters('-o', 'json');
  expect(listed.code).toBe(0);
  const found = (JSON.parse(listed.stdout) as { clusters: Record<string, unknown>[] }).clusters.find((c) => c.name === name);
  if (!found) throw new Error(`get clusters -o json lists no ${name}`);
  return found;
}

/** The claims of a service account token (a JWT). */
function claims(token: string): { iat: number; exp: number; sub: string } {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { iat: number; exp: number; sub: string };
}

const managers = (o: KubeObject): string[] => ((o.metadata as { managedFields?: { manager: string; operation: string }[] }).managedFields ?? []).map((m) => `${m.manager}/${m.operation}`);

beforeAll(async () => {
  assertCliBuilt();
  await ensureClusters(['mgmt']);
  mgmt = await clusterClient('mgmt');
  await installCrds('mgmt');
});

afterAll(async () => {
  for (const c of identities) c.close();
  if (mgmt) for (const name of ['edge-7', 'edge-8', 'taken-p']) await mgmt.request({ method: 'DELETE', path: `/api/v1/namespaces/${ans(name)}` }).catch(() => undefined);
  await closeClients();
});

describe('syncprims cluster add --pull', () => {
  test('registers edge-7: the Secret with no data, its assignments namespace, the identity there, a join bundle of mode 0600', async () => {
    const added = await addPull('edge-7', '--label', 'env=prod', '--value', 'region=eu');
    expect({ code: added.code, stderr: added.stderr }).toEqual({ code: 0, stderr: '' });
    expect(added.stdout).toMatch(
      new RegExp(
        `^pull cluster edge-7 registered in namespace ${ns()}: Secret edge-7-kubeconfig \\(no credential\\), assignments namespace ${ans('edge-7')}; join bundle ${joinFile('edge-7').replace(/[.]/g, '\\.')} \\(its token expires (\\S+); .*\\n$`,
      ),
    );
    expect(added.stdout.split('\n')).toHaveLength(2);

    const secret = (await find<Secret>(mgmt, secretPath(ns(), 'edge-7-kubeconfig')))!;
    expect(secret.type).toBe(PULL_SECRET_TYPE);
    expect(secret.data).toBeUndefined();
    expect(secret.metadata.labels).toEqual({ 'syncprims.dev/cluster': 'edge-7', [CLUSTER_MODE_LABEL]: 'pull', env: 'prod' });
    expect(secret.metadata.annotations).toEqual({ 'values.syncprims.dev/region': 'eu' });
    expect(managers(secret)).toEqual(['syncprims-cli/Apply']);

    const namespace = (await find<KubeObject>(mgmt, `/api/v1/namespaces/${ans('edge-7')}`))!;
    expect(namespace.metadata.labels).toMatchObject({ [PULL_CLUSTER_LABEL]: 'edge-7', [PULL_INVENTORY_LABEL]: ns() });
    expect(managers(namespace)).toContain('syncprims-cli/Apply');
    expect(await find(mgmt, accountPath(ans('edge-7')))).toBeDefined();
    const role = (await find<KubeObject & { rules: unknown[] }>(mgmt, rbacPath(ans('edge-7'), 'roles', PULL_AGENT_ROLE)))!;
    expect(role.rules).toEqual([
      { apiGroups: ['syncprims.dev'], resources: ['syncs'], verbs: ['get', 'list', 'watch', 'patch', 'update'] },
      { apiGroups: ['syncprims.dev'], resources: ['syncs/status'], verbs: ['get', 'patch', 'update'] },
      { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch', 'create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['update', 'patch'], resourceNames: [PULL_LEASE] },
      { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'], resourceNames: [PULL_AGENT_ACCOUNT] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    ]);
    expect(managers(role)).toEqual(['syncprims-cli/Apply']);
    const binding = (await find<KubeObject & { roleRef: unknown; subjects: unknown[] }>(mgmt, rbacPath(ans('edge-7'), 'rolebindings', PULL_AGENT_ROLE)))!;
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: PULL_AGENT_ROLE });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: PULL_AGENT_ACCOUNT, namespace: ans('edge-7') }]);

    // The bundle: mgmt as the CLI reached it (its CA inline), the token, the assignments namespace.
    expect(statSync(joinFile('edge-7')).mode & 0o777).toBe(0o600);
    const text = readFileSync(joinFile('edge-7'), 'utf8');
    const bundle = parse(text) as Bundle;
    const home = loadKubeConfigFile(MGMT).getCurrentCluster()!;
    expect(bundle.clusters).toEqual([{ name: 'managing-cluster', cluster: { server: home.server, 'certificate-authority-data': home.caData } }]);
    expect(bundle.users.map((u) => u.name)).toEqual(['syncprims-pull/edge-7']);
    expect(bundle.contexts).toEqual([{ name: `syncprims-pull/${ns()}/edge-7`, context: { cluster: 'managing-cluster', user: 'syncprims-pull/edge-7', namespace: ans('edge-7') } }]);
    expect(bundle['current-context']).toBe(`syncprims-pull/${ns()}/edge-7`);
    const token = bundle.users[0]!.user.token;
    expect(added.stdout).not.toContain(token);
    const c = claims(token);
    expect(c.sub).toBe(`system:serviceaccount:${ans('edge-7')}:${PULL_AGENT_ACCOUNT}`);
    expect(c.exp - c.iat).toBe(86_400);
    const expires = /its token expires (\S+);/.exec(added.stdout)![1]!;
    expect(Date.parse(expires) / 1000).toBe(c.exp);
  });

  test("the bundle's token reads its own assignments, and no syncs or Secrets of the inventory, nor another pull cluster's assignments (403s)", async () => {
    const added = await addPull('edge-8', '--token-ttl', '1h');
    expect({ code: added.code, stderr: added.stderr }).toEqual({ code: 0, stderr: '' });
    const eight = parse(readFileSync(joinFile('edge-8'), 'utf8')) as Bundle;
    const c = claims(eight.users[0]!.user.token);
    expect(c.exp - c.iat).toBe(3_600);

    const seven = await identity(joinFile('edge-7'));
    expect(await statusOf(seven, syncsPath(ans('edge-7')))).toBe(200);
    expect(await statusOf(seven, `/api/v1/namespaces/${ans('edge-7')}/secrets`)).toBe(200);
    expect(await statusOf(seven, syncsPath(ns()))).toBe(403);
    expect(await statusOf(seven, `/api/v1/namespaces/${ns()}/secrets`)).toBe(403);
    expect(await statusOf(seven, secretPath(ns(), 'edge-7-kubeconfig'))).toBe(403);
    expect(await statusOf(seven, syncsPath(ans('edge-8')))).toBe(403);
    expect(await statusOf(seven, `/api/v1/namespaces/${ans('edge-8')}/secrets`)).toBe(403);
    expect(await statusOf(seven, '/apis/syncprims.dev/v1alpha1/syncs')).toBe(403);
    // Its own token only: not one for the other cluster's identity.
    const tokenRequest = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } };
    expect(await statusOf(seven, `${accountPath(ans('edge-8'))}/token`, 'POST', tokenRequest)).toBe(403);
    expect(await statusOf(seven, `${accountPath(ans('edge-7'))}/token`, 'POST', tokenRequest)).toBe(201);

    const other = await identity(joinFile('edge-8'));
    expect(await statusOf(other, syncsPath(ans('edge-8')))).toBe(200);
    expect(await statusOf(other, syncsPath(ans('edge-7')))).toBe(403);
  });

  test('get clusters: MODE pull, LAST-SEEN never; once the Lease is made with the token, its age', async () => {
    expect(await clusterRow('edge-7')).toMatchObject({ SOURCE: 'Secret', MODE: 'pull', REACHABLE: '-', 'LAST-SEEN': 'never', LABELS: 'env=prod', PROBLEM: '-' });
    expect(await clusterJson('edge-7')).toMatchObject({ mode: 'pull', lastSeen: null });
    expect((await clusterJson('edge-7')).revokedAt).toBeUndefined();

    // As the cluster's operator does: its Lease, made and renewed with its own token.
    const seven = await identity(joinFile('edge-7'));
    const renewTime = new Date(Date.now() - 3_000).toISOString().replace('Z', '000Z');
    await seven.request({
      method: 'POST',
      path: leasePath(ans('edge-7')),
      body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: PULL_LEASE }, spec: { holderIdentity: 'edge-7', leaseDurationSeconds: 30, renewTime } },
    });
    const row = await clusterRow('edge-7');
    expect(row['LAST-SEEN']).toMatch(/^([3-9]|[1-9][0-9])s$/);
    expect((await clusterJson('edge-7')).lastSeen).toBe(new Date(Date.parse(renewTime)).toISOString());
    // Its Lease only: not another of that namespace.
    expect(await statusOf(seven, leasePath(ans('edge-7'), 'someone-else'), 'GET')).toBe(404);
    await mgmt.request({ method: 'POST', path: leasePath(ans('edge-7')), body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'someone-else' }, spec: {} } });
    await expect(seven.request({ method: 'PATCH', path: leasePath(ans('edge-7'), 'someone-else'), contentType: 'application/merge-patch+json', body: { spec: { holderIdentity: 'x' } } })).rejects.toMatchObject({ status: 403 });
    // A push cluster beside it: push, no LAST-SEEN.
    expect((await cli('cluster', 'add', 'edge-1', '--kubeconfig', MGMT)).code).toBe(0);
    expect(await clusterRow('edge-1')).toMatchObject({ MODE: 'push', 'LAST-SEEN': '-' });
    expect(await clusterJson('edge-1')).toMatchObject({ mode: 'push', lastSeen: null });
  });

  test('tree of a ProxySync on a pull cluster says where its Sync is followed (never dialled), not that its Secret has no key', async () => {
    await mgmt.request({
      method: 'POST',
      path: `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/proxysyncs`,
      body: { apiVersion: 'syncprims.dev/v1alpha1', kind: 'ProxySync', metadata: { name: 'app' }, spec: { clusterRef: { name: 'edge-7' }, template: { spec: { source: { inline: [] } } } } },
    });
    const tree = await runCli(['tree', 'proxysync/app', '-n', ns(), '--kubeconfig', MGMT]);
    expect(tree.stdout).toContain(`cluster edge-7 is a pull cluster (never dialled: its own operator keeps its Syncs there); their assignments and status are in namespace ${ans('edge-7')} of this cluster`);
    expect(tree.stdout + tree.stderr).not.toContain('has no key');
  });

  test('refused: --pull with --kubeconfig; a push cluster turned pull or back; a name another source has (nothing made)', async () => {
    const both = await cli('cluster', 'add', 'edge-9', '--pull', '--kubeconfig', MGMT);
    expect({ code: both.code, stderr: both.stderr.trim() }).toEqual({ code: 2, stderr: 'syncprims: --pull and --kubeconfig: a pull cluster keeps no kubeconfig here; give one of them' });
    const neither = await cli('cluster', 'add', 'edge-9');
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('want --kubeconfig');

    const toPull = await addPull('edge-1');
    expect(toPull.code).toBe(1);
    expect(toPull.stderr).toContain(`Secret ${ns()}/edge-1-kubeconfig exists and is not a pull cluster's registration`);
    expect(toPull.stderr).toContain('delete it first');
    const pushSecret = (await find<Secret>(mgmt, secretPath(ns(), 'edge-1-kubeconfig')))!;
    expect(pushSecret.type).toBe('Opaque');
    expect(Object.keys(pushSecret.data ?? {})).toEqual(['value']);
    expect(await find(mgmt, `/api/v1/namespaces/${ans('edge-1')}`)).toBeUndefined();

    const toPush = await cli('cluster', 'add', 'edge-7', '--kubeconfig', MGMT);
    expect(toPush.code).toBe(1);
    expect(toPush.stderr).toContain(`cluster edge-7 is registered as a pull cluster (Secret ${ns()}/edge-7-kubeconfig): left alone`);
    const pullSecret = (await find<Secret>(mgmt, secretPath(ns(), 'edge-7-kubeconfig')))!;
    expect({ type: pullSecret.type, data: pullSecret.data }).toEqual({ type: PULL_SECRET_TYPE, data: undefined });

    await mgmt.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns()}/secrets`,
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'someone-elses', labels: { 'syncprims.dev/cluster': 'taken-p' } }, data: { value: '' } },
    });
    const taken = await addPull('taken-p');
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`cluster name taken-p is taken in namespace ${ns()} by Secret ${ns()}/someone-elses`);
    expect(await find(mgmt, secretPath(ns(), 'taken-p-kubeconfig'))).toBeUndefined();
    expect(await find(mgmt, `/api/v1/namespaces/${ans('taken-p')}`)).toBeUndefined();

    const nowhere = await runCli(['cluster', 'add', 'edge-9', '--pull', '--join-file', joinFile('edge-9'), '-n', `${ns()}-none`, '--mgmt-kubeconfig', MGMT]);
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toContain(`namespace ${ns()}-none does not exist: create it first`);
    expect(await find(mgmt, `/api/v1/namespaces/${assignmentNamespace(`${ns()}-none`, 'edge-9')}`)).toBeUndefined();

    const label = await addPull('edge-9', '--label', `${CLUSTER_MODE_LABEL}=push`);
    expect(label.code).toBe(2);
    expect(await find(mgmt, `/api/v1/namespaces/${ans('edge-9')}`)).toBeUndefined();
  });
});

describe('syncprims cluster revoke', () => {
  test("the token is refused within seconds; get clusters says revoked; the namespace, the Lease and the other cluster's identity stay", async () => {
    const seven = await identity(joinFile('edge-7'));
    const other = await identity(joinFile('edge-8'));
    expect(await statusOf(seven, syncsPath(ans('edge-7')))).toBe(200);

    const revoked = await cli('cluster', 'revoke', 'edge-7');
    expect({ code: revoked.code, stderr: revoked.stderr }).toEqual({ code: 0, stderr: '' });
    expect(revoked.stdout).toMatch(new RegExp(`^pull cluster edge-7 of namespace ${ns()} revoked at \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ: `));
    const refused = Date.now();
    await eventually('the revoked token refused (401)', async () => ((await statusOf(seven, syncsPath(ans('edge-7')))) === 401 ? true : undefined), 30_000, 250);
    expect(Date.now() - refused).toBeLessThan(30_000);

    expect(await find(mgmt, accountPath(ans('edge-7')))).toBeUndefined();
    expect(await find(mgmt, rbacPath(ans('edge-7'), 'roles', PULL_AGENT_ROLE))).toBeUndefined();
    expect(await find(mgmt, rbacPath(ans('edge-7'), 'rolebindings', PULL_AGENT_ROLE))).toBeUndefined();
    expect(await find(mgmt, `/api/v1/namespaces/${ans('edge-7')}`)).toBeDefined();
    expect(await find(mgmt, leasePath(ans('edge-7'), PULL_LEASE))).toBeDefined();
    const secret = (await find<Secret>(mgmt, secretPath(ns(), 'edge-7-kubeconfig')))!;
    const at = secret.metadata.labels?.[REVOKED_AT_LABEL];
    expect(at).toMatch(/^\d+$/);
    expect(Math.abs(Number(at) * 1000 - refused)).toBeLessThan(60_000);

    expect(await clusterRow('edge-7')).toMatchObject({ MODE: 'pull', 'LAST-SEEN': 'revoked', LABELS: 'env=prod' });
    expect((await clusterJson('edge-7')).revokedAt).toBe(new Date(Number(at) * 1000).toISOString().replace('.000Z', 'Z'));
    expect(await statusOf(other, syncsPath(ans('edge-8')))).toBe(200);

    // Again: nothing left to delete, the first time kept.
    const again = await cli('cluster', 'revoke', 'edge-7');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('was revoked at');
    expect((await find<Secret>(mgmt, secretPath(ns(), 'edge-7-kubeconfig')))!.metadata.labels?.[REVOKED_AT_LABEL]).toBe(at);
  }, 60_000);

  test('a name that is not a pull cluster: refused, nothing changed', async () => {
    const push = await cli('cluster', 'revoke', 'edge-1');
    expect(push.code).toBe(1);
    expect(push.stderr).toContain(`edge-1 is not a pull cluster of namespace ${ns()} (Secret edge-1-kubeconfig is of type Opaque`);
    expect((await find<Secret>(mgmt, secretPath(ns(), 'edge-1-kubeconfig')))!.metadata.labels?.[REVOKED_AT_LABEL]).toBeUndefined();
    const none = await cli('cluster', 'revoke', 'nowhere');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`nowhere is not a pull cluster of namespace ${ns()} (no Secret nowhere-kubeconfig)`);
  });

  test('cluster add --pull again: a new identity, no longer revoked, labels and values as given; the old token stays refused', async () => {
    chmodSync(joinFile('edge-7'), 0o644);
    const old = await identity(joinFile('edge-7'));
    const added = await addPull('edge-7');
    expect({ code: added.code, stderr: added.stderr }).toEqual({ code: 0, stderr: '' });
    expect(added.stdout).toContain(`pull cluster edge-7 updated in namespace ${ns()}`);
    expect(statSync(joinFile('edge-7')).mode & 0o777).toBe(0o600);

    const secret = (await find<Secret>(mgmt, secretPath(ns(), 'edge-7-kubeconfig')))!;
    expect(secret.metadata.labels).toEqual({ 'syncprims.dev/cluster': 'edge-7', [CLUSTER_MODE_LABEL]: 'pull' });
    expect(secret.metadata.annotations ?? {}).toEqual({});
    const renewed = await identity(joinFile('edge-7'));
    expect(await statusOf(renewed, syncsPath(ans('edge-7')))).toBe(200);
    expect(await statusOf(old, syncsPath(ans('edge-7')))).toBe(401);
    const row = await clusterRow('edge-7');
    expect(row['LAST-SEEN']).not.toBe('revoked');
    expect(row['LAST-SEEN']).toMatch(/^\d+(s|m\d*s?)$/);
  });
});
