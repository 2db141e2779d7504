// --source-deny-cidrs through a running operator (issue 32, item 4): http
// sources and the servers of kubeconfigs in Secrets never connect to a denied
// address (an IP literal, a redirect's target, a name that resolves to one),
// and the refusal names the address, its CIDR and the flag, with an Event and
// a log line. Loopback only: 127.0.0.2 (or 127.0.0.1 and ::1) is denied and served.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { checkedKubeconfig } from '../../src/clusters/kubeconfig.js';
import { AddressPolicy } from '../../src/kube/address-policy.js';
import { KubeClient } from '../../src/kube/client.js';
import { TransportError } from '../../src/kube/errors.js';
import { runCli } from '../support/cli.js';
import { clusterClient, closeClients, ensureClusters, kubeconfigPath } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import type { OperatorProcess } from '../support/operator.js';
import { applyRemoteSync, kubeconfigOf, putKubeconfigSecret, waitForRemoteReady } from '../support/remote.js';
import { applySync, eventsFor, find, readyOf, waitForReady } from '../support/syncs.js';

const HOME = 'mgmt';
let mgmt: KubeClient;

/** A listener on `host` that counts the connections it is offered (HTTP requests too, when it serves HTTP). */
interface Listener {
  /** `http://host:port` */
  base: string;
  port: number;
  connections: number;
  requests: number;
  close(): Promise<void>;
}

const listeners: Listener[] = [];

async function listen(server: net.Server, host: string): Promise<Listener> {
  const listener: Listener = { base: '', port: 0, connections: 0, requests: 0, close: async () => undefined };
  server.on('connection', () => listener.connections++);
  server.on('request', () => listener.requests++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  listener.port = (server.address() as AddressInfo).port;
  listener.base = `http://${host}:${listener.port}`;
  listener.close = () => new Promise((resolve) => server.close(() => resolve()));
  listeners.push(listener);
  return listener;
}

/** An HTTP server on `host` answering every path with `handler`. */
const httpServer = (host: string, handler: http.RequestListener): Promise<Listener> => listen(http.createServer(handler), host);

/** A TCP listener on `host` that never answers (it stands for an API server: nothing should reach it). */
const tcpListener = (host: string): Promise<Listener> => listen(net.createServer((socket) => socket.destroy()), host);

const cmYaml = (name: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n`;
const serveConfigMap = (name: string): http.RequestListener => (_req, res) => void res.end(cmYaml(name));
const cmPath = (namespace: string, name: string): string => `/api/v1/namespaces/${namespace}/configmaps/${name}`;
/** The kubeconfig of edge-1 with its server moved to `server`. */
const edge1At = (server: string): Promise<string> =>
  kubeconfigOf('edge-1', (kc) => {
    (kc.clusters as { cluster: { server: string } }[])[0]!.cluster.server = server;
  });

beforeAll(async () => {
  await ensureClusters([HOME, 'edge-1']);
  mgmt = await clusterClient(HOME);
  await installCrds(HOME);
}, 120_000);

afterAll(async () => {
  await Promise.all(listeners.map((l) => l.close()));
  await closeClients();
});

/** Ready=False with `reason`, a message naming the flag (returned), a Warning Event of that reason and a log line naming the flag. */
async function refused(op: OperatorProcess, namespace: string, name: string, reason: string, plural = 'syncs'): Promise<string> {
  const failed = await waitForReady(mgmt, namespace, name, 'False', reason, 60_000, plural);
  const message = readyOf(failed)?.message ?? '';
  expect(message).toContain('which --source-deny-cidrs denies; nothing was sent');
  await eventually(`a Warning ${reason} Event on ${name} naming the flag`, async () =>
    (await eventsFor(mgmt, namespace, name)).some((e) => e.reason === reason && e.type === 'Warning' && e.message.includes('--source-deny-cidrs')) || undefined,
  );
  await op.waitForLog(`a log line on ${name} naming the flag`, (l) => l.name === name && JSON.stringify(l).includes('--source-deny-cidrs'));
  return message;
}

describe('an operator denying 127.0.0.2/32', () => {
  let op: OperatorProcess;
  const ns = useOperatedNamespace(HOME, 'denyip', (o) => ({ op } = o), ['--source-deny-cidrs', '127.0.0.2/32']);
  const edgeNs = useTestNamespace('edge-1', 'denyipedge');

  test('an http source served on 127.0.0.2 is refused (SourceError) and the server is never connected to; one on 127.0.0.1 is applied', async () => {
    const denied = await httpServer('127.0.0.2', serveConfigMap('denied-cm'));
    const allowed = await httpServer('127.0.0.1', serveConfigMap('allowed-cm'));
    await applySync(mgmt, ns(), 'denied', { defaultNamespace: ns(), source: { http: { url: `${denied.base}/app.yaml` } } });
    await applySync(mgmt, ns(), 'allowed', { defaultNamespace: ns(), source: { http: { url: `${allowed.base}/app.yaml` } } });
    const message = await refused(op, ns(), 'denied', 'SourceError');
    expect(message).toBe(
      `GET ${denied.base}/app.yaml: connection to 127.0.0.2 refused: the address is in 127.0.0.2/32, which --source-deny-cidrs denies; nothing was sent`,
    );
    await waitForReady(mgmt, ns(), 'allowed', 'True', 'Succeeded');
    expect(await find(mgmt, cmPath(ns(), 'allowed-cm'))).toBeDefined();
    expect(await find(mgmt, cmPath(ns(), 'denied-cm'))).toBeUndefined();
    expect(denied.connections).toBe(0);
    expect(allowed.requests).toBeGreaterThan(0);
  });

  test('a redirect from 127.0.0.1 to 127.0.0.2 is refused; the denied server receives nothing', async () => {
    const denied = await httpServer('127.0.0.2', serveConfigMap('redirected-cm'));
    const redirector = await httpServer('127.0.0.1', (_req, res) => void res.writeHead(302, { location: `${denied.base}/app.yaml` }).end());
    await applySync(mgmt, ns(), 'redirected', { defaultNamespace: ns(), source: { http: { url: `${redirector.base}/app.yaml` } } });
    const message = await refused(op, ns(), 'redirected', 'SourceError');
    expect(message).toBe(
      `GET ${redirector.base}/app.yaml: redirected to ${denied.base}/app.yaml: connection to 127.0.0.2 refused: the address is in 127.0.0.2/32, which --source-deny-cidrs denies; nothing was sent`,
    );
    expect(redirector.requests).toBeGreaterThan(0);
    expect(denied.connections).toBe(0);
    expect(await find(mgmt, cmPath(ns(), 'redirected-cm'))).toBeUndefined();
  });

  test("a RemoteSync whose kubeconfig's server is 127.0.0.2 is refused (InvalidKubeconfig) and nothing connects there; edge-1 on 127.0.0.1 still works", async () => {
    const apiServer = await tcpListener('127.0.0.2');
    await putKubeconfigSecret(mgmt, ns(), 'denied-kubeconfig', await edge1At(`https://127.0.0.2:${apiServer.port}`));
    await putKubeconfigSecret(mgmt, ns(), 'edge-1-kubeconfig', await kubeconfigOf('edge-1'));
    const inline = (name: string) => [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: edgeNs() }, data: { a: '1' } }];
    await applyRemoteSync(mgmt, ns(), 'denied-remote', { kubeConfig: { secretRef: { name: 'denied-kubeconfig' } }, source: { inline: inline('denied-remote') } });
    await applyRemoteSync(mgmt, ns(), 'edge-1', { kubeConfig: { secretRef: { name: 'edge-1-kubeconfig' } }, source: { inline: inline('edge-1') } });
    const message = await refused(op, ns(), 'denied-remote', 'InvalidKubeconfig', 'remotesyncs');
    expect(message).toContain(
      `has server https://127.0.0.2:${apiServer.port}: connection to 127.0.0.2 refused: the address is in 127.0.0.2/32, which --source-deny-cidrs denies; nothing was sent`,
    );
    await waitForRemoteReady(mgmt, ns(), 'edge-1', 'True', 'Succeeded');
    expect(apiServer.connections).toBe(0);
  });
});

describe('an operator denying 127.0.0.1/32 and ::1/128 (localhost)', () => {
  let op: OperatorProcess;
  // The managing cluster (127.0.0.1, from --kubeconfig) is the operator's own: not subject to the policy.
  const ns = useOperatedNamespace(HOME, 'denyname', (o) => ({ op } = o), ['--source-deny-cidrs', '127.0.0.1/32,::1/128']);

  test('an http source named by a host name that resolves to a denied address is refused; the server receives nothing', async () => {
    const server = await httpServer('127.0.0.1', serveConfigMap('by-name-cm'));
    const url = `http://localhost:${server.port}/app.yaml`;
    await applySync(mgmt, ns(), 'by-name', { defaultNamespace: ns(), source: { http: { url } } });
    const message = await refused(op, ns(), 'by-name', 'SourceError');
    expect(message).toMatch(
      new RegExp(`^GET ${url.replace(/[.]/g, '\\.')}: connection to localhost refused: it resolves to (127\\.0\\.0\\.1 \\(in 127\\.0\\.0\\.1/32\\)|::1 \\(in ::1/128\\))`),
    );
    expect(server.connections).toBe(0);
  });

  test("a RemoteSync whose kubeconfig's server is named by such a host name is refused (ClusterUnreachable) and nothing connects there", async () => {
    const apiServer = await tcpListener('127.0.0.1');
    await putKubeconfigSecret(mgmt, ns(), 'by-name-kubeconfig', await edge1At(`https://localhost:${apiServer.port}`));
    await applyRemoteSync(mgmt, ns(), 'by-name-remote', {
      kubeConfig: { secretRef: { name: 'by-name-kubeconfig' } },
      source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'by-name-remote', namespace: 'default' } }] },
    });
    const message = await refused(op, ns(), 'by-name-remote', 'ClusterUnreachable', 'remotesyncs');
    expect(message).toContain('connection to localhost refused: it resolves to ');
    expect(apiServer.connections).toBe(0);
  });
});

describe("a remote cluster's client (both protocols)", () => {
  test.each([
    ['HTTP/2 (ALPN)', true],
    ['HTTP/1.1', false],
  ])('%s: a denied server, by address or by name, is refused before it is connected to; an allowed one answers', async (_protocol, http2) => {
    const apiServer = await tcpListener('127.0.0.1');
    const policy = AddressPolicy.parse('127.0.0.2/32,::1/128');
    const clientOf = async (server: string, deny = policy): Promise<KubeClient> =>
      KubeClient.create('edge-1', checkedKubeconfig(await edge1At(server), 'test'), 'address-policy-test', { addressPolicy: deny, http2, timeoutMs: 10_000 });
    const byAddress = await clientOf(`https://127.0.0.2:${apiServer.port}`);
    const byName = await clientOf(`https://localhost:${apiServer.port}`, AddressPolicy.parse('127.0.0.1/32,::1/128'));
    const edge1 = await clientOf((await clusterClient('edge-1')).server.origin);
    try {
      const refusal = (client: KubeClient) => client.request({ path: '/version' }).then(() => undefined, (err: unknown) => err as Error);
      const [a, b] = await Promise.all([refusal(byAddress), refusal(byName)]);
      expect(a).toBeInstanceOf(TransportError);
      expect(a?.message).toContain('connection to 127.0.0.2 refused: the address is in 127.0.0.2/32, which --source-deny-cidrs denies; nothing was sent');
      expect(b).toBeInstanceOf(TransportError);
      expect(b?.message).toContain('connection to localhost refused: it resolves to 127.0.0.1 (in 127.0.0.1/32)');
      expect(apiServer.connections).toBe(0);
      expect(await edge1.request<{ gitVersion: string }>({ path: '/version' })).toMatchObject({ gitVersion: expect.any(String) });
      expect(edge1.connectionStats().protocol).toBe(http2 ? 'h2' : 'http/1.1');
    } finally {
      for (const c of [byAddress, byName, edge1]) c.close();
    }
  });
});

describe('the flag on the command line', () => {
  test('syncprims build takes it as the operator does: a denied source is refused, naming the flag, with nothing sent', async () => {
    const denied = await httpServer('127.0.0.2', serveConfigMap('built-cm'));
    const url = `${denied.base}/app.yaml`;
    const [refusal, allowed] = await Promise.all([
      // Two entries (with a space), both loopback: the first denies nothing this test connects to.
      runCli(['build', '--url', url, '--source-deny-cidrs', '127.0.0.3/32, 127.0.0.2/32']),
      runCli(['build', '--url', url, '--default-namespace', 'x', '--source-deny-cidrs', '']),
    ]);
    expect(refusal).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`GET ${url}: connection to 127.0.0.2 refused: the address is in 127.0.0.2/32, which --source-deny-cidrs denies; nothing was sent`),
    });
    expect(allowed.code).toBe(0);
    expect(denied.requests).toBe(1);
  });

  test.each([
    ['build', ['--url', 'http://127.0.0.1:1/app.yaml']],
    ['diff', ['sync/app', '--kubeconfig', kubeconfigPath(HOME)]],
    ['run', ['--kubeconfig', kubeconfigPath(HOME)]],
  ])('syncprims %s: a malformed CIDR is bad usage (exit 2), naming it', async (command, args) => {
    // Only parsed, never connected to: the command refuses the flag before it starts.
    const res = await runCli([command, ...args, '--source-deny-cidrs', '127.0.0.0/8,127.0.0.0/33'], { timeoutMs: 60_000 });
    expect(res).toMatchObject({
      code: 2,
      // The message's own examples (the default denied ranges) are the unit test's to check (test/unit/address-policy.test.ts › AddressPolicy.parse).
      stderr: expect.stringContaining('--source-deny-cidrs: "127.0.0.0/33" is not a CIDR: want address/prefix, as '),
    });
  });
});
