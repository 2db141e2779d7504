// API server faults, injected by a proxy in front of the real API servers
// (test/support/fault-proxy.ts): on the managing cluster (the operator's own
// kubeconfig points at a proxy in front of mgmt) and on a remote one (a
// RemoteSync's kubeconfig Secret points at a proxy in front of edge-1, while
// another RemoteSync reaches edge-2 directly). Each fault class is held for a
// while: the operator must retry without a tight loop (requests are counted at
// the proxy), say what is wrong in Ready, leave the other cluster's syncs
// alone, and converge once the fault ends, with nothing pruned by mistake. A
// half-open connection must be noticed (HTTP/2 pings) and recovered from.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { KubeClient } from '../../src/kube/client.js';
import { ApiError, TransportError } from '../../src/kube/errors.js';
import { KubeConfig } from '../../src/kube/kubeconfig.js';
import { clusterClient, closeClients, ensureClusters, ROOT } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { FaultProxy, type Fault, type Matcher } from '../support/fault-proxy.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { applyProxySync, applyRemoteSync, kubeconfigOf, PROXYSYNCS, putKubeconfigSecret, REMOTESYNCS } from '../support/remote.js';
import { applySync, eventsFor, find, getSync, readyOf, waitForReady, type SyncObject } from '../support/syncs.js';
import type { Condition } from '../../src/runtime/conditions.js';

const HOME = 'mgmt';
/** A failed apply is tried again after min(interval, 30 s): a short interval keeps the test short. */
const INTERVAL = '3s';
/** The operator's HTTP/2 health check, tightened (SYNCPRIMS_HTTP2_*): a half-open connection shows within seconds. */
const READ_IDLE_MS = 1_000;
const PING_TIMEOUT_MS = 1_500;

let mgmt: KubeClient;
let edge1: KubeClient;
let edge2: KubeClient;
let homeProxy: FaultProxy;
let edgeProxy: FaultProxy;
let op: ChildProcess | undefined;
const operatorOutput: string[] = [];
const dir = mkdtempSync(path.join(os.tmpdir(), 'api-faults-'));

// Declared before the test namespaces, so that it runs before their cleanup (afterAll hooks run in
// order): an operator still running could put a released finalizer back.
afterAll(async () => {
  await stopOperator();
  await Promise.all([homeProxy?.close(), edgeProxy?.close()]);
  await closeClients();
  rmSync(dir, { recursive: true, force: true });
});

const ns = useTestNamespace(HOME, 'faults');
const edge1Ns = useTestNamespace('edge-1', 'faultsedge');
const edge2Ns = useTestNamespace('edge-2', 'faultsedge2');

beforeAll(async () => {
  await ensureClusters([HOME, 'edge-1', 'edge-2']);
  [mgmt, edge1, edge2] = await Promise.all([clusterClient(HOME), clusterClient('edge-1'), clusterClient('edge-2')]);
  await installCrds(HOME);
  [homeProxy, edgeProxy] = await Promise.all([FaultProxy.start(HOME), FaultProxy.start('edge-1')]);
  await putKubeconfigSecret(mgmt, ns(), 'edge-1-via-proxy', edgeProxy.kubeconfig());
  await putKubeconfigSecret(mgmt, ns(), 'edge-2-direct', await kubeconfigOf('edge-2'));
  const home = path.join(dir, 'home.kubeconfig');
  writeFileSync(home, homeProxy.kubeconfig());
  startOperator(['--kubeconfig', home, '--namespace', ns(), '--cluster-id', 'faults-under-test', '--log-level', 'debug', '--metrics-addr', '127.0.0.1:0', '--health-addr', '127.0.0.1:0']);
}, 120_000);

/** Resolves once the operator listens: awaited by the tests that need it, so that it starts while the proxy's own test runs. */
async function operatorUp(): Promise<void> {
  await eventually("the operator's endpoints", async () => {
    if (op?.exitCode !== null) throw new Error(`the operator exited (${op?.exitCode})`);
    return operatorOutput.some((l) => l.includes('endpoints listening')) ? true : undefined;
  }).catch((err: unknown) => {
    throw new Error(`${String(err)}; its output:\n${operatorOutput.slice(-20).join('\n')}`);
  });
}

/**
 * Runs `syncprims run` with the HTTP/2 health check tightened. Not through
 * OperatorProcess: a test's process.env is jest's copy, which a spawned child
 * does not inherit, so the environment is passed here.
 */
function startOperator(args: string[]): void {
  const env = { ...process.env, SYNCPRIMS_HTTP2_READ_IDLE_MS: String(READ_IDLE_MS), SYNCPRIMS_HTTP2_PING_TIMEOUT_MS: String(PING_TIMEOUT_MS) };
  op = spawn('node', [path.join(ROOT, 'dist', 'cli', 'main.js'), 'run', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [op.stdout!, op.stderr!]) createInterface({ input: stream }).on('line', (l) => operatorOutput.push(l));
}

async function stopOperator(): Promise<void> {
  if (!op || op.exitCode !== null) return;
  const exited = new Promise((resolve) => op!.once('exit', resolve));
  op.kill('SIGTERM');
  await exited;
}

type CM = { metadata: { uid: string; resourceVersion: string }; data?: Record<string, string> };
const configMap = (namespace: string, name: string, value = 'v1') => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { value } });
const cmPath = (namespace: string, name: string): string => `/api/v1/namespaces/${namespace}/configmaps/${name}`;
/** How long to wait for anything the operator does: generous, only to catch hangs. */
const WAIT_MS = 60_000;

/** Waits until `name`'s Ready, for its current generation, satisfies `ok`; a timeout says what Ready was last. */
async function waitForReadyWhere(plural: string, name: string, what: string, ok: (ready: Condition) => boolean): Promise<SyncObject> {
  let last: Condition | undefined;
  return eventually(
    `${plural} ${name}: ${what}`,
    async () => {
      const s = await getSync(mgmt, ns(), name, plural);
      last = readyOf(s);
      return s.status?.observedGeneration === s.metadata.generation && last && ok(last) ? s : undefined;
    },
    WAIT_MS,
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}; last Ready: ${JSON.stringify(last)}`);
  });
}

const isReady = (c: Condition): boolean => c.status === 'True';

/** A client of this process through a proxy (its kubeconfig; HTTP/2 unless the proxy refuses it). */
async function clientVia(proxy: FaultProxy, name: string): Promise<KubeClient> {
  const kc = new KubeConfig();
  kc.loadFromString(proxy.kubeconfig(name));
  return KubeClient.create(name, kc, `fault-test/${name}`, { timeoutMs: 10_000 });
}

describe('the proxy', () => {
  test('speaks HTTP/2 and HTTP/1.1 through its own CA, and injects each fault class where its matcher says', async () => {
    const http1Proxy = await FaultProxy.start(HOME, { http2: false });
    try {
      for (const [proxy, protocol] of [[homeProxy, 'h2'], [http1Proxy, 'http/1.1']] as const) {
        const c = await clientVia(proxy, `probe-${protocol}`);
        try {
          const probe = cmPath(ns(), `probe-${protocol.replace('/', '')}`);
          const only = (method: string): Matcher => ({ method, path: new RegExp(`${probe}$`) });
          const on = (m: Matcher, f: Fault) => proxy.inject(m, f);
          // Passes through: the API server answers (as the admin the proxy authenticates as).
          await expect(c.request({ path: '/api/v1/namespaces/kube-system' })).resolves.toMatchObject({ metadata: { name: 'kube-system' } });
          expect(c.connectionStats().protocol).toBe(protocol);
          expect(proxy.seen({ path: /\/namespaces\/kube-system$/ }).at(-1)?.protocol).toBe(protocol);

          // A status answer reaches the client as the API server's would; other paths pass.
          let fault = on(only('GET'), { kind: 'status', status: 503 });
          await expect(c.request({ path: probe })).rejects.toMatchObject({ status: 503, message: expect.stringContaining('HTTP 503') });
          await expect(c.request({ path: '/api/v1/namespaces/kube-system' })).resolves.toBeDefined();
          fault.remove();
          fault = on({ method: 'POST', path: /\/configmaps$/ }, { kind: 'status', status: 409 });
          const create = { method: 'POST' as const, path: cmPath(ns(), '').replace(/\/$/, ''), body: configMap(ns(), 'never') };
          await expect(c.request(create)).rejects.toMatchObject({ status: 409, conflict: true });
          fault.remove();

          // 429 with Retry-After: the client sends the GET again after it, and the answer then passes.
          const since = Date.now();
          fault = on(only('GET'), { kind: 'status', status: 429, retryAfterSeconds: 1 });
          const retried = c.request({ path: probe }).catch((e: unknown) => e);
          await eventually('the first 429', async () => (proxy.seen(only('GET'), since).length >= 1 ? true : undefined));
          fault.remove();
          expect(await retried).toMatchObject({ status: 404 }); // the probe does not exist: the API server's own answer
          expect(proxy.seen(only('GET'), since).map((r) => r.fault)).toEqual(['status 429', undefined]);

          // A reset: no answer at all.
          fault = on(only('GET'), { kind: 'reset' });
          await expect(c.request({ path: probe })).rejects.toBeInstanceOf(TransportError);
          fault.remove();
          // A slow answer still arrives.
          fault = on(only('GET'), { kind: 'delay', ms: 300 });
          await expect(c.request({ path: probe })).rejects.toBeInstanceOf(ApiError);
          expect(proxy.seen(only('GET')).at(-1)?.fault).toBe('delay 300');
          fault.remove();
          // Accepted and never answered: the client's deadline ends it.
          fault = on(only('GET'), { kind: 'hang' });
          await expect(c.request({ path: probe, timeoutMs: 500 })).rejects.toThrow(/no answer within 500 ms/);
          fault.remove();

          // A watch that stops passing bytes while its object keeps changing: only the stall can end it, by the
          // stream's idleness check (the changes, 5 a second, keep it alive until then).
          const name = `watched-${protocol.replace('/', '')}`;
          await mgmt.request({ method: 'POST', path: cmPath(ns(), '').replace(/\/$/, ''), body: configMap(ns(), name) });
          const watch: Readable = await c.stream({ path: cmPath(ns(), '').replace(/\/$/, ''), query: { watch: 1, fieldSelector: `metadata.name=${name}` }, idleTimeoutMs: 2_000 });
          let received = 0;
          const ended = new Promise<Error | undefined>((resolve) => watch.on('data', () => received++).on('error', resolve).on('close', () => resolve(undefined)));
          let n = 0;
          const changes = setInterval(() => {
            void mgmt.request({ method: 'PATCH', path: cmPath(ns(), name), contentType: 'application/merge-patch+json', body: { data: { value: String(n++) } } }).catch(() => undefined);
          }, 200);
          try {
            await eventually('changes through the watch', async () => (received >= 3 ? true : undefined));
            expect(proxy.stallStreams({ watch: true, path: new RegExp(`fieldSelector=metadata.name%3D${name}`) })).toBe(1);
            const stalledAt = received;
            const error = await ended;
            expect(error).toBeInstanceOf(TransportError);
            expect(error?.message).toContain('no data for 2000 ms');
            expect(received).toBe(stalledAt);
          } finally {
            clearInterval(changes);
          }
        } finally {
          c.close();
        }
      }
      expect(await find(mgmt, cmPath(ns(), 'never'))).toBeUndefined(); // the 409 was the proxy's: nothing reached the server
    } finally {
      await http1Proxy.close();
    }
  });
});

describe('faults on the managing cluster', () => {
  beforeAll(operatorUp);

  /** One Sync per status, each meeting its fault on its own objects; `calm` meets none. */
  const faults: { name: string; fault: Fault & { kind: 'status' } }[] = [
    { name: 'h429', fault: { kind: 'status', status: 429, retryAfterSeconds: 2 } },
    { name: 'h500', fault: { kind: 'status', status: 500 } },
    { name: 'h503', fault: { kind: 'status', status: 503, retryAfterSeconds: 1 } },
    { name: 'h409', fault: { kind: 'status', status: 409 } },
  ];
  const spec1 = (name: string) => ({ interval: INTERVAL, source: { inline: [configMap(ns(), `${name}-keep`), configMap(ns(), `${name}-old`)] } });
  const spec2 = (name: string) => ({ interval: INTERVAL, source: { inline: [configMap(ns(), `${name}-keep`, 'v2'), configMap(ns(), `${name}-new`)] } });

  test('429, 500, 503 and 409 on applies: retried without a tight loop (Retry-After honoured), named in Ready, other syncs unaffected, converged after', async () => {
    const names = [...faults.map((f) => f.name), 'calm'];
    await Promise.all(names.map((n) => applySync(mgmt, ns(), n, spec1(n))));
    await Promise.all(names.map((n) => waitForReadyWhere('syncs', n, 'Ready', isReady)));
    const uids = new Map<string, string>();
    for (const n of names) uids.set(n, (await find<CM>(mgmt, cmPath(ns(), `${n}-keep`)))!.metadata.uid);

    const since = Date.now();
    const applies = (name: string): Matcher => ({ method: 'PATCH', path: new RegExp(`/configmaps/${name}-`) });
    const handles = faults.map(({ name, fault }) => homeProxy.inject(applies(name), fault));
    try {
      await Promise.all(names.map((n) => applySync(mgmt, ns(), n, spec2(n))));
      // Each says what the API server answered; the half-applied set pruned nothing.
      for (const { name, fault } of faults) {
        await waitForReadyWhere('syncs', name, `Ready=False naming HTTP ${fault.status}`, (c) => c.status === 'False' && c.reason === 'ApplyFailed' && c.message.includes(`HTTP ${fault.status}`));
        expect(await find(mgmt, cmPath(ns(), `${name}-old`))).toBeDefined();
      }
      // The sync without a fault applied its change in the meantime.
      await waitForReadyWhere('syncs', 'calm', 'Ready', isReady);
      expect(await find(mgmt, cmPath(ns(), 'calm-new'))).toBeDefined();
      // Held until every sync has been retried at least twice.
      await eventually('every faulty sync retried', async () => (faults.every(({ name }) => homeProxy.seen(applies(name), since).length >= 3) ? true : undefined), WAIT_MS);
    } finally {
      for (const h of handles) h.remove();
    }
    const windowMs = Date.now() - since;
    for (const { name, fault } of faults) {
      const seen = homeProxy.seen(applies(name), since).filter((r) => r.fault !== undefined);
      // No tight loop: at most one attempt per object a second (429 and 5xx are retried with backoff from 1 s, the rest after min(interval, 30 s)) ...
      expect(seen.length).toBeLessThanOrEqual(2 * (Math.ceil(windowMs / 1_000) + 1));
      // ... and never sooner than Retry-After for the same object.
      if (fault.retryAfterSeconds !== undefined) {
        for (const object of ['keep', 'new']) {
          const perObject = seen.filter((r) => r.url.includes(`/configmaps/${name}-${object}?`)).length;
          expect(perObject).toBeLessThanOrEqual(Math.floor(windowMs / (fault.retryAfterSeconds * 1_000)) + 1);
        }
      }
    }

    // Converged: the new set applied, the object that left it pruned, the one that stayed never recreated.
    for (const n of names) {
      await waitForReadyWhere('syncs', n, 'Ready', isReady);
      const keep = await find<CM>(mgmt, cmPath(ns(), `${n}-keep`));
      expect(keep).toMatchObject({ metadata: { uid: uids.get(n) }, data: { value: 'v2' } });
      expect(await find(mgmt, cmPath(ns(), `${n}-new`))).toBeDefined();
      await eventually(`${n}-old pruned`, async () => ((await find(mgmt, cmPath(ns(), `${n}-old`))) === undefined ? true : undefined), WAIT_MS);
    }
  });
  test('status writes reset, then a half-open connection to mgmt: retried with backoff, noticed by the HTTP/2 health check, and changes applied once it passes again', async () => {
    // Resets on one sync's status writes: each takes the operator's connection (every watch on it) down.
    const statusWrites: Matcher = { method: /^(PATCH|PUT)$/, path: /\/syncs\/calm\/status/ };
    const since = Date.now();
    const fault = homeProxy.inject(statusWrites, { kind: 'reset' });
    try {
      // A new revision is announced in status before it is applied: that write fails, so nothing is applied yet.
      await applySync(mgmt, ns(), 'calm', { interval: INTERVAL, source: { inline: [configMap(ns(), 'calm-keep', 'v3')] } });
      // Held for two seconds at least (however slow the machine), for the count below to tell backoff from a loop.
      await eventually('the status write tried again', async () => (homeProxy.seen(statusWrites, since).length >= 3 && Date.now() - since >= 2_000 ? true : undefined), WAIT_MS);
    } finally {
      fault.remove();
    }
    const windowMs = Date.now() - since;
    // The work queue's exponential backoff (5 ms doubling), not a loop: a handful of attempts, however long the window.
    expect(homeProxy.seen(statusWrites, since).length).toBeLessThanOrEqual(Math.ceil(Math.log2(windowMs / 5)) + 4);
    await waitForReadyWhere('syncs', 'calm', 'Ready', isReady);
    expect((await find<CM>(mgmt, cmPath(ns(), 'calm-keep')))?.data?.value).toBe('v3');

    // The operator's own connection goes silent: its health check (a ping) drops it, and its watches are opened again once it passes.
    const watchesBefore = homeProxy.seen({ watch: true }).length;
    const output = operatorOutput.length;
    expect(homeProxy.halfOpenConnections()).toBeGreaterThan(0);
    try {
      await eventually('the operator to notice', async () => (operatorOutput.slice(output).some((l) => l.includes('no answer to a ping')) ? true : undefined), WAIT_MS);
    } finally {
      homeProxy.restoreConnections();
    }
    await eventually('its watches opened again', async () => (homeProxy.seen({ watch: true }).length > watchesBefore ? true : undefined), WAIT_MS);
    await applySync(mgmt, ns(), 'calm', { interval: INTERVAL, source: { inline: [configMap(ns(), 'calm-keep', 'v4'), configMap(ns(), 'calm-after')] } });
    await waitForReadyWhere('syncs', 'calm', 'Ready', isReady);
    expect((await find<CM>(mgmt, cmPath(ns(), 'calm-keep')))?.data?.value).toBe('v4');
    expect(await find(mgmt, cmPath(ns(), 'calm-after'))).toBeDefined();
  });

  test('status writes refused (403): the status cannot say so, a Warning Event does (once, while retried), and it is Ready once allowed', async () => {
    const statusWrites: Matcher = { method: /^(PATCH|PUT)$/, path: /\/syncs\/mute\/status/ };
    const since = Date.now();
    const fault = homeProxy.inject(statusWrites, { kind: 'status', status: 403 });
    let told: { message: string; count?: number }[] = [];
    try {
      await applySync(mgmt, ns(), 'mute', { interval: INTERVAL, source: { inline: [configMap(ns(), 'mute-a')] } });
      told = await eventually('a ReconcileFailed Event', async () => {
        if (homeProxy.seen(statusWrites, since).length < 3) return undefined;
        const events = (await eventsFor(mgmt, ns(), 'mute')).filter((e) => e.reason === 'ReconcileFailed' && e.type === 'Warning');
        return events.length > 0 ? events : undefined;
      }, WAIT_MS);
    } finally {
      fault.remove();
    }
    expect(told).toHaveLength(1);
    expect(told[0]!.message).toMatch(/^reconcile failed: PATCH \S+\/syncs\/mute\/status: .*injected by the fault proxy: HTTP 403; retried with backoff$/);
    // Retried (three writes at least) and told once: the recorder does not repeat the same Event.
    expect(told[0]!.count ?? 1).toBe(1);
    await waitForReadyWhere('syncs', 'mute', 'Ready', isReady);
  });
});

describe('faults on a remote cluster', () => {
  const spec = (secret: string, namespace: string, objects: string[], value = 'v1') => ({
    interval: INTERVAL,
    kubeConfig: { secretRef: { name: secret } },
    source: { inline: objects.map((o) => configMap(namespace, o, value)) },
  });
  const r1 = (objects: string[], value = 'v1') => applyRemoteSync(mgmt, ns(), 'r1', spec('edge-1-via-proxy', edge1Ns(), objects, value));
  const r2 = (objects: string[], value = 'v1') => applyRemoteSync(mgmt, ns(), 'r2', spec('edge-2-direct', edge2Ns(), objects, value));
  /** The other cluster: a change of r2 is applied in edge-2 whatever happens to edge-1. */
  async function edge2Unaffected(value: string): Promise<void> {
    await r2(['r2-a'], value);
    await waitForReadyWhere(REMOTESYNCS, 'r2', 'Ready', isReady);
    expect((await find<CM>(edge2, cmPath(edge2Ns(), 'r2-a')))?.data?.value).toBe(value);
  }
  const edgeRequests = { watch: false };

  beforeAll(async () => {
    await operatorUp();
    await Promise.all([r1(['r1-a']), r2(['r2-a'])]);
    await Promise.all([waitForReadyWhere(REMOTESYNCS, 'r1', 'Ready', isReady), waitForReadyWhere(REMOTESYNCS, 'r2', 'Ready', isReady)]);
  });

  test('503 with Retry-After on every request to edge-1: named in Ready, retried without a tight loop, edge-2 unaffected, converged after', async () => {
    const uid = (await find<CM>(edge1, cmPath(edge1Ns(), 'r1-a')))!.metadata.uid;
    const since = Date.now();
    const fault = edgeProxy.inject(edgeRequests, { kind: 'status', status: 503, retryAfterSeconds: 1 });
    try {
      await r1(['r1-a', 'r1-b'], 'v2');
      await waitForReadyWhere(REMOTESYNCS, 'r1', 'Ready=False naming HTTP 503', (c) => c.status === 'False' && c.message.includes('HTTP 503'));
      await edge2Unaffected('v2');
      await eventually('r1 retried', async () => (edgeProxy.seen({ method: 'PATCH' }, since).length >= 4 ? true : undefined), WAIT_MS);
    } finally {
      fault.remove();
    }
    const windowMs = Date.now() - since;
    // Every request, reads included (those the client repeats after Retry-After): at most a few a second.
    expect(edgeProxy.seen(edgeRequests, since).length).toBeLessThanOrEqual(4 * (Math.ceil(windowMs / 1_000) + 1));
    await waitForReadyWhere(REMOTESYNCS, 'r1', 'Ready', isReady);
    expect(await find<CM>(edge1, cmPath(edge1Ns(), 'r1-a'))).toMatchObject({ metadata: { uid }, data: { value: 'v2' } });
    expect(await find(edge1, cmPath(edge1Ns(), 'r1-b'))).toBeDefined();
  });

  test('connections reset on applies to edge-1: ClusterUnreachable, probed with backoff, edge-2 unaffected, converged after', async () => {
    const since = Date.now();
    const applies: Matcher = { method: 'PATCH', path: /\/configmaps\// };
    const fault = edgeProxy.inject(applies, { kind: 'reset' });
    try {
      await r1(['r1-a', 'r1-b'], 'v3');
      await waitForReadyWhere(REMOTESYNCS, 'r1', 'Ready=False ClusterUnreachable', (c) => c.status === 'False' && c.reason === 'ClusterUnreachable');
      await edge2Unaffected('v3');
      await eventually('r1 tried again', async () => (edgeProxy.seen(applies, since).length >= 3 ? true : undefined), WAIT_MS);
    } finally {
      fault.remove();
    }
    const windowMs = Date.now() - since;
    expect(edgeProxy.seen(applies, since).length).toBeLessThanOrEqual(2 * (Math.ceil(windowMs / 1_000) + 1));
    await waitForReadyWhere(REMOTESYNCS, 'r1', 'Ready', isReady);
    expect((await find<CM>(edge1, cmPath(edge1Ns(), 'r1-b')))?.data?.value).toBe('v3');
  });

  test('slow responses from edge-1 (a second each): converges all the same, edge-2 unaffected', async () => {
    const since = Date.now();
    const fault = edgeProxy.inject(edgeRequests, { kind: 'delay', ms: 1_000 });
    try {
      await r1(['r1-a', 'r1-b'], 'v4');
      await edge2Unaffected('v4');
      await waitForReadyWhere(REMOTESYNCS, 'r1', 'Ready', isReady);
      expect(edgeProxy.seen({ ...edgeRequests, method: 'PATCH' }, since).filter((r) => r.fault === 'delay 1000').length).toBeGreaterThan(0);
    } finally {
      fault.remove();
    }
    expect((await find<CM>(edge1, cmPath(edge1Ns(), 'r1-b')))?.data?.value).toBe('v4');
  });

  test('a half-open connection to edge-1 (silent, pings unanswered): noticed, ClusterUnreachable, edge-2 unaffected; recovered, and its watches work again', async () => {
    const before = edgeProxy.seen({ watch: true }).length;
    expect(edgeProxy.liveWatches().length).toBeGreaterThan(0);
    expect(edgeProxy.halfOpenConnections()).toBeGreaterThan(0);
    try {
      // Nothing is asked of edge-1: the broken connection is found by the operator's own health check.
      await waitForReadyWhere(REMOTESYNCS, 'r1', 'Ready=False ClusterUnreachable', (c) => c.status === 'False' && c.reason === 'ClusterUnreachable');
      await edge2Unaffected('v5');
    } finally {
      edgeProxy.restoreConnections();
    }
    await waitForReadyWhere(REMOTESYNCS, 'r1', 'Ready', isReady);
    // The watches were opened again through the restored proxy ...
    await eventually('watches of edge-1 again', async () => (edgeProxy.seen({ watch: true }).length > before && edgeProxy.liveWatches().length > 0 ? true : undefined), WAIT_MS);
    // ... and they work: a hand edit in edge-1 is corrected from the watch event alone.
    const applied = (await find<CM>(edge1, cmPath(edge1Ns(), 'r1-a')))?.data?.value;
    await edge1.request({ method: 'PATCH', path: cmPath(edge1Ns(), 'r1-a'), contentType: 'application/merge-patch+json', body: { data: { value: 'edited' } } });
    await eventually('the edit corrected from the watch', async () => ((await find<CM>(edge1, cmPath(edge1Ns(), 'r1-a')))?.data?.value === applied ? true : undefined), WAIT_MS);
  });
});

describe('a finalizer patch answered slowly', () => {
  test('holds back the first write to the target, for each kind: the patch goes out alongside, the writes wait for its answer', async () => {
    await operatorUp();
    await installCrds('edge-1'); // the ProxySync's remote Sync
    const DELAY_MS = 1_000;
    const finalizerPatch = (plural: string, name: string): Matcher => ({ method: 'PATCH', path: new RegExp(`/${plural}/${name}$`) });
    const kinds = [
      { plural: 'syncs', name: 'slow-s', proxy: homeProxy },
      { plural: REMOTESYNCS, name: 'slow-r', proxy: edgeProxy },
      { plural: PROXYSYNCS, name: 'slow-p', proxy: edgeProxy },
    ];
    const faults = kinds.map((k) => homeProxy.inject(finalizerPatch(k.plural, k.name), { kind: 'delay', ms: DELAY_MS }));
    const since = Date.now();
    try {
      const via = { kubeConfig: { secretRef: { name: 'edge-1-via-proxy' } } };
      await applySync(mgmt, ns(), 'slow-s', { source: { inline: [configMap(ns(), 'slow-s-a')] } });
      await applyRemoteSync(mgmt, ns(), 'slow-r', { ...via, source: { inline: [configMap(edge1Ns(), 'slow-r-a')] } });
      await applyProxySync(mgmt, ns(), 'slow-p', { ...via, template: { metadata: { namespace: edge1Ns() }, spec: { source: { inline: [configMap(edge1Ns(), 'slow-p-a')] } } } });
      const gaps: { kind: string; afterMs: number }[] = [];
      for (const k of kinds) {
        // Its first write there: an apply of its ConfigMap (Sync, RemoteSync), or of the remote Sync (ProxySync); not its own writes.
        const writes: Matcher = { method: /^(PATCH|POST|PUT)$/, path: new RegExp(`/${k.name}(-a)?(\\?|$)`) };
        const first = await eventually(`${k.plural} ${k.name}: its first write in the target`, async () => k.proxy.seen(writes, since).find((r) => !r.url.includes(`/${k.plural}/`)), WAIT_MS);
        const patched = homeProxy.seen(finalizerPatch(k.plural, k.name), since)[0];
        expect(patched?.fault).toBe(`delay ${DELAY_MS}`);
        gaps.push({ kind: k.plural, afterMs: first.at - patched!.at });
      }
      // The patch is answered no sooner than DELAY_MS after it arrived: each first write came after the answer.
      expect(gaps.filter((g) => g.afterMs < DELAY_MS)).toEqual([]);
    } finally {
      for (const f of faults) f.remove();
    }
  });

  test('refused (403) in the managing cluster: nothing is written to the target, the refusal is not put on the remote cluster, and it goes on once allowed', async () => {
    await operatorUp();
    await installCrds('edge-1');
    const finalizerPatch: Matcher = { method: 'PATCH', path: /\/proxysyncs\/refused-p$/ };
    const fault = homeProxy.inject(finalizerPatch, { kind: 'status', status: 403 });
    const since = Date.now();
    const remoteWrites = (): number => edgeProxy.seen({ method: /^(PATCH|POST|PUT)$/, path: /\/refused-p(\?|$)/ }, since).length;
    try {
      await applyProxySync(mgmt, ns(), 'refused-p', { kubeConfig: { secretRef: { name: 'edge-1-via-proxy' } }, template: { metadata: { namespace: edge1Ns() }, spec: { source: { inline: [configMap(edge1Ns(), 'refused-p-a')] } } } });
      await eventually('the finalizer patch refused and tried again', async () => (homeProxy.seen(finalizerPatch, since).length >= 2 ? true : undefined), WAIT_MS);
      expect(remoteWrites()).toBe(0);
      // What the managing cluster refused is not said to be the remote cluster's refusal.
      const s = await getSync(mgmt, ns(), 'refused-p', PROXYSYNCS);
      expect(readyOf(s)?.message ?? '').not.toMatch(/cluster \S+ refused/);
    } finally {
      fault.remove();
    }
    await eventually('the remote Sync applied once the finalizer is allowed', async () => (remoteWrites() > 0 ? true : undefined), WAIT_MS);
    const s = await getSync(mgmt, ns(), 'refused-p', PROXYSYNCS);
    expect(s.metadata.finalizers).toContain('syncprims.dev/finalizer');
  });
});

// With SOAK=1 (make soak): the same half-open faults against an operator with its default timings
// (HTTP/2 ping after 30 s of silence, dropped 15 s later; a watch silent for 120 s restarted), and
// a watch stalled on a healthy connection, which only the watch's own idleness check can notice.
if (process.env.SOAK === '1') {
  describe('soak: half-open connections and a stalled watch, with the default timings', () => {
    const soakNs = useTestNamespace(HOME, 'faultsoak');
    const soakEdgeNs = useTestNamespace('edge-1', 'faultsoakedge');
    let proxy: FaultProxy;
    let soakOp: OperatorProcess;
    const spec = (value: string) => ({
      interval: INTERVAL,
      kubeConfig: { secretRef: { name: 'edge-1-via-proxy' } },
      source: { inline: [configMap(soakEdgeNs(), 's1-a', value)] },
    });
    const ready = async (): Promise<SyncObject> => waitForReady(mgmt, soakNs(), 's1', 'True', undefined, 240_000, REMOTESYNCS);
    /** A hand edit in edge-1 corrected from the watch event alone: the watch works. */
    async function watchWorks(value: string): Promise<void> {
      await edge1.request({ method: 'PATCH', path: cmPath(soakEdgeNs(), 's1-a'), contentType: 'application/merge-patch+json', body: { data: { value: 'edited' } } });
      await eventually('the edit corrected from the watch', async () => ((await find<CM>(edge1, cmPath(soakEdgeNs(), 's1-a')))?.data?.value === value ? true : undefined), 240_000);
    }

    beforeAll(async () => {
      proxy = await FaultProxy.start('edge-1');
      await putKubeconfigSecret(mgmt, soakNs(), 'edge-1-via-proxy', proxy.kubeconfig());
      soakOp = await OperatorProcess.start(HOME, ['--namespace', soakNs(), '--log-level', 'debug', '--cluster-id', 'faults-soak']);
      await applyRemoteSync(mgmt, soakNs(), 's1', spec('v1'));
      await ready();
    }, 120_000);

    afterAll(async () => {
      await soakOp?.stop('SIGTERM');
      await proxy?.close();
    });

    test('a watch that stops passing bytes on a healthy connection is restarted after 120 s of silence, and works again', async () => {
      const watches = proxy.seen({ watch: true, path: /\/configmaps\?/ }).length;
      expect(proxy.stallStreams({ watch: true, path: /\/configmaps\?/ })).toBeGreaterThan(0);
      await soakOp.waitForLog('the stalled watch restarted', (l) => String(l.err ?? '').includes('no data for 120000 ms'), 240_000);
      await eventually('a new watch', async () => (proxy.seen({ watch: true, path: /\/configmaps\?/ }).length > watches ? true : undefined), 60_000);
      await watchWorks('v1');
    }, 300_000);

    test('a half-open connection is dropped by the HTTP/2 health check (30 s + 15 s): ClusterUnreachable, then recovered', async () => {
      const output = soakOp.logs.length;
      expect(proxy.halfOpenConnections()).toBeGreaterThan(0);
      try {
        await soakOp.waitForLog('the ping unanswered', (l) => soakOp.logs.indexOf(l) >= output && String(l.err ?? '').includes('no answer to a ping'), 120_000);
        await waitForReady(mgmt, soakNs(), 's1', 'False', 'ClusterUnreachable', 120_000, REMOTESYNCS);
      } finally {
        proxy.restoreConnections();
      }
      await applyRemoteSync(mgmt, soakNs(), 's1', spec('v2'));
      await ready();
      await watchWorks('v2');
    }, 300_000);
  });
}
