// The client's connections to a real API server: HTTP/2 when the server
// agrees to it, HTTP/1.1 through a proxy that does not; in both, requests
// never starve behind open watches. Connections are counted twice: by the
// client (connectionStats) and by the kernel (this process's sockets).
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { KubeClient, type ConnectionStats } from '../../src/kube/client.js';
import { loadKubeConfigFile } from '../../src/kube/config.js';
import { TransportError } from '../../src/kube/errors.js';
import { KubeConfig } from '../../src/kube/kubeconfig.js';
import { SharedTransports } from '../../src/kube/shared-transports.js';
import { closeClients, ensureClusters, kubeconfigPath, kubeconfigViaPort } from '../support/controlplane.js';
import { eventually, steady } from '../support/eventually.js';
import { Http1Proxy } from '../support/http1-proxy.js';
import { StallingProxy } from '../support/stalling-proxy.js';
import { establishedSockets, establishedTo, openedSince } from '../support/proc.js';
import { serviceAccountKubeconfig } from '../support/remote.js';

const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';
const run = randomBytes(3).toString('hex');
let apiPort: number;
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  await ensureClusters(['mgmt']);
  apiPort = Number(loadKubeConfigFile(kubeconfigPath('mgmt')).getCurrentCluster()?.server.split(':').pop());
});

afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

afterAll(closeClients);

/** A client closed after the test. */
async function client(make: () => Promise<KubeClient>): Promise<KubeClient> {
  const c = await make();
  cleanups.push(() => c.close());
  return c;
}

/** A watch on a name nobody creates: it stays open and silent. */
async function watchNothing(c: KubeClient, id: string | number, idleTimeoutMs = 120_000): Promise<Readable> {
  const res = await c.stream({
    path: CONFIGMAPS,
    query: { watch: 1, fieldSelector: `metadata.name=transport-${run}-never-${id}` },
    idleTimeoutMs,
    timeoutMs: 60_000,
  });
  res.on('error', () => undefined);
  cleanups.push(() => res.destroy());
  return res;
}

function openWatches(c: KubeClient, n: number): Promise<Readable[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => watchNothing(c, i)));
}

/** `n` concurrent GETs; resolves with how many answered (a starved request fails at its deadline). */
async function gets(c: KubeClient, n: number): Promise<number> {
  const answers = await Promise.all(
    Array.from({ length: n }, () => c.request<{ metadata: { name: string } }>({ path: '/api/v1/namespaces/default', timeoutMs: 20_000 })),
  );
  return answers.filter((a) => a.metadata.name === 'default').length;
}

describe('the process', () => {
  /** Sockets that keep the event loop alive (unref'd ones are not listed). */
  const liveSockets = (): number => process.getActiveResourcesInfo().filter((r) => /TCP|TLS/.test(r)).length;
  const settled = (c: KubeClient): Promise<true> =>
    eventually('the client to have no stream in flight', async () => (c.connectionStats().streams === 0 ? true : undefined));

  test('an idle HTTP/2 client does not keep the process alive; one with a watch open does', async () => {
    const before = await steady(liveSockets);
    const c = await client(() => KubeClient.fromFile('h2-unref', kubeconfigPath('mgmt')));
    expect(await gets(c, 3)).toBe(3);
    await settled(c);
    expect(c.connectionStats()).toMatchObject({ protocol: 'h2', connections: 1 });
    expect(liveSockets()).toBe(before);
    const watch = await watchNothing(c, 'keeps-alive');
    expect(liveSockets()).toBe(before + 1);
    watch.destroy();
    await settled(c);
    expect(liveSockets()).toBe(before);
  });
});

describe('HTTP/2 (the API server chooses h2 in ALPN)', () => {
  test('300 open watches leave requests their turn, on a few connections', async () => {
    const before = establishedSockets(apiPort);
    const c = await client(() => KubeClient.fromFile('h2-watches', kubeconfigPath('mgmt')));
    await openWatches(c, 300);
    expect(await gets(c, 30)).toBe(30);
    const stats = c.connectionStats();
    expect(stats.protocol).toBe('h2');
    expect(stats.streams).toBeGreaterThanOrEqual(300);
    expect(stats.queued).toBe(0);
    // The server allows 100 streams a connection (Go's http2 server; kube-apiserver may allow 250):
    // a handful, where HTTP/1.1 needs one a watch.
    expect(stats.connections).toBeGreaterThanOrEqual(1);
    expect(stats.connections).toBeLessThanOrEqual(6);
    expect(openedSince(before, apiPort)).toBe(stats.connections);
  });

  test('with every session in use, new watches wait (and it is said once) while requests still go', async () => {
    const c = await client(() => KubeClient.fromFile('h2-one-session', kubeconfigPath('mgmt'), { http2MaxSessions: 1 }));
    const saturated: ConnectionStats[] = [];
    c.onSaturated((detail) => saturated.push(detail));
    const opened: Readable[] = [];
    const opening = Array.from({ length: 150 }, (_, i) => watchNothing(c, i).then((w) => opened.push(w)));
    // Every stream sent has its answer before any is ended: one answered later would keep its slot,
    // and as many waiting watches would never be sent (on a busy machine, the GETs below were
    // answered while a third of the watches were not yet).
    const full = await eventually('some watches open and the rest waiting', async () => {
      const s = c.connectionStats();
      return s.streams + s.queued === 150 && s.streams > 0 && s.queued > 0 && opened.length === s.streams ? s : undefined;
    });
    expect(full).toMatchObject({ protocol: 'h2', connections: 1 });
    // A tenth of the session's streams is kept for requests.
    expect(await gets(c, 5)).toBe(5);
    expect(saturated).toHaveLength(1);
    expect(saturated[0]).toMatchObject({ protocol: 'h2', connections: 1 });
    expect(saturated[0]?.queued).toBeGreaterThan(0);
    // Streams that end make room for the waiting watches.
    for (const w of opened.splice(0)) w.destroy();
    await eventually('every watch to have opened', async () => (c.connectionStats().queued === 0 ? true : undefined));
    await Promise.all(opening);
    expect(c.connectionStats().connections).toBe(1);
    expect(saturated).toHaveLength(1);
  });

  test('an idle timeout ends its own stream only: the connection and its other streams go on', async () => {
    const c = await client(() => KubeClient.fromFile('h2-idle', kubeconfigPath('mgmt')));
    const name = `transport-${run}-busy`;
    await c.request({ method: 'POST', path: CONFIGMAPS, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { n: '0' } } });
    cleanups.push(() => c.request({ method: 'DELETE', path: `${CONFIGMAPS}/${name}` }));
    const busy = await c.stream({ path: CONFIGMAPS, query: { watch: 1, fieldSelector: `metadata.name=${name}` }, idleTimeoutMs: 60_000 });
    cleanups.push(() => busy.destroy());
    let events = 0;
    busy.on('data', () => events++).on('error', () => undefined);
    const quiet = await watchNothing(c, 'quiet', 500);
    // Events flow on the same connection while the quiet stream waits for its timeout.
    let n = 0;
    const ticker = setInterval(() => {
      const body = { data: { n: String(++n) } };
      void c.request({ method: 'PATCH', path: `${CONFIGMAPS}/${name}`, contentType: 'application/merge-patch+json', body }).catch(() => undefined);
    }, 100);
    cleanups.push(() => clearInterval(ticker));
    const err = await new Promise<Error>((resolve) => {
      quiet.on('error', resolve);
      quiet.resume();
    });
    expect(err).toBeInstanceOf(TransportError);
    expect(err.message).toContain('no data for 500 ms');
    expect(events).toBeGreaterThan(1);
    expect(busy.destroyed).toBe(false);
    expect(c.connectionStats()).toMatchObject({ protocol: 'h2', connections: 1 });
    const seen = events;
    await eventually('the busy watch to go on receiving', async () => (events > seen ? true : undefined));
    expect(await gets(c, 1)).toBe(1);
  });

  test('a connection that stops answering is found by its pings and closed: its watch fails instead of hanging', async () => {
    const proxy = await StallingProxy.start(apiPort);
    cleanups.push(() => proxy.close());
    const c = await client(() =>
      KubeClient.create('h2-stalled', kubeconfigViaPort('mgmt', proxy.port), undefined, {
        http2ReadIdleMs: 300,
        http2PingTimeoutMs: 300,
      }),
    );
    // Its idle timeout is far away: only the connection's health check can end it.
    const watch = await watchNothing(c, 'stalled', 600_000);
    expect(c.connectionStats()).toMatchObject({ protocol: 'h2', connections: 1, streams: 1 });
    expect(proxy.stallAll()).toBe(1);
    const err = await new Promise<Error>((resolve) => {
      watch.on('error', resolve);
      watch.resume();
    });
    expect(err).toBeInstanceOf(TransportError);
    expect(err.message).toContain('no answer to a ping within 300 ms');
    // The dead connection is gone from the pool; the next request gets a new one.
    expect(await gets(c, 1)).toBe(1);
    expect(c.connectionStats()).toMatchObject({ protocol: 'h2', connections: 1 });
  });
});

describe('HTTP/1.1', () => {
  test('through an HTTP/1.1-only proxy the client falls back, and 150 watches leave requests their turn', async () => {
    const proxy = await Http1Proxy.start(kubeconfigPath('mgmt'));
    cleanups.push(() => proxy.close());
    const c = await client(() => KubeClient.create('via-http1-proxy', proxy.kubeConfig()));
    // More watches than the old shared pool had sockets (128), and than the request pool has (64).
    await openWatches(c, 150);
    expect(await gets(c, 30)).toBe(30);
    const stats = c.connectionStats();
    expect(stats.protocol).toBe('http/1.1');
    expect(stats.queued).toBe(0);
    // One connection a watch (HTTP/1.1 has no streams), plus the requests' own.
    expect(stats.connections).toBeGreaterThanOrEqual(151);
    expect(stats.connections).toBeLessThanOrEqual(150 + 30);
    expect(establishedTo(proxy.port)).toBe(stats.connections);
  });

  test('requests beyond the request pool wait for it (said once), watches do not take its sockets', async () => {
    const before = establishedSockets(apiPort);
    const c = await client(() => KubeClient.fromFile('h1-small-pool', kubeconfigPath('mgmt'), { http2: false, http1RequestSockets: 4 }));
    const saturated: ConnectionStats[] = [];
    c.onSaturated((detail) => saturated.push(detail));
    await openWatches(c, 10);
    expect(await gets(c, 40)).toBe(40);
    expect(await gets(c, 40)).toBe(40);
    expect(saturated).toHaveLength(1);
    expect(saturated[0]).toMatchObject({ protocol: 'http/1.1' });
    expect(saturated[0]?.queued).toBeGreaterThan(0);
    const stats = c.connectionStats();
    expect(stats.connections).toBeGreaterThanOrEqual(11);
    expect(stats.connections).toBeLessThanOrEqual(10 + 4);
    expect(openedSince(before, apiPort)).toBe(stats.connections);
  });
});


describe('shared connections (SharedTransports, as client-go shares a transport per TLS config)', () => {
  const whoAmI = async (c: KubeClient): Promise<string> => {
    const review = await c.request<{ status: { userInfo: { username: string } } }>({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    return review.status.userInfo.username;
  };

  test('token identities of one server share one connection, each request with its own token; a certificate identity has its own', async () => {
    const admin = await client(() => KubeClient.fromFile(`admin-${run}`, kubeconfigPath('mgmt')));
    const namespace = `shared-${run}`;
    await admin.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } });
    cleanups.push(() => admin.request({ method: 'DELETE', path: `/api/v1/namespaces/${namespace}` }));
    const before = establishedSockets(apiPort);
    const pool = new SharedTransports();
    const tokenClient = async (name: string): Promise<KubeClient> => {
      const kc = new KubeConfig();
      kc.loadFromString(await serviceAccountKubeconfig(admin, 'mgmt', namespace, name));
      return client(() => KubeClient.create(name, kc, undefined, { shared: pool }));
    };
    const [a, b] = [await tokenClient('a'), await tokenClient('b')];
    expect(await Promise.all([whoAmI(a), whoAmI(b), whoAmI(a), whoAmI(b)])).toEqual(
      ['a', 'b', 'a', 'b'].map((n) => `system:serviceaccount:${namespace}:${n}`),
    );
    expect(pool.size).toBe(1);
    expect(a.sharesConnections).toBe(true);
    expect(a.connectionStats()).toMatchObject({ protocol: 'h2', connections: 1 });
    expect(openedSince(before, apiPort)).toBe(1);

    const cert = await client(() => KubeClient.fromFile('cert', kubeconfigPath('mgmt'), { shared: pool }));
    expect(await whoAmI(cert)).not.toMatch(/^system:serviceaccount:/);
    expect(pool.size).toBe(2);
    expect([...pool.stats().values()]).toEqual([expect.objectContaining({ connections: 2 })]);

    a.close();
    expect(await whoAmI(b)).toBe(`system:serviceaccount:${namespace}:b`);
    b.close();
    cert.close();
    expect(pool.size).toBe(0);
    await eventually('the shared connections closed', async () => (openedSince(before, apiPort) === 0 ? true : undefined));
  });
});
