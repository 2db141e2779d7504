// A ProxySync whose remote Sync is suspended in edge-1 by hand (spec.suspend
// set by a field manager other than ours, not by the template): the edge
// applies nothing the ProxySync gives it, so the ProxySync is not Ready
// (RemoteSuspended, naming who suspended it) until it is resumed there and
// has applied the new revision. A template that itself suspends the remote
// Sync is mirrored as before. An operator per cluster, as separate processes.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import { clusterClient, closeClients, ensureClusters } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { releaseSyncFinalizers, useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { applyProxySync, kubeconfigOf, PROXYSYNCS, putKubeconfigSecret } from '../support/remote.js';
import { eventsFor, find, readyOf, syncPath, waitForReady, type SyncObject } from '../support/syncs.js';

const HOME = 'mgmt';
const EDGE = 'edge-1';
/** Whoever suspends the remote Sync by hand in edge-1. */
const HAND = 'ops-oncall';
let mgmt: KubeClient;
let edge: KubeClient;
const operators: OperatorProcess[] = [];
const ns = useTestNamespace(HOME, 'psusp');

beforeAll(async () => {
  await ensureClusters([HOME, EDGE]);
  [mgmt, edge] = await Promise.all([clusterClient(HOME), clusterClient(EDGE)]);
  await Promise.all([installCrds(HOME), installCrds(EDGE)]);
  await putKubeconfigSecret(mgmt, ns(), 'edge-1-kubeconfig', await kubeconfigOf(EDGE));
  operators.push(...(await Promise.all([OperatorProcess.start(HOME, ['--namespace', ns(), '--cluster-id', 'mgmt-suspend-test']), OperatorProcess.start(EDGE, ['--namespace', ns()])])));
}, 120_000);

afterAll(async () => {
  await Promise.all(operators.map((o) => o.stop('SIGTERM')));
  // The remote Syncs live in edge-1, in a namespace named as the test's.
  if (edge) {
    await edge.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}` }).catch(() => undefined);
    await releaseSyncFinalizers(edge, ns());
  }
  await closeClients();
});

const configMap = (value: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app-cm', namespace: ns() }, data: { value } });
const proxySync = (value: string, templateSpec: Record<string, unknown> = {}) =>
  applyProxySync(mgmt, ns(), 'app', { clusterRef: { name: 'edge-1' }, template: { spec: { source: { inline: [configMap(value)] }, ...templateSpec } } });
const proxyReady = (status: 'True' | 'False', reason: string): Promise<SyncObject> => waitForReady(mgmt, ns(), 'app', status, reason, 60_000, PROXYSYNCS);
const edgeValue = async (): Promise<string | undefined> => (await find<{ data?: { value?: string } }>(edge, `/api/v1/namespaces/${ns()}/configmaps/app-cm`))?.data?.value;
/** A merge patch of the remote Sync's spec in edge-1, as the field manager HAND. */
const byHand = (spec: Record<string, unknown>) =>
  edge.request({ method: 'PATCH', path: syncPath(ns(), 'app'), query: { fieldManager: HAND }, contentType: 'application/merge-patch+json', body: { spec } });

describe('a ProxySync whose remote Sync is suspended by hand in edge-1', () => {
  test('is RemoteSuspended, naming who, for a template change the edge never applied; resumed, it is Ready with the new revision', async () => {
    await proxySync('v1');
    const before = await proxyReady('True', 'Succeeded');
    await byHand({ suspend: true });
    // managedFields times are in whole seconds: our apply of v2 comes in a later second than the suspension,
    // so that edge-1's watch (which keeps only our entry and those written since) no longer has the suspender's.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await proxySync('v2');

    const held = await proxyReady('False', 'RemoteSuspended');
    expect(readyOf(held)?.message).toContain(`suspended by hand, by field manager ${HAND}`);
    expect(readyOf(held)?.message).toContain(`the remote Sync ${ns()}/app in cluster edge-1`);
    // The edge has not applied it: the template's change is in its spec, not in its cluster.
    const remote = (await find<SyncObject>(edge, syncPath(ns(), 'app')))!;
    expect(remote.spec.suspend).toBe(true);
    expect(remote.spec.source).toEqual({ inline: [configMap('v2')] });
    expect(await edgeValue()).toBe('v1');
    expect(held.status?.lastAppliedRevision).toBe(before.status?.lastAppliedRevision);
    await eventually('a Warning Event saying so', async () =>
      (await eventsFor(mgmt, ns(), 'app')).some((e) => e.type === 'Warning' && e.reason === 'RemoteSuspended' && e.message.includes(HAND)) ? true : undefined,
    );
    // The remote operator's status writes that follow (its suspension observed) do not change what it says.
    await eventually('the remote Sync to observe its generation', async () => {
      const s = await find<SyncObject>(edge, syncPath(ns(), 'app'));
      return s?.status?.observedGeneration === s?.metadata.generation ? true : undefined;
    });
    expect(readyOf(await proxyReady('False', 'RemoteSuspended'))?.message).toBe(readyOf(held)?.message);

    await byHand({ suspend: null });
    const resumed = await proxyReady('True', 'Succeeded');
    expect(await edgeValue()).toBe('v2');
    const applied = (await find<SyncObject>(edge, syncPath(ns(), 'app')))!.status?.lastAppliedRevision;
    expect(resumed.status?.lastAppliedRevision).toBe(applied);
    expect(applied).not.toBe(before.status?.lastAppliedRevision);
  });

  test('a template that itself suspends the remote Sync is mirrored as before: Ready keeps its status, reason Suspended', async () => {
    await proxySync('v3', { suspend: true });
    const suspended = await proxyReady('True', 'Suspended');
    expect(readyOf(suspended)?.message).toMatch(/^suspended: /);
    expect(await edgeValue()).toBe('v2');
  });
});
