// ProxySync on an edge shared by tenants (mgmt and edge-1; no operator runs
// in edge-1, so the remote Syncs' statuses are only what the test writes):
// with --default-service-account the operator writes there as the tenant's
// account, in the tenant's namespace only, and refuses adopt; with or without
// it, another party's objects without owner labels are left alone unless the
// ProxySync says adopt; and a forged remote status neither makes a ProxySync
// Ready nor carries control sequences into its status.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import { writesSince } from '../support/audit.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { closeClients, clusterClient, ensureClusters, kubeconfigPath } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { bindRole, PROXYSYNC_WRITER_RULES } from '../support/rbac.js';
import { useRemoteNamespace } from '../support/remote-namespace.js';
import { applyProxySync, kubeconfigOf, PROXYSYNCS, putKubeconfigSecret } from '../support/remote.js';
import { applySync, eventOf, find, getSync, readyOf, syncPath, waitForReady, type SyncObject } from '../support/syncs.js';

const HOME = 'mgmt';
const EDGE = 'edge-1';
const CLUSTER_ID = 'mgmt-tenancy';
const OPERATOR_UA = 'syncprims-operator';
/** A tenant of the operator that impersonates (--default-service-account default). */
const tenant = useTestNamespace(HOME, 'pst-tenant');
/** Another party: its namespace in edge-1 holds objects of its own, made by hand (no owner labels). */
const other = useTestNamespace(HOME, 'pst-other');
/** A namespace of an operator that does not impersonate (the single-tenant mode). */
const single = useTestNamespace(HOME, 'pst-single');
useRemoteNamespace(EDGE, tenant);
useRemoteNamespace(EDGE, other);
let mgmt: KubeClient;
let edge: KubeClient;
let multi: OperatorProcess;
let plain: OperatorProcess;

const manifest = (name: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;
const cmPath = (namespace: string, name: string): string => `/api/v1/namespaces/${namespace}/configmaps/${name}`;
const secretPath = (namespace: string, name: string): string => `/api/v1/namespaces/${namespace}/secrets/${name}`;
const proxyReady = (namespace: string, name: string, status: 'True' | 'False' | 'Unknown', reason?: string): Promise<SyncObject> =>
  waitForReady(mgmt, namespace, name, status, reason, 60_000, PROXYSYNCS);
type Obj = { metadata: { resourceVersion?: string; labels?: Record<string, string> }; data?: Record<string, string>; spec?: Record<string, unknown> };

/** The other party's objects in edge-1, as they are: each must stay exactly so. */
async function othersObjects(): Promise<(Obj | undefined)[]> {
  return Promise.all([find<Obj>(edge, cmPath(other(), 'shared-cm')), find<Obj>(edge, secretPath(other(), 'shared-secret')), find<Obj>(edge, syncPath(other(), 'shared'))]);
}

/** `syncprims diff` of a ProxySync, as its operator would judge it (the same cluster id; `more`: the same account flag). */
const diff = (namespace: string, name: string, ...more: string[]) =>
  runCli(['diff', `psy/${name}`, '-n', namespace, '--kubeconfig', kubeconfigPath(HOME), '--cluster-id', CLUSTER_ID, ...more]);

beforeAll(async () => {
  assertCliBuilt();
  await ensureClusters([HOME, EDGE]);
  [mgmt, edge] = await Promise.all([clusterClient(HOME), clusterClient(EDGE)]);
  await installCrds(HOME);
  const admin = await kubeconfigOf(EDGE);
  await Promise.all([putKubeconfigSecret(mgmt, tenant(), 'edge-1-kubeconfig', admin), putKubeconfigSecret(mgmt, single(), 'edge-1-kubeconfig', admin)]);
  // The tenant's default account: it reads its sources in mgmt, and writes its remote Sync and copies in its namespace of edge-1.
  await bindRole(mgmt, tenant(), 'source-reader', [{ apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get'] }], { name: 'default', namespace: tenant() });
  await bindRole(edge, tenant(), 'proxysync-writer', PROXYSYNC_WRITER_RULES, { name: 'default', namespace: tenant() });
  // The other party's account in edge-1, and its own objects there.
  await edge.request({ method: 'POST', path: `/api/v1/namespaces/${other()}/serviceaccounts`, body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'deployer' } } });
  await edge.request({ method: 'POST', path: `/api/v1/namespaces/${other()}/configmaps`, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared-cm' }, data: { owner: 'other' } } });
  await edge.request({ method: 'POST', path: `/api/v1/namespaces/${other()}/secrets`, body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'shared-secret' }, stringData: { owner: 'other' } } });
  await applySync(edge, other(), 'shared', { serviceAccountName: 'deployer', source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'theirs' } }] } });
  // Sources in mgmt: named as the other party's objects in edge-1, for the ProxySyncs that would take them over.
  const sources = [
    { ns: tenant(), kind: 'ConfigMap', name: 'app-cm' },
    { ns: single(), kind: 'ConfigMap', name: 'shared-cm' },
    { ns: single(), kind: 'Secret', name: 'shared-secret' },
  ];
  for (const s of sources) {
    const path = s.kind === 'Secret' ? `/api/v1/namespaces/${s.ns}/secrets` : `/api/v1/namespaces/${s.ns}/configmaps`;
    const body = s.kind === 'Secret' ? { stringData: { value: manifest(`${s.name}-made`) } } : { data: { value: manifest(`${s.name}-made`) } };
    await mgmt.request({ method: 'POST', path, body: { apiVersion: 'v1', kind: s.kind, metadata: { name: s.name }, ...body } });
  }
  const common = ['--cluster-id', CLUSTER_ID, '--log-level', 'debug'];
  [multi, plain] = await Promise.all([
    OperatorProcess.start(HOME, ['--namespace', tenant(), '--default-service-account', 'default', ...common]),
    OperatorProcess.start(HOME, ['--namespace', single(), ...common]),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([multi?.stop('SIGTERM'), plain?.stop('SIGTERM')]);
  await closeClients();
});

describe('with --default-service-account (the multi-tenant mode)', () => {
  test("the remote Sync and its copy are written as the tenant's account, in its namespace, naming that account; edge-1's audit log says so", async () => {
    const since = new Date(Date.now() - 1000);
    await applyProxySync(mgmt, tenant(), 'app', { clusterRef: { name: 'edge-1' }, template: { spec: { source: { configMap: { name: 'app-cm' } } } } });
    // No operator runs in edge-1: the ProxySync waits for its remote Sync to observe what it was given.
    const waiting = await proxyReady(tenant(), 'app', 'Unknown', 'RemoteNotReady');
    expect(readyOf(waiting)?.message).toContain('to observe generation 1');
    const remote = await find<Obj>(edge, syncPath(tenant(), 'app'));
    expect(remote?.spec?.serviceAccountName).toBe('default');
    expect((await find<Obj>(edge, cmPath(tenant(), 'app-cm')))?.metadata.labels).toMatchObject({ 'syncprims.dev/owner-name': 'app', 'syncprims.dev/origin': CLUSTER_ID });
    const writes = (await writesSince(EDGE, since, OPERATOR_UA)).filter((e) => e.objectRef?.namespace === tenant() || e.objectRef?.name === tenant());
    expect([...new Set(writes.map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name}`))].sort()).toEqual(['patch configmaps/app-cm', 'patch syncs/app']);
    expect(writes.map((e) => e.impersonatedUser?.username)).toEqual(writes.map(() => `system:serviceaccount:${tenant()}:default`));
  });

  test("a remote Sync in another namespace (to run as that namespace's account), or adopt: true, is refused before anything is written there", async () => {
    const before = await othersObjects();
    const since = new Date(Date.now() - 1000);
    await applyProxySync(mgmt, tenant(), 'reach', {
      clusterRef: { name: 'edge-1' },
      template: { metadata: { namespace: other(), name: 'shared' }, spec: { serviceAccountName: 'deployer', source: { configMap: { name: 'app-cm' } } } },
    });
    const reach = await proxyReady(tenant(), 'reach', 'False', 'InvalidSpec');
    expect(readyOf(reach)?.message).toContain(`spec.template.metadata.namespace ${other()}: when the operator impersonates (--default-service-account default: the multi-tenant mode)`);
    expect(reach.status?.conditions?.find((c) => c.type === 'Stalled')).toMatchObject({ status: 'True', reason: 'InvalidSpec' });
    await applyProxySync(mgmt, tenant(), 'grab', { clusterRef: { name: 'edge-1' }, adopt: true, template: { spec: { source: { configMap: { name: 'app-cm' } } } } });
    expect(readyOf(await proxyReady(tenant(), 'grab', 'False', 'InvalidSpec'))?.message).toMatch(/^spec\.adopt: true is refused when the operator impersonates/);
    await eventOf(mgmt, tenant(), 'grab', 'InvalidSpec', 'Warning');
    expect(await othersObjects()).toEqual(before);
    expect(await find(edge, syncPath(tenant(), 'grab'))).toBeUndefined();
    // `diff` says the same, as the operator's flag makes it.
    expect((await diff(tenant(), 'grab', '--default-service-account', 'default')).stderr).toMatch(/: spec\.adopt: true is refused when the operator impersonates .* \(the operator reports InvalidSpec\)\n$/);
    expect((await writesSince(EDGE, since, OPERATOR_UA)).filter((e) => e.objectRef?.namespace === other() || e.objectRef?.name === 'grab')).toEqual([]);
  });

  test('a forged remote status: a Ready that does not hold together counts for nothing; a reason and message with escape sequences arrive stripped', async () => {
    const remote = (await find<Obj & { metadata: { generation: number; annotations?: Record<string, string> } }>(edge, syncPath(tenant(), 'app')))!;
    const generation = remote.metadata.generation;
    // A thorough forger: the generation and the mark it was given (the content of its copy) echoed too.
    const lastHandledReconcileAt = remote.metadata.annotations?.['syncprims.dev/reconcile-requested-at'];
    expect(lastHandledReconcileAt).toMatch(/^syncprims:/);
    const forge = (status: Record<string, unknown>) =>
      edge.request({ method: 'PATCH', path: `${syncPath(tenant(), 'app')}/status`, contentType: 'application/merge-patch+json', body: { status } });
    const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const condition = (type: string, status: string, reason: string, message: string) => ({ type, status, reason, message, observedGeneration: generation, lastTransitionTime: at });
    // Ready, for the generation given, but with a revision other than the one it says it attempted.
    await forge({ observedGeneration: generation, lastHandledReconcileAt, lastAttemptedRevision: 'sha256:attempted', lastAppliedRevision: 'sha256:forged', conditions: [condition('Ready', 'True', 'Succeeded', 'applied revision sha256:forged')] });
    const notCounted = await eventually('the forged Ready not counted', async () => {
      const s = await getSync(mgmt, tenant(), 'app', PROXYSYNCS);
      return readyOf(s)?.message.includes('not counted') ? s : undefined;
    });
    expect(readyOf(notCounted)).toMatchObject({ status: 'Unknown', reason: 'RemoteNotReady' });
    expect(readyOf(notCounted)?.message).toContain('it says Ready with lastAppliedRevision sha256:forged and lastAttemptedRevision sha256:attempted');
    // A Stalled whose reason and message would erase a line on a terminal and rewrite it in green.
    const erase = '\u001b[1A\u001b[2K\r\u001b[32m';
    await forge({ lastAppliedRevision: 'sha256:attempted', conditions: [condition('Ready', 'False', `${erase}Halted`, `${erase}every cluster Ready`), condition('Stalled', 'True', `${erase}Halted`, `${erase}every cluster Ready`)] });
    const stalled = await proxyReady(tenant(), 'app', 'False', 'Halted');
    expect(readyOf(stalled)?.message).toBe('every cluster Ready');
    expect(stalled.status?.conditions?.find((c) => c.type === 'Stalled')).toMatchObject({ status: 'True', reason: 'Halted', message: 'every cluster Ready' });
    expect(JSON.stringify(stalled.status)).not.toContain('\\u001b');
    expect(JSON.stringify(stalled.status)).not.toContain('\\r');
    expect((await eventOf(mgmt, tenant(), 'app', 'Halted', 'Warning')).message).toBe('every cluster Ready');
  });
});

describe('without it (the single-tenant mode)', () => {
  test("another party's ConfigMap, Secret and Sync without owner labels are left alone: OwnershipConflict naming each, nothing written to them", async () => {
    const before = await othersObjects();
    const cluster = `${single()}/edge-1-kubeconfig`;
    const into = (spec: Record<string, unknown>, name?: string) => ({ clusterRef: { name: 'edge-1' }, template: { metadata: { namespace: other(), ...(name ? { name } : {}) }, spec } });
    await applyProxySync(mgmt, single(), 'take-cm', into({ source: { configMap: { name: 'shared-cm' } } }));
    await applyProxySync(mgmt, single(), 'take-secret', into({ source: { secret: { name: 'shared-secret' } } }));
    await applyProxySync(mgmt, single(), 'take-sync', into({ serviceAccountName: 'deployer', source: { inline: [] } }, 'shared'));
    const cases: [string, string][] = [
      ['take-cm', `ConfigMap ${other()}/shared-cm in cluster ${cluster}`],
      ['take-secret', `Secret ${other()}/shared-secret in cluster ${cluster}`],
      ['take-sync', `the Sync ${other()}/shared in cluster ${cluster}`],
    ];
    for (const [name, what] of cases) {
      const conflict = await proxyReady(single(), name, 'False', 'OwnershipConflict');
      expect(readyOf(conflict)?.message).toBe(
        `${what} carries no syncprims owner labels (made by someone else, or by hand): left alone, neither changed nor deleted; delete it there, or set spec.adopt: true to take it over (refused when the operator impersonates)`,
      );
      expect((await eventOf(mgmt, single(), name, 'OwnershipConflict', 'Warning')).message).toBe(readyOf(conflict)?.message);
      await plain.waitForLog(`the conflict of ${name} logged`, (l) => l.name === name && l.reason === 'OwnershipConflict' && l.msg === 'cannot go on');
    }
    // `diff` says the same of each.
    expect((await diff(single(), 'take-secret')).stderr).toContain(`Secret ${other()}/shared-secret carries no syncprims owner labels: left alone (OwnershipConflict; spec.adopt: true takes it over)`);
    expect((await diff(single(), 'take-sync')).stderr).toContain(`Sync ${other()}/shared carries no syncprims owner labels: left alone (OwnershipConflict; spec.adopt: true takes it over)`);
    expect(await othersObjects()).toEqual(before);
    // Nothing of ours was made beside them either (the copies come before the remote Sync).
    expect(await find(edge, syncPath(other(), 'take-cm'))).toBeUndefined();
    expect(await find(edge, syncPath(other(), 'take-secret'))).toBeUndefined();
  });

  test('with spec.adopt: true, the unowned ConfigMap is taken over: our marks and the content of its source', async () => {
    await applyProxySync(mgmt, single(), 'take-cm', { clusterRef: { name: 'edge-1' }, adopt: true, template: { metadata: { namespace: other() }, spec: { source: { configMap: { name: 'shared-cm' } } } } });
    const adopted = await eventually('the ConfigMap adopted', async () => {
      const cm = await find<Obj>(edge, cmPath(other(), 'shared-cm'));
      return cm?.metadata.labels?.['syncprims.dev/owner-name'] === 'take-cm' ? cm : undefined;
    });
    expect(adopted.metadata.labels).toMatchObject({ 'syncprims.dev/owner-kind': 'ProxySync', 'syncprims.dev/owner-namespace': single(), 'syncprims.dev/origin': CLUSTER_ID });
    expect(adopted.data?.value).toBe(manifest('shared-cm-made'));
    // The copy is written before the remote Sync (see above): the Sync follows it, so it is waited for.
    const remote = await eventually('the remote Sync made', async () => find<Obj>(edge, syncPath(other(), 'take-cm')));
    expect(remote.metadata.labels?.['syncprims.dev/owner-name']).toBe('take-cm');
    // The others stay refused: adopt is per ProxySync.
    expect(readyOf(await getSync(mgmt, single(), 'take-secret', PROXYSYNCS))?.reason).toBe('OwnershipConflict');
  });
});
