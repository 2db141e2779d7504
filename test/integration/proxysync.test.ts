// ProxySync end to end, with an operator per cluster as separate processes:
// `mgmt` keeps a Sync inside `edge-1` (whose own operator applies it) and
// reflects its status back by watch; registration on a cluster of its own
// (`reg-edge`), whose operator starts before syncprims' CRDs are there.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { customResourceDefinitions } from '../../src/api/crds.js';
import type { KubeClient } from '../../src/kube/client.js';
import { writesSince } from '../support/audit.js';
import { clusterClient, closeClients, ensureClusters } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { releaseSyncFinalizers, TEST_LABEL, useTestNamespace } from '../support/namespace.js';
import { bindRole } from '../support/rbac.js';
import { OperatorProcess, type LogLine } from '../support/operator.js';
import { applyProxySync, applyRemoteSync, kubeconfigOf, PROXYSYNCS, putKubeconfigSecret, REMOTESYNCS, serviceAccountKubeconfig } from '../support/remote.js';
import { applySync, eventsFor, find, getSync, readyOf, syncPath, waitForReady, type SyncObject } from '../support/syncs.js';

const HOME = 'mgmt';
const EDGE = 'edge-1';
const CLUSTER_ID = 'mgmt-under-test';
const OPERATOR_UA = 'syncprims-operator';
let mgmt: KubeClient;
let edge: KubeClient;
let hub: OperatorProcess;
let spoke: OperatorProcess;
const ns = useTestNamespace(HOME, 'psync');

const hubArgs = (): string[] => ['--namespace', ns(), '--log-level', 'trace', '--cluster-id', CLUSTER_ID];
const spokeArgs = (): string[] => ['--namespace', ns(), '--log-level', 'debug'];

beforeAll(async () => {
  await ensureClusters([HOME, EDGE]);
  mgmt = await clusterClient(HOME);
  edge = await clusterClient(EDGE);
  await Promise.all([installCrds(HOME), installCrds(EDGE)]);
  await putKubeconfigSecret(mgmt, ns(), 'edge-1-kubeconfig', await kubeconfigOf(EDGE));
  [hub, spoke] = await Promise.all([OperatorProcess.start(HOME, hubArgs()), OperatorProcess.start(EDGE, spokeArgs())]);
}, 120_000);

afterAll(async () => {
  await Promise.all([hub?.stop('SIGTERM'), spoke?.stop('SIGTERM')]);
  // The remote Syncs live in edge-1, in a namespace named as the test's.
  if (edge) {
    await edge.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}` }).catch(() => undefined);
    await releaseSyncFinalizers(edge, ns());
  }
  await closeClients();
});

const configMap = (name: string, value = 'v1') => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns() }, data: { value } });
const cmPath = (name: string): string => `/api/v1/namespaces/${ns()}/configmaps/${name}`;
type CM = { data?: Record<string, string>; metadata: { labels?: Record<string, string> } };
const edgeSync = (name: string): Promise<SyncObject | undefined> => find<SyncObject>(edge, syncPath(ns(), name));
const proxyReady = (name: string, status: 'True' | 'False' | 'Unknown', reason?: string, timeoutMs = 60_000): Promise<SyncObject> =>
  waitForReady(mgmt, ns(), name, status, reason, timeoutMs, PROXYSYNCS);
const edgeCluster = (): string => `${ns()}/edge-1-kubeconfig`;

describe('a ProxySync and the Sync it keeps in edge-1', () => {
  test('keeps the remote Sync from its template and mirrors its status; a hand edit of its spec is reverted without a request', async () => {
    const created = new Date(Date.now() - 1000);
    await applyProxySync(mgmt, ns(), 'app', { clusterRef: { name: 'edge-1' }, template: { spec: { source: { inline: [configMap('app-cm')] } } } });
    const ready = await proxyReady('app', 'True', 'Succeeded');
    // Its finalizer patch goes out while the cluster is opened, but it is answered before the first write in
    // edge-1 is sent (a deletion in between would otherwise leave the remote Sync behind): audit times, one clock.
    const finalizer = (await writesSince(HOME, created, OPERATOR_UA)).find((e) => e.objectRef?.resource === 'proxysyncs' && e.objectRef.name === 'app' && !e.objectRef.subresource);
    const firstWrite = (await writesSince(EDGE, created, OPERATOR_UA)).find((e) => e.objectRef?.namespace === ns() || e.objectRef?.name === ns());
    expect(finalizer && firstWrite && (finalizer as { stageTimestamp?: string }).stageTimestamp! <= firstWrite.requestReceivedTimestamp).toBe(true);
    const remote = await edgeSync('app');
    expect(remote?.metadata.labels).toMatchObject({
      'syncprims.dev/owner-kind': 'ProxySync',
      'syncprims.dev/owner-namespace': ns(),
      'syncprims.dev/owner-name': 'app',
      'syncprims.dev/origin': CLUSTER_ID,
    });
    expect(ready.status?.lastAppliedRevision).toBe(remote?.status?.lastAppliedRevision);
    expect((ready.status as Record<string, unknown>).remote).toMatchObject({ cluster: 'edge-1', namespace: ns(), name: 'app', observedGeneration: remote?.metadata.generation });
    expect(await find(edge, cmPath('app-cm'))).toBeDefined();
    expect(await find(mgmt, cmPath('app-cm'))).toBeUndefined();

    await edge.request({
      method: 'PATCH',
      path: syncPath(ns(), 'app'),
      query: { fieldManager: 'kubectl-patch' },
      contentType: 'application/merge-patch+json',
      body: { spec: { source: { inline: [configMap('hand-edit')] } } },
    });
    await eventually('the hand edit reverted', async () => {
      const s = await edgeSync('app');
      const inline = (s?.spec.source as { inline?: { metadata: { name: string } }[] } | undefined)?.inline ?? [];
      return inline.length === 1 && inline[0]?.metadata.name === 'app-cm' ? true : undefined;
    });
    expect((await getSync(mgmt, ns(), 'app', PROXYSYNCS)).metadata.annotations?.['syncprims.dev/reconcile-requested-at']).toBeUndefined();
    // The log names who changed it (from the managedFields the watch brought).
    await hub.waitForLog('the correction logged with its author', (l) => l.level === 'warn' && l.name === 'app' && JSON.stringify(l.managers) === '["kubectl-patch"]' && JSON.stringify(l.fields) === '[".spec.source.inline"]');
    // Settled: edge-1's operator has handled the reverted spec (a Ready seen before the revert reached mgmt would be stale).
    await eventually('the remote Sync to observe the revert', async () => {
      const s = await edgeSync('app');
      return s && s.status?.observedGeneration === s.metadata.generation ? true : undefined;
    });
    await proxyReady('app', 'True', 'Succeeded');
  });

  test('a fighter that keeps re-setting a field of the remote Sync is backed off, not fought in a hot loop', async () => {
    await applyProxySync(mgmt, ns(), 'fought', { clusterRef: { name: 'edge-1' }, template: { spec: { interval: '1m', source: { inline: [configMap('fought-cm')] } } } });
    await proxyReady('fought', 'True', 'Succeeded');
    const since = Date.now();
    // 10 s of a fighter re-setting the interval every 100 ms (about 100 times when we put it back each time).
    let fights = 0;
    // What the ProxySync says meanwhile: while its correction is held back, the remote Sync's Ready speaks for the fighter's spec.
    const said = new Set<string>();
    for (const end = Date.now() + 10_000; Date.now() < end; ) {
      if ((await edgeSync('fought'))?.spec.interval !== '2m') {
        await edge.request({ method: 'PATCH', path: syncPath(ns(), 'fought'), query: { fieldManager: 'fighter' }, contentType: 'application/merge-patch+json', body: { spec: { interval: '2m' } } });
        fights += 1;
      }
      const ready = readyOf(await getSync(mgmt, ns(), 'fought', PROXYSYNCS));
      said.add(`${ready?.status} ${ready?.reason}: ${ready?.message}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // Every write the managing operator sent to the remote Sync in the window: corrections back off
    // 1 s, 2 s, 4 s, 8 s..., so in 10 s 3 to 5, not one per fight.
    const writes = hub.logs.filter((l) => l.msg === 'request' && l.cluster === edgeCluster() && l.method === 'PATCH' && l.path === syncPath(ns(), 'fought') && at(l) >= since && at(l) < since + 10_000);
    expect(writes.length).toBeGreaterThanOrEqual(3);
    expect(writes.length).toBeLessThanOrEqual(5);
    expect(fights).toBeGreaterThanOrEqual(writes.length);
    const fighting = await eventually('an Event naming the fight', async () => (await eventsFor(mgmt, ns(), 'fought')).find((e) => e.reason === 'Drifted' && e.message.includes('fighting')));
    expect(fighting.message).toMatch(/: \.spec\.interval changed by fighter; corrected \(\d+ times in a row: fighting fighter; the next correction waits \d+s\)$/);
    expect([...said]).toContain(
      `Unknown RemoteNotReady: the remote Sync ${ns()}/fought differs from the template, .spec.interval changed by fighter: it is put back when its correction, backed off while it keeps being changed (fighting), is due (see the Drifted Event)`,
    );

    // Gone, so that its backed-off correction does not land in the next tests' windows.
    await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'fought', PROXYSYNCS) });
    await eventually('the fought ProxySync gone', async () => ((await find(mgmt, syncPath(ns(), 'fought', PROXYSYNCS))) === undefined ? true : undefined));
  });

  test('a status change of the remote Sync reaches the ProxySync through its watch, with no polling of Syncs', async () => {
    await spoke.stop('SIGTERM');
    try {
      const since = Date.now();
      const remote = (await edgeSync('app'))!;
      const conditions = (remote.status?.conditions ?? []).map((c) =>
        c.type === 'Ready' ? { ...c, status: 'False', reason: 'HealthCheckFailed', message: 'written by the test', lastTransitionTime: new Date().toISOString() } : c,
      );
      await edge.request({
        method: 'PATCH',
        path: `${syncPath(ns(), 'app')}/status`,
        contentType: 'application/merge-patch+json',
        body: { status: { conditions } },
      });
      const mirrored = await proxyReady('app', 'False', 'HealthCheckFailed');
      expect(readyOf(mirrored)?.message).toBe('written by the test');
      // The reconcile that mirrored it was woken by the watch event (its log line may trail the status write).
      const causes = await eventually('the reconcile woken by the watch', async () => {
        const c = reconciledSince(hub, 'ProxySync', 'app', since).flatMap((l) => l.causes as string[]);
        return c.length > 0 ? c : undefined;
      });
      expect(causes).toContain(`owned object updated: ${ns()}_app_syncprims.dev_Sync in ${edgeCluster()}`);
      // Every request to edge-1 is logged (trace): the apply of the test before is there; none since reads Syncs but a watch.
      expect(hub.logs.some((l) => l.msg === 'request' && l.cluster === edgeCluster() && l.method === 'PATCH')).toBe(true);
      const requests = hub.logs.filter((l) => l.msg === 'request' && l.cluster === edgeCluster() && at(l) >= since);
      expect(requests.filter((l) => String(l.path).includes('/syncs') && !String(l.query).includes('watch'))).toEqual([]);
    } finally {
      spoke = await OperatorProcess.start(EDGE, spokeArgs());
    }
    await proxyReady('app', 'True', 'Succeeded');
  });

  test('with the mgmt operator stopped, edge-1 keeps itself converged', async () => {
    await hub.stop('SIGTERM');
    try {
      await edge.request({ method: 'PATCH', path: cmPath('app-cm'), contentType: 'application/merge-patch+json', body: { data: { value: 'edited' } } });
      await edge.request({
        method: 'PATCH',
        path: syncPath(ns(), 'app'),
        contentType: 'application/merge-patch+json',
        body: { metadata: { annotations: { 'syncprims.dev/reconcile-requested-at': 'from-edge' } } },
      });
      await eventually('edge-1 corrected the edit on its own', async () => ((await find<CM>(edge, cmPath('app-cm')))?.data?.value === 'v1' ? true : undefined));
    } finally {
      hub = await OperatorProcess.start(HOME, hubArgs());
    }
    await proxyReady('app', 'True', 'Succeeded');
  });

  test('a restart of either operator over a converged ProxySync writes nothing in either cluster', async () => {
    await proxyReady('app', 'True', 'Succeeded');
    await Promise.all([hub.stop('SIGTERM'), spoke.stop('SIGTERM')]);
    const since = new Date();
    [hub, spoke] = await Promise.all([OperatorProcess.start(HOME, hubArgs()), OperatorProcess.start(EDGE, spokeArgs())]);
    await eventually('both reconciled again', async () =>
      hub.reconcilesOf('ProxySync', ns(), 'app') > 0 && spoke.reconcilesOf('Sync', ns(), 'app') > 0 ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await writesSince(HOME, since, OPERATOR_UA)).toEqual([]);
    expect(await writesSince(EDGE, since, OPERATOR_UA)).toEqual([]);
  });

  test('suspended, it writes nothing in edge-1 but still mirrors; a Sync in mgmt that depends on it waits for it', async () => {
    await applyProxySync(mgmt, ns(), 'app', { clusterRef: { name: 'edge-1' }, suspend: true, template: { spec: { source: { inline: [configMap('app-cm', 'v2')] } } } });
    const held = await proxyReady('app', 'True', 'Suspended');
    const since = new Date(Date.now() - 500);
    // A Sync in mgmt depending on the ProxySync: met while its mirrored status is Ready.
    await applySync(mgmt, ns(), 'after-app', { dependsOn: [{ kind: 'ProxySync', name: 'app' }], source: { inline: [configMap('after-app')] } });
    await waitForReady(mgmt, ns(), 'after-app', 'True', 'Succeeded');
    // The remote Sync's status changes (written here, with edge-1's operator stopped): mirrored although suspended.
    await spoke.stop('SIGTERM');
    try {
      const remote = (await edgeSync('app'))!;
      const drifted = async () => (await eventsFor(mgmt, ns(), 'app')).filter((e) => e.reason === 'Drifted').map((e) => [e.message, e.count]);
      const driftedBefore = await drifted();
      // A hand edit of a field the template sets, then a status change: once the status is mirrored, the
      // ProxySync has handled both events, and a suspended one leaves the edit as it is (no write, no Drifted Event).
      const handEdit = { source: { inline: [configMap('hand-edit-while-suspended')] } };
      await edge.request({ method: 'PATCH', path: syncPath(ns(), 'app'), query: { fieldManager: 'kubectl-patch' }, contentType: 'application/merge-patch+json', body: { spec: handEdit } });
      await edge.request({
        method: 'PATCH',
        path: `${syncPath(ns(), 'app')}/status`,
        contentType: 'application/merge-patch+json',
        body: { status: { lastAttemptedRevision: 'sha256:from-the-test' } },
      });
      await eventually('the remote status mirrored while suspended', async () =>
        (await getSync(mgmt, ns(), 'app', PROXYSYNCS)).status?.lastAttemptedRevision === 'sha256:from-the-test' ? true : undefined,
      );
      expect((await edgeSync('app'))?.spec).toEqual({ ...remote.spec, ...handEdit });
      expect((await writesSince(EDGE, since, OPERATOR_UA)).filter((e) => e.userAgent?.includes(`(${HOME})`))).toEqual([]);
      expect(await drifted()).toEqual(driftedBefore);
      // Its dependent now waits: the revision it mirrors is being applied there.
      await applySync(mgmt, ns(), 'after-app', { dependsOn: [{ kind: 'ProxySync', name: 'app' }], source: { inline: [configMap('after-app', 'v2')] } });
      const waiting = await waitForReady(mgmt, ns(), 'after-app', 'False', 'DependencyNotReady');
      expect(JSON.stringify(waiting.status)).toContain('"kind":"ProxySync"');
      expect(readyOf(held)?.status).toBe('True');
    } finally {
      spoke = await OperatorProcess.start(EDGE, spokeArgs());
    }

    // Resumed: the template's change reaches edge-1, and the dependent goes on once the ProxySync is Ready again.
    await applyProxySync(mgmt, ns(), 'app', { clusterRef: { name: 'edge-1' }, template: { spec: { source: { inline: [configMap('app-cm', 'v2')] } } } });
    await eventually('v2 in edge-1', async () => ((await find<CM>(edge, cmPath('app-cm')))?.data?.value === 'v2' ? true : undefined));
    expect((await edgeSync('app'))?.spec.source).toEqual({ inline: [configMap('app-cm', 'v2')] });
    await proxyReady('app', 'True', 'Succeeded');
    await waitForReady(mgmt, ns(), 'after-app', 'True', 'Succeeded');
  });

  test('a ConfigMap source is copied and kept in step (not Ready until the remote Sync has handled it); renaming it removes the old copy', async () => {
    const manifests = (name: string, value: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns() },
      data: { 'all.yaml': JSON.stringify(configMap('from-source', value)) },
    });
    const putSource = (name: string, value: string) =>
      mgmt.request({ method: 'PATCH', path: cmPath(name), query: { fieldManager: 'test', force: true }, contentType: 'application/apply-patch+yaml', body: manifests(name, value) });
    await putSource('manifests', 'v1');
    const spec = (source: string) => ({ clusterRef: { name: 'edge-1' }, template: { spec: { source: { configMap: { name: source } } } } });
    await applyProxySync(mgmt, ns(), 'copy', spec('manifests'));
    await proxyReady('copy', 'True', 'Succeeded');
    expect((await find<CM>(edge, cmPath('manifests')))?.metadata.labels).toMatchObject({ 'syncprims.dev/owner-kind': 'ProxySync', 'syncprims.dev/owner-name': 'copy' });
    expect((await find<CM>(edge, cmPath('from-source')))?.data?.value).toBe('v1');

    // The line of that transition trails the status it wrote: counted from after it, not from a time it may follow.
    const copyMirrored = (l: LogLine): boolean => l.msg === 'remote status mirrored' && l.name === 'copy';
    await eventually('the first Succeeded logged', async () => (hub.logs.filter(copyMirrored).at(-1)?.reason === 'Succeeded' ? true : undefined));
    const from = hub.logs.length;
    await putSource('manifests', 'v2');
    await eventually('v2 applied in edge-1', async () => ((await find<CM>(edge, cmPath('from-source')))?.data?.value === 'v2' ? true : undefined));
    await proxyReady('copy', 'True', 'Succeeded');
    // The Ready transitions seen meanwhile (log lines may trail the status): not Ready until the remote Sync handled v2.
    const mirrored = (): unknown[] => hub.logs.slice(from).filter(copyMirrored).map((l) => l.reason);
    const between = await eventually('the mirrored transitions', async () => (mirrored().at(-1) === 'Succeeded' ? mirrored() : undefined));
    expect(between[0]).toBe('RemoteNotReady');

    // A hand edit of the copy in edge-1 is drift: put back at once, woken by the watch with no reconcile
    // request, and the Event names its author and the field (the remote Sync then applies v2 again).
    const edited = Date.now();
    const copied = JSON.stringify(configMap('from-source', 'v2'));
    await edge.request({
      method: 'PATCH',
      path: cmPath('manifests'),
      query: { fieldManager: 'kubectl-patch' },
      contentType: 'application/merge-patch+json',
      body: { data: { 'all.yaml': JSON.stringify(configMap('from-source', 'hand-edit')) } },
    });
    const drifted = await eventually('a Drifted Event on the ProxySync', async () => (await eventsFor(mgmt, ns(), 'copy')).find((e) => e.reason === 'Drifted'));
    expect(drifted.message).toBe(`ConfigMap/${ns()}/manifests: .data["all.yaml"] changed by kubectl-patch; corrected`);
    expect((await find<CM>(edge, cmPath('manifests')))?.data?.['all.yaml']).toBe(copied);
    // The reconcile's line comes after its Event (and the status it brings back).
    await eventually('the correcting reconcile, woken by the drift', async () =>
      reconciledSince(hub, 'ProxySync', 'copy', edited).flatMap((l) => l.causes as string[]).find((c) => c.startsWith('owned object drifted: ') && c.endsWith(` in ${edgeCluster()}`)),
    );
    expect((await getSync(mgmt, ns(), 'copy', PROXYSYNCS)).metadata.annotations?.['syncprims.dev/reconcile-requested-at']).toBeUndefined();
    await eventually('v2 in edge-1 again', async () => ((await find<CM>(edge, cmPath('from-source')))?.data?.value === 'v2' ? true : undefined));
    // Deleted by hand: recreated, and said so.
    await edge.request({ method: 'DELETE', path: cmPath('manifests') });
    await eventually('an Event of the copy recreated', async () =>
      (await eventsFor(mgmt, ns(), 'copy')).find((e) => e.reason === 'Drifted' && e.message.startsWith(`ConfigMap/${ns()}/manifests: deleted, not by this sync; recreated`)),
    );
    expect((await find<CM>(edge, cmPath('manifests')))?.data?.['all.yaml']).toBe(copied);

    await putSource('manifests-2', 'v2');
    await applyProxySync(mgmt, ns(), 'copy', spec('manifests-2'));
    await eventually('the old copy removed', async () => ((await find(edge, cmPath('manifests'))) === undefined ? true : undefined));
    expect(await find(edge, cmPath('manifests-2'))).toBeDefined();
    await proxyReady('copy', 'True', 'Succeeded');

    // A template that renames the remote Sync: the new one is created, the old one deleted (and it prunes there).
    await applyProxySync(mgmt, ns(), 'copy', { ...spec('manifests-2'), template: { metadata: { name: 'copy-2' }, spec: { source: { configMap: { name: 'manifests-2' } } } } });
    await eventually('the old remote Sync gone', async () => ((await edgeSync('copy')) === undefined ? true : undefined));
    const renamed = await proxyReady('copy', 'True', 'Succeeded');
    expect((renamed.status as Record<string, unknown>).remote).toMatchObject({ name: 'copy-2' });
    expect(await find<CM>(edge, cmPath('from-source'))).toBeDefined();
  });

  test('deleting a ProxySync removes the remote Sync and, through it, its objects; with Orphan the remote Sync stays', async () => {
    await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'copy', PROXYSYNCS) });
    await eventually('the ProxySync gone', async () => ((await find(mgmt, syncPath(ns(), 'copy', PROXYSYNCS))) === undefined ? true : undefined));
    expect(await edgeSync('copy-2')).toBeUndefined();
    expect(await find(edge, cmPath('from-source'))).toBeUndefined();
    expect(await find(edge, cmPath('manifests-2'))).toBeUndefined();

    await applyProxySync(mgmt, ns(), 'orphan', {
      clusterRef: { name: 'edge-1' },
      deletionPolicy: 'Orphan',
      template: { spec: { source: { inline: [configMap('orphan-cm')] } } },
    });
    await proxyReady('orphan', 'True', 'Succeeded');
    await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'orphan', PROXYSYNCS) });
    await eventually('the Orphan ProxySync gone', async () => ((await find(mgmt, syncPath(ns(), 'orphan', PROXYSYNCS))) === undefined ? true : undefined));
    expect(await edgeSync('orphan')).toBeDefined();
    expect(await find(edge, cmPath('orphan-cm'))).toBeDefined();
    expect((await eventsFor(mgmt, ns(), 'orphan')).some((e) => e.reason === 'Orphaned')).toBe(true);
  });

  test('a remote Sync that another ProxySync keeps is a conflict, taken over the moment that one lets it go', async () => {
    const spec = (value: string) => ({ clusterRef: { name: 'edge-1' }, template: { metadata: { name: 'contested' }, spec: { source: { inline: [configMap('contested-cm', value)] } } } });
    await applyProxySync(mgmt, ns(), 'holder', spec('holder'));
    await proxyReady('holder', 'True', 'Succeeded');
    await applyProxySync(mgmt, ns(), 'claimant', spec('claimant'));
    const conflict = await proxyReady('claimant', 'False', 'OwnershipConflict');
    expect(readyOf(conflict)?.message).toBe(`the Sync ${ns()}/contested in cluster ${edgeCluster()} is owned by ProxySync/${ns()}/holder: left alone`);
    // The holder deleted: its remote Sync goes (its finalizer prunes there), and that deletion, seen by the
    // watch of edge-1, wakes the claimant (a conflict has no retry timer).
    const released = Date.now();
    await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'holder', PROXYSYNCS) });
    await proxyReady('claimant', 'True', 'Succeeded');
    expect((await edgeSync('contested'))?.metadata.labels?.['syncprims.dev/owner-name']).toBe('claimant');
    await eventually('the claimant\'s ConfigMap in edge-1', async () => ((await find<CM>(edge, cmPath('contested-cm')))?.data?.value === 'claimant' ? true : undefined));
    const causes = reconciledSince(hub, 'ProxySync', 'claimant', released).flatMap((l) => l.causes as string[]);
    expect(causes).toContain(`owned object released: ${ns()}_contested_syncprims.dev_Sync in ${edgeCluster()}`);
  });

  test('through an identity confined to its namespace in edge-1 (no right to create namespaces), in a namespace that exists', async () => {
    const rules = [
      { apiGroups: ['syncprims.dev'], resources: ['syncs'], verbs: ['*'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['*'] },
    ];
    // The namespace is there (made by the earlier cases' ProxySyncs, or here when this case runs alone).
    await edge.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns() } } }).catch(() => undefined);
    await putKubeconfigSecret(mgmt, ns(), 'tenant-kubeconfig', await serviceAccountKubeconfig(edge, EDGE, ns(), 'tenant', rules));
    await applyProxySync(mgmt, ns(), 'tenant', { kubeConfig: { secretRef: { name: 'tenant-kubeconfig' } }, template: { spec: { source: { inline: [configMap('tenant-cm')] } } } });
    await proxyReady('tenant', 'True', 'Succeeded');
    expect((await edgeSync('tenant'))?.metadata.labels?.['syncprims.dev/owner-name']).toBe('tenant');
    expect(await find(edge, cmPath('tenant-cm'))).toBeDefined();

    // A namespace of edge-1 where the identity has no rights: refused, and said so (status and Event), not
    // retried in silence; granted the rights, it goes on at the failure retry (min(interval, 30 s): 2 s here).
    const other = `${ns()}-other`;
    await edge.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: other, labels: { [TEST_LABEL]: 'true' } } } });
    try {
      const elsewhere = { kubeConfig: { secretRef: { name: 'tenant-kubeconfig' } }, template: { metadata: { namespace: other }, spec: { interval: '2s', source: { inline: [configMap('tenant-cm')] } } } };
      await applyProxySync(mgmt, ns(), 'tenant-elsewhere', elsewhere);
      const refused = await proxyReady('tenant-elsewhere', 'False', 'ApplyFailed');
      expect(readyOf(refused)?.message).toMatch(new RegExp(`^cluster ${ns()}/tenant-kubeconfig refused .*forbidden: User "system:serviceaccount:${ns()}:tenant" cannot`));
      await eventually('an ApplyFailed Event', async () => (await eventsFor(mgmt, ns(), 'tenant-elsewhere')).find((e) => e.reason === 'ApplyFailed' && e.type === 'Warning'));
      await bindRole(edge, other, 'tenant', rules, { name: 'tenant', namespace: ns() });
      // Created there (edge-1's operator of this test reconciles only the test's namespace: it stays unobserved).
      await proxyReady('tenant-elsewhere', 'Unknown', 'RemoteNotReady');
      expect(await find<SyncObject>(edge, syncPath(other, 'tenant-elsewhere'))).toBeDefined();

      // Deleted while the identity may not delete Syncs there: the ProxySync says so and stays; allowed, it goes.
      const role = (verbs: string[]) => ({ rules: [{ apiGroups: ['syncprims.dev'], resources: ['syncs'], verbs }, rules[1]] });
      const setRole = (verbs: string[]) =>
        edge.request({ method: 'PATCH', path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${other}/roles/tenant`, contentType: 'application/merge-patch+json', body: role(verbs) });
      await setRole(['get', 'list', 'watch', 'create', 'patch', 'update']);
      await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'tenant-elsewhere', PROXYSYNCS) });
      const stuck = await proxyReady('tenant-elsewhere', 'False', 'PruneFailed');
      expect(readyOf(stuck)?.message).toMatch(/^deletion waits: deleting the remote Sync failed: .*cannot delete resource "syncs"/);
      expect(await find<SyncObject>(edge, syncPath(other, 'tenant-elsewhere'))).toBeDefined();
      await setRole(['*']);
      await eventually('tenant-elsewhere gone once allowed', async () => ((await find(mgmt, syncPath(ns(), 'tenant-elsewhere', PROXYSYNCS))) === undefined ? true : undefined));
      expect(await find<SyncObject>(edge, syncPath(other, 'tenant-elsewhere'))).toBeUndefined();
    } finally {
      await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'tenant-elsewhere', PROXYSYNCS) }).catch(() => undefined);
      await eventually('tenant-elsewhere gone', async () => ((await find(mgmt, syncPath(ns(), 'tenant-elsewhere', PROXYSYNCS))) === undefined ? true : undefined));
      await edge.request({ method: 'DELETE', path: `/api/v1/namespaces/${other}` }).catch(() => undefined);
    }
  });

  test('a remote Sync that a ProxySync of the same namespace and name keeps from another managing cluster (another origin) is a conflict naming that cluster, never taken over', async () => {
    const labels = { 'syncprims.dev/owner-kind': 'ProxySync', 'syncprims.dev/owner-namespace': ns(), 'syncprims.dev/owner-name': 'twin', 'syncprims.dev/origin': 'another-mgmt' };
    await edge.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns() } } }).catch(() => undefined);
    const theirs = { source: { inline: [configMap('twin-theirs-cm')] } };
    await edge.request({ method: 'POST', path: syncPath(ns(), ''), body: { apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'twin-sync', namespace: ns(), labels }, spec: theirs } });
    await applyProxySync(mgmt, ns(), 'twin', { clusterRef: { name: 'edge-1' }, template: { metadata: { name: 'twin-sync' }, spec: { source: { inline: [configMap('twin-ours-cm')] } } } });
    const conflict = await proxyReady('twin', 'False', 'OwnershipConflict');
    expect(readyOf(conflict)?.message).toBe(`the Sync ${ns()}/twin-sync in cluster ${edgeCluster()} is owned by ProxySync/${ns()}/twin (applied from managing cluster another-mgmt): left alone`);
    expect((await edgeSync('twin-sync'))?.spec?.source).toEqual(theirs.source);
    // Deleted, it leaves the other cluster's Sync where it is.
    await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'twin', PROXYSYNCS) });
    await eventually('twin gone', async () => ((await find(mgmt, syncPath(ns(), 'twin', PROXYSYNCS))) === undefined ? true : undefined));
    expect((await edgeSync('twin-sync'))?.metadata.labels).toMatchObject(labels);
  });

  test('two ProxySyncs of one source ConfigMap in one remote namespace: the copy is a conflict, taken over the moment the first lets it go', async () => {
    await mgmt.request({
      method: 'PATCH',
      path: cmPath('shared-src'),
      query: { fieldManager: 'test', force: true },
      contentType: 'application/apply-patch+yaml',
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared-src', namespace: ns() }, data: { 'all.yaml': JSON.stringify(configMap('from-shared-src')) } },
    });
    const spec = { clusterRef: { name: 'edge-1' }, template: { spec: { source: { configMap: { name: 'shared-src' } } } } };
    await applyProxySync(mgmt, ns(), 'first-copier', spec);
    await proxyReady('first-copier', 'True', 'Succeeded');
    await applyProxySync(mgmt, ns(), 'second-copier', spec);
    const conflict = await proxyReady('second-copier', 'False', 'OwnershipConflict');
    expect(readyOf(conflict)?.message).toBe(`ConfigMap ${ns()}/shared-src in cluster ${edgeCluster()} is owned by ProxySync/${ns()}/first-copier: left alone`);
    // The first deleted: it deletes its remote Sync, then its copy; that deletion wakes the second (no retry timer).
    const released = Date.now();
    await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'first-copier', PROXYSYNCS) });
    await proxyReady('second-copier', 'True', 'Succeeded');
    expect((await find<CM>(edge, cmPath('shared-src')))?.metadata.labels?.['syncprims.dev/owner-name']).toBe('second-copier');
    const causes = reconciledSince(hub, 'ProxySync', 'second-copier', released).flatMap((l) => l.causes as string[]);
    expect(causes).toContain(`owned object released: ${ns()}_shared-src__ConfigMap in ${edgeCluster()}`);
  });
});

describe('registration', () => {
  const REG = 'reg-edge';
  let reg: KubeClient;
  let regOp: OperatorProcess | undefined;

  beforeAll(async () => {
    await ensureClusters([REG]);
    reg = await clusterClient(REG);
    await removeSyncprimsCrds(reg);
  }, 180_000);

  afterAll(async () => {
    await regOp?.stop('SIGTERM');
    await reg?.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}` }).catch(() => undefined);
  });

  test('an operator started before its CRDs waits, not ready; a RemoteSync installs them, and a ProxySync depending on it drives a Sync there', async () => {
    regOp = await OperatorProcess.start(REG, ['--namespace', ns(), '--log-level', 'debug']);
    await regOp.waitForLog('the wait for the CRDs', (l) => String(l.msg).startsWith('waiting for the syncs.syncprims.dev CRD'));
    expect(await regOp.readyz()).toBe(503);

    await putKubeconfigSecret(mgmt, ns(), 'reg-kubeconfig', await kubeconfigOf(REG));
    const cluster = { kubeConfig: { secretRef: { name: 'reg-kubeconfig' } } };
    await applyProxySync(mgmt, ns(), 'reg-app', {
      ...cluster,
      dependsOn: [{ kind: 'RemoteSync', name: 'register' }],
      template: { spec: { source: { inline: [configMap('registered')] } } },
    });
    const first = await eventually('the ProxySync waiting', async () => {
      const s = await getSync(mgmt, ns(), 'reg-app', PROXYSYNCS);
      return readyOf(s) ? s : undefined;
    });
    expect(['DependencyNotReady', 'CRDNotInstalled']).toContain(readyOf(first)?.reason);
    // One that does not wait for the registration says what is missing there, and recovers by itself.
    await applyProxySync(mgmt, ns(), 'reg-early', { ...cluster, template: { spec: { source: { inline: [configMap('early')] } } } });
    const early = await proxyReady('reg-early', 'False', 'CRDNotInstalled');
    expect(readyOf(early)?.message).toContain('does not serve syncprims.dev/v1alpha1 Syncs: register it first');
    const registering = Date.now();
    await applyRemoteSync(mgmt, ns(), 'register', { ...cluster, source: { inline: customResourceDefinitions() } });
    await waitForReady(mgmt, ns(), 'register', 'True', 'Succeeded', 60_000, REMOTESYNCS);

    await regOp!.waitReady('the edge operator ready');
    const ready = await proxyReady('reg-app', 'True', 'Succeeded', 120_000);
    const remote = await find<SyncObject>(reg, syncPath(ns(), 'reg-app'));
    expect(ready.status?.lastAppliedRevision).toBe(remote?.status?.lastAppliedRevision);
    expect(await find(reg, cmPath('registered'))).toBeDefined();
    await proxyReady('reg-early', 'True', 'Succeeded');
    // It was woken by the Sync CRD's arrival there (a watch of that cluster's CRDs), not by its 10 s look.
    await hub.waitForCause('ProxySync', ns(), 'reg-early', `CRD established: syncs.syncprims.dev in ${ns()}/reg-kubeconfig`, registering);
  }, 300_000);
});

/** When a log line was written (pino's ISO time), in epoch ms. */
const at = (l: LogLine): number => Date.parse(String(l.time));

function reconciledSince(op: OperatorProcess, kind: string, name: string, since: number): LogLine[] {
  return op.logs.filter((l) => l.msg === 'reconciled' && l.kind === kind && l.namespace === ns() && l.name === name && at(l) >= since);
}

/** A cluster as before registration: no syncprims CRDs (objects of earlier runs let go of first). */
async function removeSyncprimsCrds(client: KubeClient): Promise<void> {
  const namespaces = await client.request<{ items: { metadata: { name: string } }[] }>({ path: '/api/v1/namespaces' });
  for (const n of namespaces.items) await releaseSyncFinalizers(client, n.metadata.name);
  for (const crd of customResourceDefinitions()) {
    await client.request({ method: 'DELETE', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}` }).catch(() => undefined);
  }
  await eventually('the syncprims CRDs gone', async () => {
    for (const crd of customResourceDefinitions()) {
      if (await find(client, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`)) return undefined;
    }
    return true;
  }, 120_000);
}
