// The kube adapter against a real API server, and against servers that
// misbehave (a black hole that never answers, a watch that goes silent).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import http from 'node:http';
import net from 'node:net';
import { KubeClient, NotLeadingError } from '../../src/kube/client.js';
import { Discovery, UnknownKindError } from '../../src/kube/discovery.js';
import { serverSideApply } from '../../src/kube/apply.js';
import { ApiError, TransportError } from '../../src/kube/errors.js';
import { KubeConfig } from '../../src/kube/kubeconfig.js';
import { clusterApi, closeClients, kubeconfigPath } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';

afterAll(closeClients);

describe('discovery', () => {
  let client: KubeClient;
  beforeAll(async () => {
    ({ client } = await clusterApi('mgmt'));
  });

  test('maps kinds to resources and scope', async () => {
    const d = new Discovery(client);
    await expect(d.resolve('v1', 'ConfigMap')).resolves.toEqual({
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      resource: 'configmaps',
      namespaced: true,
    });
    await expect(d.resolve('rbac.authorization.k8s.io/v1', 'ClusterRole')).resolves.toMatchObject({
      resource: 'clusterroles',
      namespaced: false,
    });
  });

  test('names an unknown kind and finds a CRD that arrives after the first lookup', async () => {
    const d = new Discovery(client);
    const group = `late${Date.now()}.test.syncprims.dev`;
    const missing = await d.resolve(`${group}/v1`, 'Gadget').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(UnknownKindError);
    expect((missing as Error).message).toContain(`Gadget in ${group}/v1 (is its CRD installed?)`);
    await serverSideApply(
      client,
      d,
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `gadgets.${group}` },
        spec: {
          group,
          scope: 'Cluster',
          names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
          versions: [
            { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
          ],
        },
      },
      { fieldManager: 'syncprims' },
    );
    try {
      const found = await eventually('discovery to serve Gadget', () => d.resolve(`${group}/v1`, 'Gadget'));
      expect(found).toMatchObject({ resource: 'gadgets', namespaced: false });
    } finally {
      await client.request({
        method: 'DELETE',
        path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.${group}`,
      });
    }
  });
});

describe('timeouts', () => {
  let blackHole: net.Server;
  let silent: KubeClient;
  let silentTls: KubeClient;
  const sockets: net.Socket[] = [];

  beforeAll(async () => {
    // Accepts connections and never answers: a hung server or a half-open link.
    blackHole = net.createServer((s) => void sockets.push(s));
    await new Promise<void>((r) => blackHole.listen(0, '127.0.0.1', r));
    const port = (blackHole.address() as net.AddressInfo).port;
    silent = await KubeClient.create('hole', localConfig(`http://127.0.0.1:${port}`));
    // The same hole as an https server: the TLS handshake (where HTTP/2 is negotiated) never ends.
    silentTls = await KubeClient.create('tls-hole', localConfig(`https://127.0.0.1:${port}`));
  });

  afterAll(async () => {
    silent.close();
    silentTls.close();
    for (const s of sockets) s.destroy();
    await new Promise((r) => blackHole.close(r));
  });

  test('a request that gets no answer fails with a TransportError at its deadline', async () => {
    const err = await silent.request({ path: '/api', timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as Error).message).toBe('GET /api: no answer within 300 ms');
  });

  test('a request queued behind a full HTTP/1.1 request pool fails at its own deadline', async () => {
    const port = (blackHole.address() as net.AddressInfo).port;
    const one = await KubeClient.create('hole-one-socket', localConfig(`http://127.0.0.1:${port}`), undefined, { http1RequestSockets: 1 });
    try {
      let firstSettled = false;
      const first = one.request({ path: '/first', timeoutMs: 60_000 }).finally(() => (firstSettled = true));
      first.catch(() => undefined);
      const err = await one.request({ path: '/queued', timeoutMs: 300 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransportError);
      expect((err as Error).message).toBe('GET /queued: no answer within 300 ms');
      // It did not wait for the socket it was queued for.
      expect(firstSettled).toBe(false);
    } finally {
      one.close();
    }
  });

  test('a request to an https server whose TLS handshake never ends fails at its deadline too', async () => {
    const err = await silentTls.request({ path: '/api', timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as Error).message).toBe('GET /api: no answer within 300 ms');
    expect(silentTls.connectionStats()).toMatchObject({ protocol: undefined, connections: 0, queued: 0 });
  });

  test('a watch stream that goes silent is destroyed after its idle timeout', async () => {
    const { client } = await clusterApi('mgmt');
    // A watch on a name that never changes sends nothing after the initial list.
    const res = await client.stream({
      path: '/api/v1/namespaces/default/configmaps',
      query: { watch: 1, fieldSelector: 'metadata.name=never-there', resourceVersion: '0' },
      idleTimeoutMs: 300,
    });
    const err = await new Promise<Error>((resolve) => {
      res.on('error', resolve);
      res.resume();
    });
    expect(err).toBeInstanceOf(TransportError);
    expect(err.message).toContain('no data for 300 ms');
    // The real API server speaks HTTP/2 with the client: the timeout was the stream's.
    expect(client.connectionStats().protocol).toBe('h2');
  });
});

describe('429 Too Many Requests', () => {
  let server: http.Server;
  let client: KubeClient;
  const seen: string[] = [];

  beforeAll(async () => {
    // Throttles the first request of each path once, as API Priority and Fairness does.
    const throttled = new Set<string>();
    server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (!throttled.has(req.url ?? '')) {
        throttled.add(req.url ?? '');
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end(JSON.stringify({ kind: 'Status', reason: 'TooManyRequests', message: 'too many requests, please try again later' }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Namespace', metadata: { name: 'ok' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    client = await KubeClient.create('throttled', localConfig(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`));
  });

  afterAll(async () => {
    client.close();
    await new Promise((r) => server.close(r));
  });

  test('a GET is sent again after Retry-After; a write goes back to its caller with the ApiError', async () => {
    await expect(client.request({ path: '/api/v1/namespaces/ok' })).resolves.toMatchObject({ metadata: { name: 'ok' } });
    expect(seen.filter((s) => s === 'GET /api/v1/namespaces/ok')).toHaveLength(2);
    const err = await client.request({ method: 'POST', path: '/api/v1/namespaces', body: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 429, retryAfterSeconds: 1 });
    expect(seen.filter((s) => s === 'POST /api/v1/namespaces')).toHaveLength(1);
  });
});

/** A kubeconfig for a local test server, with a token user. */
function localConfig(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'local', cluster: 'local', user: 'u' }],
    currentContext: 'local',
  });
  return kc;
}

describe('the write fence (leader election)', () => {
  const ns = useTestNamespace('mgmt', 'fence');
  let client: KubeClient;
  let leading = false;
  const sent: string[] = [];
  beforeAll(async () => {
    client = await KubeClient.fromFile('fenced', kubeconfigPath('mgmt'));
    client.fenceWrites(() => leading);
    client.observe((r) => sent.push(`${r.method} ${r.url.pathname}`));
  });
  afterAll(() => client.close());

  test('refuses writes before they are sent while it says no; reads and Lease writes pass; writes pass once it says yes', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fenced' } };
    const cms = `/api/v1/namespaces/${ns()}/configmaps`;
    const err = await client.request({ method: 'POST', path: cms, body: cm }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotLeadingError);
    expect((err as Error).message).toBe(`POST ${cms}: not sent: this process does not lead now, or does not hold the shard of this work now (its Lease was not renewed within the renew deadline, or passed to another replica)`);
    expect(sent.filter((s) => s.startsWith('POST'))).toEqual([]);
    await expect(client.request({ path: `${cms}/fenced` }).catch((e: unknown) => e)).resolves.toMatchObject({ status: 404 });
    const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'fenced' }, spec: { holderIdentity: 'x' } };
    await expect(client.request({ method: 'POST', path: `/apis/coordination.k8s.io/v1/namespaces/${ns()}/leases`, body: lease })).resolves.toMatchObject({ metadata: { name: 'fenced' } });
    leading = true;
    await expect(client.request({ method: 'POST', path: cms, body: cm })).resolves.toMatchObject({ metadata: { name: 'fenced' } });
  });
});
