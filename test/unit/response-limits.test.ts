// Every answer bounded (issue 43): a byte limit fitted to what is asked, a
// deadline over the whole body, an idle deadline while it streams, and one
// watch event's size and time. The peer is a hostile HTTP/1.1 server on
// 127.0.0.1 (not an API server mock: it answers nothing but what each case
// needs); KubeClient is the real one.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { KubeClient } from '../../src/kube/client.js';
import { ResponseLimitError } from '../../src/kube/errors.js';
import { KubeConfig } from '../../src/kube/kubeconfig.js';
import { answerKind, bytesText, DEFAULT_MAX_BYTES } from '../../src/kube/response-limits.js';
import { watchEvents } from '../../src/kube/watch-stream.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;
const routes = new Map<string, Handler>();
let server: http.Server;
let client: KubeClient;
/** Sockets the server accepted, and how many of them closed. */
const sockets: Socket[] = [];
let closedSockets = 0;

const chunk = Buffer.alloc(64 * 1024, 'x');
/** Writes chunks as fast as the client reads them, until it goes away. */
function endless(res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  endlessOn(res);
}
/** One byte every `ms`, never the end. */
function drip(res: http.ServerResponse, ms: number, first = '{"items":['): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write(first);
  const timer = setInterval(() => res.write(' '), ms);
  res.on('close', () => clearInterval(timer));
}

beforeAll(async () => {
  server = http.createServer((req, res) => (routes.get(new URL(req.url ?? '/', 'http://x').pathname) ?? notFound)(req, res));
  server.on('connection', (s) => {
    sockets.push(s);
    s.on('close', () => closedSockets++);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'hostile', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'c', cluster: 'hostile', user: 'u' }],
    currentContext: 'c',
  });
  client = await KubeClient.create('tenant/hostile', kc, 'test', { timeoutMs: 5_000 });
});

afterAll(async () => {
  client.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function notFound(_req: http.IncomingMessage, res: http.ServerResponse): void {
  res.writeHead(404, { 'content-type': 'application/json' }).end('{"kind":"Status","reason":"NotFound"}');
}

async function failure(p: Promise<unknown>): Promise<ResponseLimitError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ResponseLimitError);
  return err as ResponseLimitError;
}

describe('what a request asks for', () => {
  test.each([
    ['GET', '/api/v1', 'discovery document'],
    ['GET', '/apis/apps/v1', 'discovery document'],
    ['GET', '/apis', 'discovery document'],
    ['GET', '/version', 'discovery document'],
    ['GET', '/api/v1/namespaces', 'list page'],
    ['GET', '/api/v1/namespaces/ns', 'object'],
    ['GET', '/api/v1/namespaces/ns/configmaps', 'list page'],
    ['GET', '/api/v1/namespaces/ns/configmaps/cm', 'object'],
    ['PATCH', '/api/v1/namespaces/ns/configmaps/cm', 'object'],
    ['POST', '/api/v1/namespaces/ns/configmaps', 'object'],
    ['GET', '/apis/apps/v1/deployments', 'list page'],
    ['GET', '/apis/apps/v1/namespaces/ns/deployments/d/status', 'object'],
  ])('%s %s: %s', (method, path, kind) => {
    expect(answerKind(method, path)).toBe(kind);
  });
});

describe('a body past its byte limit', () => {
  test('an endless discovery document fails at the limit of one, naming the request, the cluster and the limit; its socket is closed', async () => {
    routes.set('/api/v1', (_req, res) => endless(res));
    const before = closedSockets;
    const err = await failure(client.request({ path: '/api/v1' }));
    expect(err.limit).toBe('bytes');
    expect(err.message).toContain('GET /api/v1: the answer of tenant/hostile (http://127.0.0.1:');
    expect(err.message).toContain(`more than ${bytesText(DEFAULT_MAX_BYTES['discovery document'])}, the limit of a discovery document`);
    // The socket is destroyed, never given back to the pool for the next request.
    await waitFor(() => closedSockets > before);
  });

  test("a caller's maxBytes is the limit; a Content-Length past it fails before the body is read", async () => {
    routes.set('/api/v1/namespaces/ns/configmaps/big', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2048 }).end('{"a":"' + 'x'.repeat(2040) + '"}');
    });
    const err = await failure(client.request({ path: '/api/v1/namespaces/ns/configmaps/big', maxBytes: 1024 }));
    expect(err.message).toContain('more than 1 KiB, the limit of an object');
    // Within the limit, the same answer is read.
    await expect(client.request({ path: '/api/v1/namespaces/ns/configmaps/big', maxBytes: 4096 })).resolves.toEqual({ a: 'x'.repeat(2040) });
  });

  test('an endless list page: the limit of a list page', async () => {
    routes.set('/api/v1/configmaps', (_req, res) => endless(res));
    const err = await failure(client.request({ path: '/api/v1/configmaps', maxBytes: 1024 * 1024 }));
    expect(err.message).toContain('more than 1 MiB, the limit of a list page');
  });
});

describe('a body past its deadlines', () => {
  test('a drip (a byte every 100 ms, never idle) fails at the whole deadline, headers and body', async () => {
    routes.set('/api/v1/secrets', (_req, res) => drip(res, 100));
    const before = closedSockets;
    const err = await failure(client.request({ path: '/api/v1/secrets', timeoutMs: 800 }));
    expect(err.limit).toBe('deadline');
    expect(err.message).toContain("an answer not complete within 800 ms, the request's deadline");
    await waitFor(() => closedSockets > before);
  });

  test('a body that stops after its headers fails at the idle deadline', async () => {
    routes.set('/api/v1/pods', (_req, res) => drip(res, 60_000));
    const err = await failure(client.request({ path: '/api/v1/pods', idleTimeoutMs: 300 }));
    expect(err.limit).toBe('idle');
    expect(err.message).toContain('nothing of the answer for 300 ms while it streamed');
  });

  test('a request that is answered in time is read whole', async () => {
    routes.set('/api/v1/namespaces/ns/configmaps/ok', (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    await expect(client.request({ path: '/api/v1/namespaces/ns/configmaps/ok', timeoutMs: 800 })).resolves.toEqual({ ok: true });
  });
});

describe('a watch event past its bounds', () => {
  const event = (name: string): string => `${JSON.stringify({ type: 'ADDED', object: { metadata: { name } } })}\n`;

  test('events within the limit pass; one longer than maxBytes fails the stream, naming the limit', async () => {
    routes.set('/api/v1/configmaps-watch', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(event('a') + event('b'));
      // Then an event that never ends: larger than the limit, in chunks.
      res.write('{"type":"ADDED","object":{"metadata":{"name":"');
      endlessOn(res);
    });
    const { names, err } = await readEvents(await client.stream({ path: '/api/v1/configmaps-watch', idleTimeoutMs: 5_000, maxBytes: 256 * 1024 }));
    expect(names).toEqual(['a', 'b']);
    expect(err).toBeInstanceOf(ResponseLimitError);
    expect((err as Error).message).toContain('one watch event of more than 256 KiB, the limit of an event');
  });

  test('an event that drips fails at the event deadline, though bytes keep coming', async () => {
    routes.set('/api/v1/secrets-watch', (_req, res) => drip(res, 50, event('first') + '{"type":"ADDED"'));
    const { names, err } = await readEvents(await client.stream({ path: '/api/v1/secrets-watch', idleTimeoutMs: 5_000, eventDeadlineMs: 600 }));
    expect(names).toEqual(['first']);
    expect(err).toBeInstanceOf(ResponseLimitError);
    expect((err as Error).message).toContain('one watch event not complete within 600 ms of its first byte');
  });

  test('a long event in many chunks is read whole (and once)', async () => {
    const long = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'long' }, data: { x: 'y'.repeat(3 * 1024 * 1024) } } });
    routes.set('/api/v1/long-watch', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < long.length; i += 1000) res.write(long.slice(i, i + 1000));
      res.end('\n' + event('after'));
    });
    const res = await client.stream({ path: '/api/v1/long-watch', idleTimeoutMs: 5_000 });
    const names: string[] = [];
    for await (const e of watchEvents(res)) names.push(e.object.metadata.name!);
    expect(names).toEqual(['long', 'after']);
  });
});

/** The names of the events read, and the error the stream ended with. */
async function readEvents(res: Readable): Promise<{ names: string[]; err: unknown }> {
  const names: string[] = [];
  try {
    for await (const e of watchEvents(res)) names.push(e.object.metadata.name!);
    return { names, err: undefined };
  } catch (err) {
    return { names, err };
  }
}

function endlessOn(res: http.ServerResponse): void {
  const more = (): void => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', more);
  };
  more();
}

async function waitFor(ok: () => boolean): Promise<void> {
  while (!ok()) await new Promise((r) => setTimeout(r, 20));
}
