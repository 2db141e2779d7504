// The shared informer against real API servers: primed before use, WatchList
// where served and LIST+WATCH where not, resumption after an apiserver
// restart, and a silent watch restarted behind a stalling proxy.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { KubeClient, type RequestRecord } from '../../src/kube/client.js';
import { serverSideApply } from '../../src/kube/apply.js';
import { Discovery } from '../../src/kube/discovery.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { ClusterCache } from '../../src/runtime/cache.js';
import { Informer, type InformerEvent } from '../../src/runtime/informer.js';
import { OperatorMetrics } from '../../src/runtime/metrics.js';
import { closeClients, clusterClient, controlplane, ensureClusters, kubeconfigViaPort } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { StallingProxy } from '../support/stalling-proxy.js';

/** The shared cluster it reads (its restart and WatchList cases have clusters of their own). */
const HOME = 'mgmt';

const CONFIGMAPS = { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true };
const stops: (() => Promise<void> | void)[] = [];

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await closeClients();
});

async function createConfigMaps(client: KubeClient, namespace: string, names: string[]): Promise<void> {
  await Promise.all(
    names.map((name) =>
      client.request({
        method: 'POST',
        path: `/api/v1/namespaces/${namespace}/configmaps`,
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { set: 'informer' } } },
      }),
    ),
  );
}

function startInformer(client: KubeClient, namespace: string, extra: Partial<ConstructorParameters<typeof Informer>[0]> = {}) {
  const informer = new Informer<KubeObject>({ client, resource: CONFIGMAPS, namespace, ...extra });
  stops.push(() => informer.stop());
  return informer;
}

function record(client: KubeClient): RequestRecord[] {
  const seen: RequestRecord[] = [];
  stops.push(client.observe((r) => seen.push(r)));
  return seen;
}

describe('informer on v1.36 (WatchList served)', () => {
  const ns = useTestNamespace(HOME, 'informer');
  let client: KubeClient;
  beforeAll(async () => {
    client = await clusterClient(HOME);
  });

  test('is primed with the whole set through one WatchList stream, then follows changes', async () => {
    const names = Array.from({ length: 120 }, (_, i) => `cm-${i}`);
    await createConfigMaps(client, ns(), names);
    const requests = record(client);
    const informer = startInformer(client, ns(), { listPageSize: 50 });
    const events: InformerEvent<KubeObject>[] = [];
    informer.onEvent((e) => events.push(e));

    await informer.start();
    expect(informer.store.size).toBe(120);
    expect(informer.protocol).toBe('WatchList');
    expect(informer.store.list().every((o) => o.metadata.managedFields === undefined)).toBe(true);
    const first = requests.find((r) => r.url.pathname === `/api/v1/namespaces/${ns()}/configmaps`);
    expect(Object.fromEntries(first?.url.searchParams ?? [])).toMatchObject({
      watch: '1',
      sendInitialEvents: 'true',
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: 'true',
      resourceVersion: '',
    });
    expect(Number(first?.url.searchParams.get('timeoutSeconds'))).toBeGreaterThanOrEqual(300);
    // No LIST was needed.
    expect(requests.filter((r) => !r.url.searchParams.has('watch'))).toEqual([]);
    expect(events.filter((e) => e.type === 'added')).toHaveLength(120);

    await createConfigMaps(client, ns(), ['late']);
    await client.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}/configmaps/cm-0` });
    await eventually('the watch to deliver the changes', async () =>
      informer.store.get(`${ns()}/late`) && !informer.store.get(`${ns()}/cm-0`) ? true : undefined,
    );
    expect(events.slice(-2).map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['added', 'late'],
      ['deleted', 'cm-0'],
    ]);
  });

  test('indexes answer lookups by label without a scan', async () => {
    const informer = startInformer(client, ns());
    await informer.start();
    informer.store.addIndex('set', (o) => (o.metadata.labels?.set ? [o.metadata.labels.set] : []));
    expect(informer.store.byIndex('set', 'informer').length).toBe(informer.store.size);
    expect(informer.store.byIndex('set', 'other')).toEqual([]);
  });

  test('keeps our managedFields entry, one copy of each field set for objects of one shape', async () => {
    const applied = (name: string, data: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns(), labels: { shape: 'x' } }, data });
    const discovery = new Discovery(client);
    for (const [name, data] of [['same-a', { a: '1' }], ['same-b', { a: '2' }], ['other', { b: '1' }]] as const) {
      await serverSideApply(client, discovery, applied(name, data), { fieldManager: 'syncprims' });
    }
    // Another manager's later write is kept too (it says who changed what), with its own set.
    await serverSideApply(client, discovery, applied('same-b', { c: '1' }), { fieldManager: 'someone' });
    const informer = startInformer(client, ns(), { labelSelector: 'shape=x', keepManagedFieldsOf: 'syncprims' });
    await informer.start();
    const entries = (name: string) => informer.store.get(`${ns()}/${name}`)?.metadata.managedFields as { manager: string; fieldsV1: object }[];
    expect(entries('same-a').map((e) => e.manager)).toEqual(['syncprims']);
    expect(entries('same-b').map((e) => e.manager)).toEqual(['syncprims', 'someone']);
    expect(entries('same-a')[0]!.fieldsV1).toEqual({ 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:shape': {} } } });
    expect(entries('same-b')[0]!.fieldsV1).toBe(entries('same-a')[0]!.fieldsV1);
    expect(entries('other')[0]!.fieldsV1).not.toBe(entries('same-a')[0]!.fieldsV1);
    expect(entries('other')[0]!.fieldsV1).toEqual({ 'f:data': { 'f:b': {} }, 'f:metadata': { 'f:labels': { 'f:shape': {} } } });
  });

  test('a shared cache hands out one primed informer per kind and selector', async () => {
    const cache = new ClusterCache(client, new Discovery(client), { namespace: ns() });
    stops.push(() => cache.stop());
    const [a, b] = await Promise.all([cache.informer('v1', 'ConfigMap'), cache.informer('v1', 'ConfigMap')]);
    expect(a).toBe(b);
    expect(a.hasSynced).toBe(true);
    expect(a.store.size).toBeGreaterThan(100);
    const selected = await cache.informer('v1', 'ConfigMap', { labelSelector: 'set=none' });
    expect(selected).not.toBe(a);
    expect(selected.store.size).toBe(0);
    expect(cache.primed).toBe(true);
  });
});

describe('informer without WatchList (gate off)', () => {
  beforeAll(async () => {
    await ensureClusters(['nowl'], { nowl: 'WatchList=false' });
  });
  const ns = useTestNamespace('nowl', 'informer');

  test('falls back to LIST then WATCH from the list resource version', async () => {
    const client = await clusterClient('nowl');
    await createConfigMaps(client, ns(), ['a', 'b', 'c']);
    const requests = record(client);
    const informer = startInformer(client, ns(), { listPageSize: 2 });
    await informer.start();
    expect(informer.protocol).toBe('ListWatch');
    expect(informer.store.size).toBe(3);
    const paths = requests.map((r) => Object.fromEntries(r.url.searchParams));
    expect(paths[0]).toMatchObject({ watch: '1', sendInitialEvents: 'true' }); // refused with 422
    expect(requests[0]?.status).toBe(422);
    expect(paths[1]).toMatchObject({ limit: '2' });
    expect(paths[2]).toMatchObject({ limit: '2', continue: expect.any(String) });
    const listVersion = informer.lastSyncResourceVersion;
    await eventually('the follow-up watch', async () => (requests.length >= 4 ? true : undefined));
    const watch = Object.fromEntries(requests[3]?.url.searchParams ?? []);
    expect(watch).toMatchObject({ watch: '1', allowWatchBookmarks: 'true', resourceVersion: listVersion });
    expect(listVersion).toMatch(/^\d+$/);
    expect(watch.sendInitialEvents).toBeUndefined();
  });
});

describe('informer without WatchList: pages past their byte limit', () => {
  const ns = useTestNamespace('nowl', 'informerpages');

  test('a page past its byte limit is asked again, from the same place, in pages a tenth the size', async () => {
    const client = await clusterClient('nowl');
    // 20 ConfigMaps of about 1.5 KB: a page of all of them is about 30 KB, one of 5 under 12 KiB.
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        client.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/configmaps`, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `p${i}` }, data: { x: 'y'.repeat(1000) } } }),
      ),
    );
    const requests = record(client);
    const informer = startInformer(client, ns(), { watchList: 'never', listPageMaxBytes: 12 * 1024 });
    await informer.start();
    expect(informer.store.size).toBe(20);
    const lists = requests.filter((r) => r.url.searchParams.get('watch') === null).map((r) => [r.url.searchParams.get('limit'), r.error === undefined]);
    expect(lists).toEqual([['500', false], ['50', false], ['5', true], ['5', true], ['5', true], ['5', true]]);
  });
});

describe('informer resilience', () => {
  const ns = useTestNamespace('informer-restart', 'informer');

  test('a watch cut by an apiserver restart resumes and misses no change made meanwhile', async () => {
    const client = await clusterClient('informer-restart');
    await createConfigMaps(client, ns(), ['before', 'doomed']);
    // The informer reaches the API server through a proxy that keeps it away (as a stopped server's port) until the
    // change is made on the restarted server: a restart alone may have it back before that, then nothing was missed.
    const proxy = await StallingProxy.start(Number(client.server.port));
    stops.push(() => proxy.close());
    const via = await KubeClient.create('informer-restart-via-proxy', kubeconfigViaPort('informer-restart', proxy.port));
    stops.push(() => via.close());
    const metrics = new OperatorMetrics({ processMetrics: false });
    const informer = startInformer(via, ns(), { metrics, backoff: { initialMs: 200, maxMs: 1000 } });
    await informer.start();
    expect(informer.store.size).toBe(2);

    await proxy.down();
    await controlplane(['restart', 'informer-restart']);
    await createConfigMaps(client, ns(), ['meanwhile']);
    await client.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}/configmaps/doomed` });
    expect(informer.store.get(`${ns()}/meanwhile`)).toBeUndefined();
    await proxy.up();

    await eventually('the informer to catch up', async () =>
      informer.store.get(`${ns()}/meanwhile`) && !informer.store.get(`${ns()}/doomed`) ? true : undefined,
    );
    const restarts = await metrics.watchRestarts.get();
    expect(restarts.values.filter((v) => v.labels.reason !== 'silent').reduce((n, v) => n + v.value, 0)).toBeGreaterThan(0);
  });

  test('a watch that goes silent behind a stalling proxy is restarted', async () => {
    await ensureClusters([HOME]);
    const direct = await clusterClient(HOME);
    const proxy = await StallingProxy.start(Number(direct.server.port));
    stops.push(() => proxy.close());
    const client = await KubeClient.create('via-proxy', kubeconfigViaPort(HOME, proxy.port));
    stops.push(() => client.close());
    await direct.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `${ns()}-stall` } },
    });
    stops.push(() => direct.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}-stall` }).then(() => undefined));
    const metrics = new OperatorMetrics({ processMetrics: false });
    const informer = startInformer(client, `${ns()}-stall`, { metrics, idleTimeoutMs: 1500, backoff: { initialMs: 100, maxMs: 500 } });
    await informer.start();
    // Keep the proxy's connections silent from now on; reconnections get new, working ones.
    expect(proxy.stallAll()).toBeGreaterThan(0);
    await createConfigMaps(direct, `${ns()}-stall`, ['after-stall']);
    await eventually('the restarted watch to see the new object', async () =>
      informer.store.get(`${ns()}-stall/after-stall`) ? true : undefined,
    );
    const restarts = await metrics.watchRestarts.get();
    expect(restarts.values.find((v) => v.labels.reason === 'silent')?.value).toBeGreaterThan(0);

    // A watch that served a while before it failed starts its backoff again: each of two more
    // stalls, after watches that ran longer than healthyWatchMs, is told as a first failure.
    const lines: { failures?: number; msg?: string }[] = [];
    const logger = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l) as { failures?: number; msg?: string }) });
    const healthy = startInformer(client, `${ns()}-stall`, { logger, idleTimeoutMs: 1500, healthyWatchMs: 1000, backoff: { initialMs: 100, maxMs: 60_000 } });
    await healthy.start();
    for (const name of ['stall-1', 'stall-2']) {
      expect(proxy.stallAll()).toBeGreaterThan(0);
      await createConfigMaps(direct, `${ns()}-stall`, [name]);
      await eventually(`the restarted watch to see ${name}`, async () => (healthy.store.get(`${ns()}-stall/${name}`) ? true : undefined));
    }
    const failed = lines.filter((l) => l.msg?.startsWith('watch failed'));
    expect(failed.length).toBeGreaterThanOrEqual(2);
    expect(failed.map((l) => l.failures)).toEqual(failed.map(() => 1));
  });
});

