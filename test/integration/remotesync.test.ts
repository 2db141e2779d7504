// RemoteSync through a running operator in mgmt, applying to edge-1 and
// edge-2: cluster references, late and rotated Secrets, hostile kubeconfigs,
// isolation from a cluster that is down, and deletion.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { KubeClient } from '../../src/kube/client.js';
import { bindRole } from '../support/rbac.js';
import { clusterApiClusterPath, createHeldCluster, installClusterApiCrd, releaseCluster } from '../support/cluster-api.js';
import { clusterClient } from '../support/controlplane.js';
import { schemalessCrd } from '../support/crds.js';
import { eventually, steady } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { OperatorProcess, type LogLine } from '../support/operator.js';
import { applyProxySync, applyRemoteSync, getRemoteSync, kubeconfigOf, PROXYSYNCS, putKubeconfigSecret, REMOTESYNCS, serviceAccountKubeconfig, useClusterProxy, waitForRemoteReady } from '../support/remote.js';
import { StallingProxy } from '../support/stalling-proxy.js';
import { writesSince } from '../support/audit.js';
import { eventsFor, find, readyOf, syncPath, waitForReady } from '../support/syncs.js';
import { startTlsServer, type TlsServer } from '../support/tls-server.js';

const HOME = 'mgmt';
let mgmt: KubeClient;
let edge1: KubeClient;
let edge2: KubeClient;
let op: OperatorProcess;
const CLUSTER_ID = 'mgmt-under-test';
/** The operator's flags past --namespace (a short --lost-cluster-grace, so a deletion whose Secret and cluster are gone lets go soon). */
const FLAGS = ['--log-level', 'debug', '--cluster-id', CLUSTER_ID, '--lost-cluster-grace', '5s'];
// (An operator a test starts in its place is stopped with the namespace, before the edges' namespaces go.)
const ns = useOperatedNamespace(HOME, 'rsync', (o) => ({ client: mgmt, op } = o), FLAGS);
const edgeNs = useTestNamespace('edge-1', 'rsedge');
const edge2Ns = useTestNamespace('edge-2', 'rsedge2');
const flags = (...extra: string[]): string[] => ['--namespace', ns(), ...FLAGS, ...extra];

beforeAll(async () => {
  [edge1, edge2] = await Promise.all([clusterClient('edge-1'), clusterClient('edge-2')]);
  await putKubeconfigSecret(mgmt, ns(), 'edge-1-kubeconfig', await kubeconfigOf('edge-1'));
}, 120_000);

const configMap = (namespace: string, name: string, value = 'v1') => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { value } });
const cmPath = (namespace: string, name: string): string => `/api/v1/namespaces/${namespace}/configmaps/${name}`;
type CM = { data?: Record<string, string>; metadata: { labels?: Record<string, string> } };

const reconciledLines = (name: string): LogLine[] =>
  op.logs.filter((l) => l.msg === 'reconciled' && l.kind === 'RemoteSync' && l.namespace === ns() && l.name === name);

describe('applying to a remote cluster', () => {
  test('clusterRef: applies to edge-1 only, corrects drift (on request, and at once by watch, its Event naming who), prunes, and deletion removes its objects there', async () => {
    const created = new Date(Date.now() - 1000);
    await applyRemoteSync(mgmt, ns(), 'app', { clusterRef: { name: 'edge-1' }, source: { inline: [configMap(edgeNs(), 'a'), configMap(edgeNs(), 'b')] } });
    const ready = await waitForRemoteReady(mgmt, ns(), 'app', 'True', 'Succeeded');
    // Its finalizer patch goes out while the cluster is opened, but it is answered before the first apply in
    // edge-1 is sent (a deletion in between would otherwise leave that object behind): audit times, one clock.
    const finalizer = (await writesSince(HOME, created, 'syncprims-operator')).find((e) => e.objectRef?.resource === 'remotesyncs' && e.objectRef.name === 'app' && !e.objectRef.subresource);
    const firstApply = (await writesSince('edge-1', created, 'syncprims-operator')).find((e) => e.objectRef?.namespace === edgeNs() && e.objectRef.resource === 'configmaps');
    expect(finalizer && firstApply && (finalizer as { stageTimestamp?: string }).stageTimestamp! <= firstApply.requestReceivedTimestamp).toBe(true);
    expect(ready.status?.inventory?.entries.map((e) => e.id).sort()).toEqual([`${edgeNs()}_a__ConfigMap`, `${edgeNs()}_b__ConfigMap`]);
    const a = await find<CM>(edge1, cmPath(edgeNs(), 'a'));
    expect(a?.metadata.labels).toMatchObject({
      'syncprims.dev/owner-kind': 'RemoteSync',
      'syncprims.dev/owner-namespace': ns(),
      'syncprims.dev/owner-name': 'app',
      'syncprims.dev/origin': CLUSTER_ID,
    });
    // Nothing lands in the managing cluster (the namespace does not even exist there).
    expect(await find(mgmt, cmPath(edgeNs(), 'a'))).toBeUndefined();

    // A hand edit in edge-1 is corrected on a reconcile request.
    await edge1.request({ method: 'PATCH', path: cmPath(edgeNs(), 'a'), contentType: 'application/merge-patch+json', body: { data: { value: 'edited' } } });
    const requested = Date.now();
    await mgmt.request({
      method: 'PATCH',
      path: syncPath(ns(), 'app', REMOTESYNCS),
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { 'syncprims.dev/reconcile-requested-at': 'now-1' } } },
    });
    await eventually('the edit corrected', async () => ((await find<CM>(edge1, cmPath(edgeNs(), 'a')))?.data?.value === 'v1' ? true : undefined));
    // That reconcile's line trails its correction: seen before the next step's window opens.
    await op.waitForLog('the requested reconcile logged', (l) => l.msg === 'reconciled' && l.kind === 'RemoteSync' && l.name === 'app' && Date.parse(String(l.time)) >= requested && (l.causes as string[]).includes('updated RemoteSync'));

    // A hand edit as `kubectl patch` makes it, with no request: corrected at once, woken by edge-1's
    // watch, and the Event on the RemoteSync names the field manager and the field.
    const since = Date.now();
    await edge1.request({ method: 'PATCH', path: cmPath(edgeNs(), 'b'), query: { fieldManager: 'kubectl-patch' }, contentType: 'application/merge-patch+json', body: { data: { value: 'edited' } } });
    const drifted = await eventually('a Drifted Event naming kubectl-patch', async () =>
      (await eventsFor(mgmt, ns(), 'app')).find((e) => e.reason === 'Drifted' && e.message.includes('kubectl-patch')),
    );
    expect(drifted.message).toBe(`ConfigMap/${edgeNs()}/b: .data.value changed by kubectl-patch; corrected`);
    expect((await find<CM>(edge1, cmPath(edgeNs(), 'b')))?.data?.value).toBe('v1');
    // The reconcile's line comes after its Event.
    const causes = await eventually('the correcting reconcile, woken by the drift', async () => {
      const c = reconciledLines('app').filter((l) => Date.parse(String(l.time)) >= since).flatMap((l) => l.causes as string[]);
      return c.some((x) => x.startsWith(`owned object drifted: ${edgeNs()}_b__ConfigMap in `)) ? c : undefined;
    });
    expect(causes.filter((c) => !c.startsWith('owned object'))).toEqual([]);

    // b leaves the set: pruned in edge-1.
    await applyRemoteSync(mgmt, ns(), 'app', { clusterRef: { name: 'edge-1' }, source: { inline: [configMap(edgeNs(), 'a')] } });
    await eventually('b pruned in edge-1', async () => ((await find(edge1, cmPath(edgeNs(), 'b'))) === undefined ? true : undefined));
    await waitForRemoteReady(mgmt, ns(), 'app', 'True', 'Succeeded');

    await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'app', REMOTESYNCS) });
    await eventually('a removed from edge-1', async () => ((await find(edge1, cmPath(edgeNs(), 'a'))) === undefined ? true : undefined));
    await eventually('the RemoteSync gone', async () => ((await find(mgmt, syncPath(ns(), 'app', REMOTESYNCS))) === undefined ? true : undefined));
  });

  test('serviceAccountName: applied and pruned as that account of the remote cluster (in the namespace named as the RemoteSync\'s), bounded by its RBAC there', async () => {
    // The account is system:serviceaccount:<the RemoteSync's namespace>:tenant, in edge-1.
    await edge1.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns() } } });
    try {
      await edge1.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/serviceaccounts`, body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'tenant' } } });
      const rules = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'update'] }];
      await bindRole(edge1, edgeNs(), 'tenant', rules, { name: 'tenant', namespace: ns() });
      const spec = (objects: unknown[]) => ({ clusterRef: { name: 'edge-1' }, serviceAccountName: 'tenant', source: { inline: objects } });
      await applyRemoteSync(mgmt, ns(), 'tenant', spec([configMap(edgeNs(), 'tenant-1'), configMap(edgeNs(), 'tenant-2')]));
      await waitForRemoteReady(mgmt, ns(), 'tenant', 'True', 'Succeeded');
      // Its role grants no Secrets: refused, named, and not created.
      const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tenant-s', namespace: edgeNs() } };
      await applyRemoteSync(mgmt, ns(), 'tenant', spec([configMap(edgeNs(), 'tenant-1'), configMap(edgeNs(), 'tenant-2'), secret]));
      const refused = await waitForRemoteReady(mgmt, ns(), 'tenant', 'False', 'ApplyFailed');
      expect(readyOf(refused)?.message).toContain(`Secret ${edgeNs()}/tenant-s`);
      expect(readyOf(refused)?.message).toContain(`system:serviceaccount:${ns()}:tenant`);
      expect(await find(edge1, `/api/v1/namespaces/${edgeNs()}/secrets/tenant-s`)).toBeUndefined();
      // Nor delete: the prune of tenant-2 is refused and it stays.
      await applyRemoteSync(mgmt, ns(), 'tenant', spec([configMap(edgeNs(), 'tenant-1')]));
      const unpruned = await waitForRemoteReady(mgmt, ns(), 'tenant', 'False', 'PruneFailed');
      expect(readyOf(unpruned)?.message).toContain('cannot delete resource "configmaps"');
      expect(await find(edge1, cmPath(edgeNs(), 'tenant-2'))).toBeDefined();
      await applyRemoteSync(mgmt, ns(), 'tenant', { ...spec([configMap(edgeNs(), 'tenant-1')]), deletionPolicy: 'Orphan' });
      await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'tenant', REMOTESYNCS) });
      await eventually('tenant gone', async () => ((await find(mgmt, syncPath(ns(), 'tenant', REMOTESYNCS))) === undefined ? true : undefined));
    } finally {
      await edge1.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}` });
    }
  });

  test('a kind that leaves the inventories of its cluster stops its watch there', async () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'kinds-s', namespace: edgeNs() }, stringData: { k: 'v' } };
    await applyRemoteSync(mgmt, ns(), 'kinds', { clusterRef: { name: 'edge-1' }, source: { inline: [configMap(edgeNs(), 'kinds-c'), secret] } });
    await waitForRemoteReady(mgmt, ns(), 'kinds', 'True', 'Succeeded');
    // No other sync here applies Secrets: the only Secret watch with that resource label is the one in edge-1.
    expect(await op.metric('syncprims_watches', { resource: 'secrets' })).toBe(1);
    await applyRemoteSync(mgmt, ns(), 'kinds', { clusterRef: { name: 'edge-1' }, source: { inline: [configMap(edgeNs(), 'kinds-c')] } });
    await eventually('the Secret pruned in edge-1', async () => ((await find(edge1, `/api/v1/namespaces/${edgeNs()}/secrets/kinds-s`)) === undefined ? true : undefined));
    await eventually('the Secret watch in edge-1 stopped', async () => ((await op.metric('syncprims_watches', { resource: 'secrets' })) === 0 ? true : undefined));
    expect(await op.metric('syncprims_watches', { resource: 'configmaps' })).toBeGreaterThanOrEqual(1);
  });

  test('an object another RemoteSync owns in edge-1 is a conflict, applied the moment that one prunes it', async () => {
    await applyRemoteSync(mgmt, ns(), 'holder', { clusterRef: { name: 'edge-1' }, source: { inline: [configMap(edgeNs(), 'contested', 'holder')] } });
    await waitForRemoteReady(mgmt, ns(), 'holder', 'True', 'Succeeded');
    await applyRemoteSync(mgmt, ns(), 'claimant', { clusterRef: { name: 'edge-1' }, source: { inline: [configMap(edgeNs(), 'contested', 'claimant')] } });
    const conflict = await waitForRemoteReady(mgmt, ns(), 'claimant', 'False', 'OwnershipConflict');
    expect(readyOf(conflict)?.message).toContain(`ConfigMap ${edgeNs()}/contested is owned by RemoteSync/${ns()}/holder`);
    // The holder lets it go (its set no longer has it: pruned in edge-1); the deletion, seen by edge-1's watch,
    // wakes the claimant (not its retry, 30 s after the conflict).
    const released = Date.now();
    await applyRemoteSync(mgmt, ns(), 'holder', { clusterRef: { name: 'edge-1' }, source: { inline: [] } });
    await waitForRemoteReady(mgmt, ns(), 'claimant', 'True', 'Succeeded');
    expect(await find<CM>(edge1, cmPath(edgeNs(), 'contested'))).toMatchObject({ data: { value: 'claimant' }, metadata: { labels: { 'syncprims.dev/owner-name': 'claimant' } } });
    // The reconcile's line trails the status it wrote: waited for.
    await op.waitForCause('RemoteSync', ns(), 'claimant', `owned object released: ${edgeNs()}_contested__ConfigMap in ${ns()}/edge-1-kubeconfig`, released);
  });

  test("an object a sync of edge-1's own owns (it carries no origin) is a conflict, not taken over", async () => {
    const labels = { 'syncprims.dev/owner-kind': 'Sync', 'syncprims.dev/owner-namespace': edgeNs(), 'syncprims.dev/owner-name': 'local' };
    await edge1.request({ method: 'POST', path: `/api/v1/namespaces/${edgeNs()}/configmaps`, body: { ...configMap(edgeNs(), 'theirs', 'local'), metadata: { name: 'theirs', namespace: edgeNs(), labels } } });
    await applyRemoteSync(mgmt, ns(), 'intruder', { clusterRef: { name: 'edge-1' }, source: { inline: [configMap(edgeNs(), 'theirs', 'intruder')] } });
    const conflict = await waitForRemoteReady(mgmt, ns(), 'intruder', 'False', 'OwnershipConflict');
    expect(readyOf(conflict)?.message).toContain(`ConfigMap ${edgeNs()}/theirs is owned by Sync/${edgeNs()}/local`);
    expect(await find<CM>(edge1, cmPath(edgeNs(), 'theirs'))).toMatchObject({ data: { value: 'local' }, metadata: { labels } });
    await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'intruder', REMOTESYNCS) });
  });

  test('an object a RemoteSync of the same namespace and name applied from another managing cluster (another origin) is a conflict naming that cluster, and our deletion leaves it', async () => {
    const labels = { 'syncprims.dev/owner-kind': 'RemoteSync', 'syncprims.dev/owner-namespace': ns(), 'syncprims.dev/owner-name': 'twin', 'syncprims.dev/origin': 'another-mgmt' };
    await edge1.request({ method: 'POST', path: `/api/v1/namespaces/${edgeNs()}/configmaps`, body: { ...configMap(edgeNs(), 'twinned', 'theirs'), metadata: { name: 'twinned', namespace: edgeNs(), labels } } });
    await applyRemoteSync(mgmt, ns(), 'twin', { clusterRef: { name: 'edge-1' }, source: { inline: [configMap(edgeNs(), 'twinned', 'ours')] } });
    const conflict = await waitForRemoteReady(mgmt, ns(), 'twin', 'False', 'OwnershipConflict');
    expect(readyOf(conflict)?.message).toContain(`ConfigMap ${edgeNs()}/twinned is owned by RemoteSync/${ns()}/twin (applied from managing cluster another-mgmt)`);
    // Deleted before it ever applied, it prunes what its source renders and it owns: not the other cluster's object.
    await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'twin', REMOTESYNCS) });
    await eventually('twin gone', async () => ((await find(mgmt, syncPath(ns(), 'twin', REMOTESYNCS))) === undefined ? true : undefined));
    expect(await find<CM>(edge1, cmPath(edgeNs(), 'twinned'))).toMatchObject({ data: { value: 'theirs' }, metadata: { labels } });
  });

  test("another managing cluster's object labelled with our RemoteSync's name neither wakes it nor counts as its drift", async () => {
    await applyRemoteSync(mgmt, ns(), 'solo', { clusterRef: { name: 'edge-1' }, source: { inline: [configMap(edgeNs(), 'solo-a')] } });
    await waitForRemoteReady(mgmt, ns(), 'solo', 'True', 'Succeeded');
    const since = Date.now();
    const labels = { 'syncprims.dev/owner-kind': 'RemoteSync', 'syncprims.dev/owner-namespace': ns(), 'syncprims.dev/owner-name': 'solo', 'syncprims.dev/origin': 'another-mgmt' };
    const foreign = cmPath(edgeNs(), 'solo-foreign');
    await edge1.request({ method: 'POST', path: `/api/v1/namespaces/${edgeNs()}/configmaps`, body: { ...configMap(edgeNs(), 'solo-foreign', 'theirs'), metadata: { name: 'solo-foreign', namespace: edgeNs(), labels } } });
    await edge1.request({ method: 'PATCH', path: foreign, query: { fieldManager: 'kubectl-patch' }, contentType: 'application/merge-patch+json', body: { data: { value: 'theirs-2' } } });
    await edge1.request({ method: 'DELETE', path: foreign });
    // Then our own object is edited: the same watch of edge-1's ConfigMaps brings its event after theirs.
    await edge1.request({ method: 'PATCH', path: cmPath(edgeNs(), 'solo-a'), query: { fieldManager: 'kubectl-patch' }, contentType: 'application/merge-patch+json', body: { data: { value: 'edited' } } });
    const causes = await eventually('the reconcile woken by our own drift', async () => {
      const c = reconciledLines('solo').filter((l) => Date.parse(String(l.time)) >= since).flatMap((l) => l.causes as string[]);
      return c.some((x) => x.startsWith(`owned object drifted: ${edgeNs()}_solo-a__ConfigMap in `)) ? c : undefined;
    });
    expect(causes.filter((c) => c.includes('solo-foreign'))).toEqual([]);
    const drifts = (await eventsFor(mgmt, ns(), 'solo')).filter((e) => e.reason === 'Drifted');
    expect(drifts.map((e) => e.message).filter((m) => m.includes('solo-foreign'))).toEqual([]);
    expect((await find<CM>(edge1, cmPath(edgeNs(), 'solo-a')))?.data?.value).toBe('v1');
    await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'solo', REMOTESYNCS) });
    await eventually('solo gone', async () => ((await find(mgmt, syncPath(ns(), 'solo', REMOTESYNCS))) === undefined ? true : undefined));
  });

  test('a kind edge-1 does not serve yet: the RemoteSync is woken the moment its CRD is Established there, whoever installs it', async () => {
    const group = `${edgeNs()}.example.com`;
    const crd = schemalessCrd(group, 'Widget', 'widgets');
    const widget = { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1', namespace: edgeNs() }, spec: { n: 1 } };
    await applyRemoteSync(mgmt, ns(), 'widgets', { clusterRef: { name: 'edge-1' }, source: { inline: [widget] } });
    const waiting = await waitForRemoteReady(mgmt, ns(), 'widgets', 'False', 'CRDNotInstalled');
    expect(readyOf(waiting)?.message).toContain('Widget');
    // Installed by hand in edge-1 (no sync of ours applies it): the watch of edge-1's CRDs sees it.
    const installed = Date.now();
    await edge1.request({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd });
    try {
      await waitForRemoteReady(mgmt, ns(), 'widgets', 'True', 'Succeeded');
      expect(await find(edge1, `/apis/${group}/v1/namespaces/${edgeNs()}/widgets/w1`)).toMatchObject({ spec: { n: 1 } });
      await op.waitForCause('RemoteSync', ns(), 'widgets', `CRD established: widgets.${group} in ${ns()}/edge-1-kubeconfig`, installed);
      // The same kind is still not served in mgmt.
      expect(await find(mgmt, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`)).toBeUndefined();
    } finally {
      await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'widgets', REMOTESYNCS) });
      await eventually('the RemoteSync to be gone', async () => ((await find(mgmt, syncPath(ns(), 'widgets', REMOTESYNCS))) === undefined ? true : undefined));
      await edge1.request({ method: 'DELETE', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}` });
    }
  });

  test('kubeConfig.secretRef with its own key', async () => {
    await putKubeconfigSecret(mgmt, ns(), 'custom', await kubeconfigOf('edge-1'), 'edge.yaml');
    await applyRemoteSync(mgmt, ns(), 'custom', { kubeConfig: { secretRef: { name: 'custom', key: 'edge.yaml' } }, source: { inline: [configMap(edgeNs(), 'custom')] } });
    await waitForRemoteReady(mgmt, ns(), 'custom', 'True', 'Succeeded');
    expect(await find(edge1, cmPath(edgeNs(), 'custom'))).toBeDefined();
  });

  test('a Secret created after its RemoteSync: a wait that names it, then woken by the Secret event', async () => {
    await applyRemoteSync(mgmt, ns(), 'late', { kubeConfig: { secretRef: { name: 'late-kubeconfig' } }, source: { inline: [configMap(edgeNs(), 'late')] } });
    const waiting = await waitForRemoteReady(mgmt, ns(), 'late', 'False', 'ClusterUnreachable');
    expect(readyOf(waiting)?.message).toBe(`Secret ${ns()}/late-kubeconfig not found: create it, or fix spec.kubeConfig.secretRef`);
    const put = Date.now();
    await putKubeconfigSecret(mgmt, ns(), 'late-kubeconfig', await kubeconfigOf('edge-1'));
    await waitForRemoteReady(mgmt, ns(), 'late', 'True', 'Succeeded');
    // The reconcile's line trails the status it wrote: waited for.
    await eventually('the reconcile woken by the Secret', async () =>
      reconciledLines('late').filter((l) => Date.parse(String(l.time)) >= put).flatMap((l) => l.causes as string[]).find((c) => c.startsWith(`Secret ${ns()}/late-kubeconfig changed`)),
    );
    expect(await find(edge1, cmPath(edgeNs(), 'late'))).toBeDefined();
  });
});

/** A ServiceAccount in edge-1 allowed to manage ConfigMaps in the edge namespace only: a kubeconfig with a token of it. */
const namespacedIdentity = (name: string): Promise<string> =>
  serviceAccountKubeconfig(edge1, 'edge-1', edgeNs(), name, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }]);

/** An identity that may write ConfigMaps in the edge namespace but not list or watch them. */
const blindIdentity = (name: string): Promise<string> =>
  serviceAccountKubeconfig(edge1, 'edge-1', edgeNs(), name, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'patch', 'update', 'delete'] }]);

const primedIn = (cluster: string): number => op.logs.filter((l) => l.msg === 'cache primed' && l.cluster === cluster).length;

describe('credentials', () => {
  test('a namespaced identity works (watched per namespace); a rotated token is swapped in place, the old one revoked, no watch re-primed', async () => {
    await putKubeconfigSecret(mgmt, ns(), 'rot-kubeconfig', await namespacedIdentity('rot-a'));
    await applyRemoteSync(mgmt, ns(), 'rot', { kubeConfig: { secretRef: { name: 'rot-kubeconfig' } }, source: { inline: [configMap(edgeNs(), 'rot', 'v1')] } });
    await waitForRemoteReady(mgmt, ns(), 'rot', 'True', 'Succeeded');
    expect(await find<CM>(edge1, cmPath(edgeNs(), 'rot'))).toMatchObject({ data: { value: 'v1' } });
    const cluster = `${ns()}/rot-kubeconfig`;
    const primed = primedIn(cluster);
    expect(primed).toBeGreaterThan(0);

    await putKubeconfigSecret(mgmt, ns(), 'rot-kubeconfig', await namespacedIdentity('rot-b'));
    await eventually('the rotation seen', async () => (op.logs.some((l) => l.msg === 'credentials rotated: swapped in place' && l.cluster === cluster) ? true : undefined));
    // The old token dies with its ServiceAccount.
    await edge1.request({ method: 'DELETE', path: `/api/v1/namespaces/${edgeNs()}/serviceaccounts/rot-a` });
    await applyRemoteSync(mgmt, ns(), 'rot', { kubeConfig: { secretRef: { name: 'rot-kubeconfig' } }, source: { inline: [configMap(edgeNs(), 'rot', 'v2')] } });
    await eventually('v2 applied with the new token', async () => ((await find<CM>(edge1, cmPath(edgeNs(), 'rot')))?.data?.value === 'v2' ? true : undefined));
    await waitForRemoteReady(mgmt, ns(), 'rot', 'True', 'Succeeded');
    expect(primedIn(cluster)).toBe(primed);
    expect(op.logs.filter((l) => l.msg === 'cluster opened' && l.cluster === cluster)).toHaveLength(1);
  });

  test('an identity that may write what it applies but not watch it: Ready=False naming the verbs it lacks, then Ready once granted', async () => {
    await putKubeconfigSecret(mgmt, ns(), 'blind-kubeconfig', await blindIdentity('blind'));
    await applyRemoteSync(mgmt, ns(), 'blind', { interval: '2s', kubeConfig: { secretRef: { name: 'blind-kubeconfig' } }, source: { inline: [configMap(edgeNs(), 'blind', 'v1')] } });
    // Applied (it may write), but not followed: before, it retried in silence with no condition at all.
    const refused = await waitForRemoteReady(mgmt, ns(), 'blind', 'False', 'ApplyFailed');
    expect(readyOf(refused)?.message).toContain(`cluster ${ns()}/blind-kubeconfig refused to let the operator watch what it applied`);
    expect(readyOf(refused)?.message).toMatch(/cannot (list|watch) resource "configmaps"/);
    expect(readyOf(refused)?.message).toContain('grant get, list and watch');
    expect(await find<CM>(edge1, cmPath(edgeNs(), 'blind'))).toMatchObject({ data: { value: 'v1' } });
    await eventually('the ApplyFailed Event', async () => (await eventsFor(mgmt, ns(), 'blind')).find((e) => e.reason === 'ApplyFailed' && e.message.includes('watch')));
    // Granted list and watch: it goes on by itself.
    await bindRole(edge1, edgeNs(), 'blind-watch', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch'] }], { name: 'blind', namespace: edgeNs() });
    await waitForRemoteReady(mgmt, ns(), 'blind', 'True', 'Succeeded');
  });
});

describe('an identity that may not list CRDs', () => {
  test('a kind edge-1 does not serve: CRDNotInstalled, tried again at its interval, and the refused CRD watch asked for once, not at every retry', async () => {
    await putKubeconfigSecret(mgmt, ns(), 'nocrd-kubeconfig', await namespacedIdentity('nocrd'));
    const gizmo = { apiVersion: `${edgeNs()}.nocrd.example.com/v1`, kind: 'Gizmo', metadata: { name: 'g', namespace: edgeNs() } };
    await applyRemoteSync(mgmt, ns(), 'nocrd', { interval: '2s', kubeConfig: { secretRef: { name: 'nocrd-kubeconfig' } }, source: { inline: [gizmo] } });
    await waitForRemoteReady(mgmt, ns(), 'nocrd', 'False', 'CRDNotInstalled');
    const before = reconciledLines('nocrd').length;
    await eventually('three more tries', async () => (reconciledLines('nocrd').length >= before + 3 ? true : undefined), 60_000);
    // Its only refused request is the CRD watch's LIST, the first time; the retries do without it (before: one per try).
    expect(await op.metric('syncprims_cluster_requests_total', { cluster: `${ns()}/nocrd-kubeconfig`, method: 'GET', code: '403' })).toBe(1);
    await mgmt.request({ method: 'DELETE', path: `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/${REMOTESYNCS}/nocrd` });
    await eventually('the RemoteSync gone', async () => ((await find(mgmt, `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/${REMOTESYNCS}/nocrd`)) === undefined ? true : undefined));
  });
});

describe('restart and deletion', () => {
  test('restarting the operator over reconciled RemoteSyncs writes nothing in any cluster (and --qps holds its requests back)', async () => {
    await waitForRemoteReady(mgmt, ns(), 'custom', 'True', 'Succeeded');
    await op.stop('SIGTERM');
    const since = new Date();
    // A tight client-side limit for remote clusters: the requests of the first reconciles wait for it
    // (one a second: a reconcile's discovery, list and watch of a cluster follow each other within that).
    op = await OperatorProcess.start(HOME, flags('--qps', '1', '--burst', '1'));
    // Every RemoteSync reconciled at least once by the new process (they are queued at start).
    const names = ['custom', 'late', 'rot'];
    await eventually('every RemoteSync reconciled after the restart', async () => (names.every((n) => reconciledLines(n).length > 0) ? true : undefined));
    for (const name of names) await waitForRemoteReady(mgmt, ns(), name, 'True', 'Succeeded');
    await new Promise((r) => setTimeout(r, 1_000));
    for (const cluster of [HOME, 'edge-1']) expect(await writesSince(cluster, since, 'syncprims-operator')).toEqual([]);
    // Summed over clusters: one shared by several Secrets of the same identity is named after the first to open it.
    expect(await op.metric('syncprims_client_rate_limit_wait_seconds')).toBeGreaterThan(0);
    await op.stop('SIGTERM');
    op = await OperatorProcess.start(HOME, flags());
    // The next test deletes a RemoteSync with its Secret: this process must have used that cluster by then
    // (after a restart with the Secret already gone there is no last client: docs/remote.md, "Not yet").
    await eventually('custom reconciled by the new process', async () => (reconciledLines('custom').length > 0 ? true : undefined));
  });

  test('deleted together with its Secret, a RemoteSync still prunes in its cluster', async () => {
    expect(await find(edge1, cmPath(edgeNs(), 'custom'))).toBeDefined();
    await mgmt.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}/secrets/custom` });
    await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'custom', REMOTESYNCS) });
    await eventually('custom gone', async () => ((await find(mgmt, syncPath(ns(), 'custom', REMOTESYNCS))) === undefined ? true : undefined));
    expect(await find(edge1, cmPath(edgeNs(), 'custom'))).toBeUndefined();
  });

  test('its Cluster API Cluster being deleted, a RemoteSync goes without pruning and says what it left behind', async () => {
    await installClusterApiCrd(mgmt);
    await createHeldCluster(mgmt, ns(), 'capi');
    try {
      await putKubeconfigSecret(mgmt, ns(), 'capi-kubeconfig', await kubeconfigOf('edge-1'));
      await applyRemoteSync(mgmt, ns(), 'capi', { clusterRef: { name: 'capi' }, source: { inline: [configMap(edgeNs(), 'capi-a'), configMap(edgeNs(), 'capi-b')] } });
      await waitForRemoteReady(mgmt, ns(), 'capi', 'True', 'Succeeded');
      await mgmt.request({ method: 'DELETE', path: clusterApiClusterPath(ns(), 'capi') });
      await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'capi', REMOTESYNCS) });
      await eventually('capi gone', async () => ((await find(mgmt, syncPath(ns(), 'capi', REMOTESYNCS))) === undefined ? true : undefined));
      const warning = (await eventsFor(mgmt, ns(), 'capi')).find((e) => e.reason === 'LeftBehind');
      expect(warning).toMatchObject({ type: 'Warning', involvedObject: { kind: 'RemoteSync' } });
      expect(warning?.message).toBe(
        `deleted without cleaning up: its Cluster API Cluster ${ns()}/capi is being deleted; left behind: ConfigMap/${edgeNs()}/capi-a, ConfigMap/${edgeNs()}/capi-b`,
      );
      expect(await find(edge1, cmPath(edgeNs(), 'capi-a'))).toBeDefined();
    } finally {
      await releaseCluster(mgmt, ns(), 'capi');
    }
  });
});

describe('hostile kubeconfigs are refused before any use', () => {
  const marker = path.join(os.tmpdir(), `syncprims-exec-ran-${process.pid}`);
  afterAll(() => rm(marker, { force: true }));

  const cases: [string, (kc: Record<string, unknown>) => void, string][] = [
    ['exec', (kc) => setUser(kc, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'touch', args: [marker] } }), 'runs a command to get its credentials (exec): refused'],
    ['auth-provider', (kc) => setUser(kc, { 'auth-provider': { name: 'oidc', config: {} } }), 'uses an auth-provider plugin (auth-provider): refused'],
    ['token-file', (kc) => setUser(kc, { tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' }), 'names a file (tokenFile): refused'],
    ['insecure', (kc) => setCluster(kc, { 'insecure-skip-tls-verify': true }), 'sets insecure-skip-tls-verify'],
    // client-node refuses it at the first request: the reconcile failed there, with no condition.
    ['plain-http', (kc) => setCluster(kc, { server: 'http://127.0.0.1:6442' }), 'has a plain http:// server'],
    // Not hostile, only wrong, and as kubectl refuses it: YAML 1.1 reads `namespace: no` as false.
    ['not-a-string', (kc) => setContext(kc, { namespace: false }), 'contexts[0].context.namespace is the boolean false, not a string'],
  ];

  test.each(cases)('%s', async (name, change, message) => {
    await putKubeconfigSecret(mgmt, ns(), `hostile-${name}`, await kubeconfigOf('edge-1', change));
    await applyRemoteSync(mgmt, ns(), `hostile-${name}`, { kubeConfig: { secretRef: { name: `hostile-${name}` } }, source: { inline: [configMap(edgeNs(), `hostile-${name}`)] } });
    const refused = await waitForRemoteReady(mgmt, ns(), `hostile-${name}`, 'False', 'InvalidKubeconfig');
    expect(readyOf(refused)?.message).toContain(`Secret ${ns()}/hostile-${name} key value: `);
    expect(readyOf(refused)?.message).toContain(message);
    expect(await find(edge1, cmPath(edgeNs(), `hostile-${name}`))).toBeUndefined();
    expect(existsSync(marker)).toBe(false);
  });
});

describe('a kubeconfig whose server is not a Kubernetes API server', () => {
  let web: TlsServer | undefined;
  afterAll(async () => web?.close());

  // A web page where the API server should be (a wrong port, a load balancer's page): the RemoteSync
  // said SourceError "Cannot read properties of undefined (reading 'find')", the ProxySync nothing at all.
  test('a RemoteSync and a ProxySync say so (ClusterUnreachable), and nothing is retried in a tight loop', async () => {
    let asked = 0;
    // A web page; to the identity whose token says so, JSON of another shape (an API of something else).
    web = await startTlsServer((req, res) => {
      asked++;
      if (req.headers.authorization === 'Bearer other-json') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}');
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Welcome</body></html>');
    });
    const { base, caPem } = web;
    const atWeb = (kc: Record<string, unknown>): void => setCluster(kc, { server: base, 'certificate-authority-data': Buffer.from(caPem).toString('base64') });
    await putKubeconfigSecret(mgmt, ns(), 'web-page', await kubeconfigOf('edge-1', atWeb));
    await putKubeconfigSecret(mgmt, ns(), 'web-json', await kubeconfigOf('edge-1', (kc) => (atWeb(kc), setUser(kc, { token: 'other-json' }))));
    const kubeConfig = { secretRef: { name: 'web-page' } };
    await applyRemoteSync(mgmt, ns(), 'web-r', { kubeConfig, source: { inline: [configMap(edgeNs(), 'web-r')] } });
    await applyProxySync(mgmt, ns(), 'web-p', { kubeConfig, template: { spec: { source: { inline: [configMap(edgeNs(), 'web-p')] } } } });
    await applyRemoteSync(mgmt, ns(), 'web-j', { kubeConfig: { secretRef: { name: 'web-json' } }, source: { inline: [configMap(edgeNs(), 'web-j')] } });
    const hint = 'is it a Kubernetes API server\\? \\(check the kubeconfig\'s server URL\\)$';
    const message = new RegExp(`^cluster ${ns()}/web-page is not usable: GET \\S+: ${base} answered HTTP 200 with text/html, not JSON: ${hint}`);
    const r = await waitForRemoteReady(mgmt, ns(), 'web-r', 'False', 'ClusterUnreachable');
    expect(readyOf(r)?.message).toMatch(message);
    const p = await waitForReady(mgmt, ns(), 'web-p', 'False', 'ClusterUnreachable', 60_000, PROXYSYNCS);
    expect(readyOf(p)?.message).toMatch(message);
    const j = await waitForRemoteReady(mgmt, ns(), 'web-j', 'False', 'ClusterUnreachable');
    expect(readyOf(j)?.message).toMatch(new RegExp(`^cluster ${ns()}/web-json is not usable: GET /api/v1: ${ns()}/web-json answered with something else than an APIResourceList: ${hint}`));
    // Each retried after min(interval, 30 s): a handful of requests over a few seconds, not a loop.
    const before = asked;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(asked - before).toBeLessThan(10);
  });
});

describe('isolation', () => {
  // edge-2 "down" is its port closed: every connection dropped, new ones refused, as a stopped API
  // server's; the shared edge-2 itself keeps running for the other test files.
  const edge2Port = useClusterProxy('edge-2');
  const downEdge2 = (): Promise<void> => edge2Port.proxy().down();
  const upEdge2 = (): Promise<void> => edge2Port.proxy().up();

  test('with edge-2 down its RemoteSyncs are ClusterUnreachable, edge-1 keeps converging, and edge-2 recovers by itself', async () => {
    await putKubeconfigSecret(mgmt, ns(), 'edge-2-kubeconfig', await edge2Port.kubeconfig());
    const down = ['d-0', 'd-1', 'd-2', 'd-3', 'd-4', 'd-5'];
    for (const name of down) await applyRemoteSync(mgmt, ns(), name, { clusterRef: { name: 'edge-2' }, source: { inline: [configMap(edge2Ns(), name)] } });
    for (const name of down) await waitForRemoteReady(mgmt, ns(), name, 'True', 'Succeeded');

    const cluster = `${ns()}/edge-2-kubeconfig`;
    // It goes down with requests in flight, as a server that stops does: first this identity's connections
    // reset (its own outage), then new ones refused (the server's). One outage: told once (a make test saw
    // every status rewritten when the server's began, at the probe a few seconds after the reset).
    edge2Port.proxy().blackHole();
    try {
      // Ask all of them to reconcile against the stopped cluster, and edge-1's to keep working meanwhile.
      for (const name of down) {
        await mgmt.request({
          method: 'PATCH',
          path: syncPath(ns(), name, REMOTESYNCS),
          contentType: 'application/merge-patch+json',
          body: { spec: { source: { inline: [configMap(edge2Ns(), name, 'v2')] } } },
        });
      }
      await eventually('a reconcile waiting on edge-2', async () => ((await op.metric('syncprims_cluster_reconciles_in_flight', { cluster })) > 0 ? true : undefined));
      await downEdge2();
      for (const name of down) {
        const s = await waitForRemoteReady(mgmt, ns(), name, 'False', 'ClusterUnreachable', 120_000);
        expect(readyOf(s)?.message).toContain(`cluster ${ns()}/edge-2-kubeconfig is unreachable`);
      }
      // Workers held by edge-2 never exceed its bound (half of --concurrency 8).
      expect(await op.metric('syncprims_cluster_reconciles_in_flight', { cluster })).toBeLessThanOrEqual(4);
      // While it stays down, the message stays the same: its RemoteSyncs' status is not rewritten at each retry.
      const lines = (): LogLine[] => op.logs.filter((l) => l.msg === 'cluster not usable' && l.namespace === ns() && down.includes(String(l.name)));
      // A line trails the status write the waits above saw (a sync that met the cluster's fault mid-apply says it
      // otherwise): counted once none has come for a second.
      const toldOnce = await steady(() => lines().length);
      await new Promise((r) => setTimeout(r, 6_000));
      expect(lines().length).toBe(toldOnce);
      expect(new Set(lines().map((l) => l.message))).toEqual(new Set([readyOf(await getRemoteSync(mgmt, ns(), 'd-5'))?.message]));
      for (let i = 0; i < 5; i++) {
        await applyRemoteSync(mgmt, ns(), `e-${i}`, { clusterRef: { name: 'edge-1' }, source: { inline: [configMap(edgeNs(), `e-${i}`)] } });
      }
      for (let i = 0; i < 5; i++) await waitForRemoteReady(mgmt, ns(), `e-${i}`, 'True', 'Succeeded');
      expect(await op.metric('syncprims_cluster_reachable', { cluster })).toBe(0);
    } finally {
      edge2Port.proxy().restore();
      await upEdge2();
    }
    for (const name of down) await waitForRemoteReady(mgmt, ns(), name, 'True', 'Succeeded', 180_000);
    expect(await find<CM>(edge2, cmPath(edge2Ns(), 'd-5'))).toMatchObject({ data: { value: 'v2' } });
  }, 420_000);

  test('a cluster that accepts connections and never answers: ClusterUnreachable, with a bound on the workers it holds', async () => {
    const proxy = await StallingProxy.start(Number(edge2.server.port));
    try {
      await putKubeconfigSecret(mgmt, ns(), 'hole-kubeconfig', await kubeconfigOf('edge-2', (kc) => setCluster(kc, { server: `https://127.0.0.1:${proxy.port}` })));
      const held = ['h-0', 'h-1', 'h-2', 'h-3', 'h-4', 'h-5'];
      const spec = (name: string, value: string) => ({ kubeConfig: { secretRef: { name: 'hole-kubeconfig' } }, source: { inline: [configMap(edge2Ns(), name, value)] } });
      for (const name of held) await applyRemoteSync(mgmt, ns(), name, spec(name, 'v1'));
      for (const name of held) await waitForRemoteReady(mgmt, ns(), name, 'True', 'Succeeded');
      proxy.blackHole();
      for (const name of held) await applyRemoteSync(mgmt, ns(), name, spec(name, 'v2'));
      const cluster = `${ns()}/hole-kubeconfig`;
      let most = 0;
      const before = (await op.metric('controller_runtime_reconcile_total', { controller: 'remotesync' }));
      for (let i = 0; i < 4; i++) await applyRemoteSync(mgmt, ns(), `f-${i}`, { clusterRef: { name: 'edge-1' }, source: { inline: [configMap(edgeNs(), `f-${i}`)] } });
      for (let i = 0; i < 4; i++) {
        await waitForRemoteReady(mgmt, ns(), `f-${i}`, 'True', 'Succeeded');
        most = Math.max(most, await op.metric('syncprims_cluster_reconciles_in_flight', { cluster }));
      }
      expect(await op.metric('controller_runtime_reconcile_total', { controller: 'remotesync' })).toBeGreaterThan(before);
      for (const name of held) {
        await waitForRemoteReady(mgmt, ns(), name, 'False', 'ClusterUnreachable', 180_000);
        most = Math.max(most, await op.metric('syncprims_cluster_reconciles_in_flight', { cluster }));
      }
      expect(most).toBeLessThanOrEqual(4);
      proxy.restore();
      for (const name of held) await waitForRemoteReady(mgmt, ns(), name, 'True', 'Succeeded', 180_000);
      expect(await find<CM>(edge2, cmPath(edge2Ns(), 'h-5'))).toMatchObject({ data: { value: 'v2' } });
    } finally {
      await proxy.close();
    }
  }, 420_000);

  test('deleting a RemoteSync whose cluster is down waits and says why; Orphan goes at once; with its Secret gone too, it goes after the grace period', async () => {
    // Another Secret of the same cluster and identity: the RemoteSync shares the cluster with d-0.
    await putKubeconfigSecret(mgmt, ns(), 'edge-2-lost', await edge2Port.kubeconfig());
    await applyRemoteSync(mgmt, ns(), 'lost', { kubeConfig: { secretRef: { name: 'edge-2-lost' } }, source: { inline: [configMap(edge2Ns(), 'lost')] } });
    await waitForRemoteReady(mgmt, ns(), 'lost', 'True', 'Succeeded');
    await downEdge2();
    try {
      await mgmt.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}/secrets/edge-2-lost` });
      await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'lost', REMOTESYNCS) });
      await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'd-0', REMOTESYNCS) });
      const held = await eventually('d-0 to say why it stays', async () => {
        const s = await getRemoteSync(mgmt, ns(), 'd-0');
        return readyOf(s)?.reason === 'ClusterUnreachable' && s.metadata.deletionTimestamp ? s : undefined;
      }, 120_000);
      expect(held.metadata.finalizers).toContain('syncprims.dev/finalizer');
      await applyRemoteSync(mgmt, ns(), 'd-1', { clusterRef: { name: 'edge-2' }, deletionPolicy: 'Orphan', source: { inline: [configMap(edge2Ns(), 'd-1', 'v2')] } });
      await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'd-1', REMOTESYNCS) });
      await eventually('d-1 gone at once', async () => ((await find(mgmt, syncPath(ns(), 'd-1', REMOTESYNCS))) === undefined ? true : undefined), 30_000);

      // Its Secret gone and its cluster down: it says when it gives up, then goes (--lost-cluster-grace 5s), naming what it left.
      await eventually('lost gone after its grace period', async () => ((await find(mgmt, syncPath(ns(), 'lost', REMOTESYNCS))) === undefined ? true : undefined), 120_000);
      const warning = (await eventsFor(mgmt, ns(), 'lost')).find((e) => e.reason === 'LeftBehind');
      expect(warning?.message).toMatch(
        new RegExp(`^deleted without cleaning up: its kubeconfig Secret ${ns()}/edge-2-lost is gone and cleaning up with the last client of its cluster failed \\(.+\\) until .+; left behind: ConfigMap/${edge2Ns()}/lost$`),
      );
      expect((await getRemoteSync(mgmt, ns(), 'd-0')).metadata.deletionTimestamp).toBeDefined();
    } finally {
      await upEdge2();
    }
    await eventually('d-0 pruned in edge-2 and gone', async () => ((await find(mgmt, syncPath(ns(), 'd-0', REMOTESYNCS))) === undefined ? true : undefined), 180_000);
    expect(await find(edge2, cmPath(edge2Ns(), 'd-0'))).toBeUndefined();
    expect(await find(edge2, cmPath(edge2Ns(), 'd-1'))).toBeDefined();
    expect(await find(edge2, cmPath(edge2Ns(), 'lost'))).toBeDefined();
  }, 420_000);
});

function setUser(kc: Record<string, unknown>, user: Record<string, unknown>): void {
  const users = kc.users as { user: Record<string, unknown> }[];
  users[0]!.user = { ...users[0]!.user, ...user };
}

function setContext(kc: Record<string, unknown>, context: Record<string, unknown>): void {
  const contexts = kc.contexts as { context: Record<string, unknown> }[];
  contexts[0]!.context = { ...contexts[0]!.context, ...context };
}

function setCluster(kc: Record<string, unknown>, cluster: Record<string, unknown>): void {
  const clusters = kc.clusters as { cluster: Record<string, unknown> }[];
  clusters[0]!.cluster = { ...clusters[0]!.cluster, ...cluster };
}
