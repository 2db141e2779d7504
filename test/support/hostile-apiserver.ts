// A hostile "API server" for a tenant's kubeconfig (issue 43): on 127.0.0.1,
// TLS with a CA of its own, HTTP/2 (and HTTP/1.1), it answers discovery,
// lists, gets and watches in one of four ways that no Kubernetes API server
// does. Every body is written as the client reads it (backpressure), so the
// test process never holds what it sends.
import http2 from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { selfSignedCertificate } from './tls-server.js';

export type HostileMode =
  /** Every answer (the version, discovery, lists, gets) a 200 whose body never ends. */
  | 'endless'
  /** Every answer a 200 whose body drips a byte every `dripMs`, never ending. */
  | 'drip'
  /** The version answers; discovery documents are complete, valid and `hugeBytes` long. */
  | 'huge-discovery'
  /** Version, discovery and writes answer as a small API server would; a watch's first event is `hugeBytes` long. */
  | 'huge-watch';

export interface HostileOptions {
  /** drip: the pause between bytes (default 1 s). */
  dripMs?: number;
  /** huge-discovery and huge-watch: the document's or the event's size (default 100 MiB). */
  hugeBytes?: number;
}

export interface HostileApiServer {
  mode: HostileMode;
  /** `https://127.0.0.1:<port>` */
  base: string;
  caPem: string;
  /** Requests received, by path (no query). */
  readonly requests: string[];
  /** Connections the client closed (or reset): a body past its bound closes its connection or stream. */
  readonly closedStreams: number;
  /** A kubeconfig for it with a bearer `token` of its own (each token an identity of its own to the operator). */
  kubeconfig(token?: string): string;
  close(): Promise<void>;
}

type Res = http2.Http2ServerResponse;
const MiB = 2 ** 20;
const CHUNK = Buffer.alloc(64 * 1024, 'x');
const DISCOVERY = /^\/(api|apis)(\/|$)/;

export async function startHostileApiServer(mode: HostileMode, opts: HostileOptions = {}): Promise<HostileApiServer> {
  const { key, caPem } = selfSignedCertificate();
  const requests: string[] = [];
  let closedStreams = 0;
  const sockets = new Set<Socket>();
  const server = http2.createSecureServer({ key, cert: caPem, allowHTTP1: true }, (req, res) => {
    const url = new URL(req.url, 'https://x');
    requests.push(url.pathname);
    res.on('close', () => {
      if (!res.writableEnded) closedStreams++;
    });
    answer(mode, opts, req.method, url, req, res);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    mode,
    base,
    caPem,
    requests,
    get closedStreams() {
      return closedStreams;
    },
    kubeconfig: (token = 'hostile') => kubeconfigFor(base, caPem, token),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

function answer(mode: HostileMode, opts: HostileOptions, method: string, url: URL, req: http2.Http2ServerRequest, res: Res): void {
  const huge = opts.hugeBytes ?? 100 * MiB;
  switch (mode) {
    case 'endless':
      return json(res, 200, '{"kind":"APIResourceList","resources":[', () => CHUNK);
    case 'drip':
      return drip(res, opts.dripMs ?? 1_000);
    case 'huge-discovery':
      if (url.pathname === '/version') return json(res, 200, VERSION);
      if (DISCOVERY.test(url.pathname) && !/\/(namespaces|configmaps)/.test(url.pathname)) {
        return json(res, 200, `{"kind":"APIResourceList","groupVersion":"v1","resources":${RESOURCES},"padding":"`, remaining(huge), '"}');
      }
      return notFound(res);
    case 'huge-watch':
      return smallApiServer(method, url, req, res, huge);
  }
}

/** Enough of an API server for a RemoteSync to apply a ConfigMap, whose watches start with one event of `huge` bytes. */
function smallApiServer(method: string, url: URL, req: http2.Http2ServerRequest, res: Res, huge: number): void {
  if (url.pathname === '/version') return json(res, 200, VERSION);
  if (url.pathname === '/api/v1') return json(res, 200, `{"kind":"APIResourceList","groupVersion":"v1","resources":${RESOURCES}}`);
  if (url.pathname === '/api') return json(res, 200, '{"kind":"APIVersions","versions":["v1"]}');
  if (url.pathname === '/apis') return json(res, 200, '{"kind":"APIGroupList","apiVersion":"v1","groups":[]}');
  if (url.searchParams.get('watch') === '1' || url.searchParams.get('watch') === 'true') {
    return json(res, 200, '{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"huge","namespace":"default","resourceVersion":"2"},"data":{"x":"', remaining(huge), '"}}}\n');
  }
  if (method === 'GET') {
    const segments = url.pathname.split('/').filter(Boolean);
    // A list (`/api/v1/configmaps`, `/api/v1/namespaces/n/configmaps`) is empty; an object is not found.
    if (segments.length === 3 || (segments.length === 5 && segments[2] === 'namespaces')) return json(res, 200, '{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}');
    return notFound(res);
  }
  // A write: the object sent, as written.
  const body: Buffer[] = [];
  req.on('data', (c: Buffer) => body.push(c));
  req.on('end', () => {
    let obj: { metadata?: Record<string, unknown> } = {};
    try {
      obj = JSON.parse(Buffer.concat(body).toString('utf8') || '{}') as typeof obj;
    } catch {
      // an empty or odd body: answered as an object all the same
    }
    obj.metadata = { ...obj.metadata, uid: '00000000-0000-0000-0000-000000000001', resourceVersion: '1', generation: 1 };
    json(res, method === 'POST' ? 201 : 200, JSON.stringify(obj));
  });
}

const VERSION = '{"major":"1","minor":"36","gitVersion":"v1.36.0-hostile"}';
const RESOURCES =
  '[{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["create","delete","get","list","patch","update","watch"]},' +
  '{"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","verbs":["create","get","list","patch","watch"]}]';

function notFound(res: Res): void {
  json(res, 404, '{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not found"}');
}

/** A chunk source of `total` bytes of 'x', then nothing. */
function remaining(total: number): () => Buffer | undefined {
  let left = total;
  return () => {
    if (left <= 0) return undefined;
    const chunk = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
    left -= chunk.length;
    return chunk;
  };
}

/** `head`, then `next()`'s chunks as the client reads them (endless if it never says undefined), then `tail`. */
function json(res: Res, status: number, head: string, next?: () => Buffer | undefined, tail = ''): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  if (!next) return void res.end(head);
  res.write(head);
  const more = (): void => {
    for (;;) {
      if (res.destroyed || res.writableEnded) return;
      const chunk = next();
      if (!chunk) return void res.end(tail);
      if (!res.write(chunk)) return void res.once('drain', more);
    }
  };
  more();
}

function drip(res: Res, ms: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{');
  const timer = setInterval(() => {
    if (!res.destroyed) res.write(' ');
  }, ms);
  res.on('close', () => clearInterval(timer));
}

function kubeconfigFor(server: string, caPem: string, token: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'hostile', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: 'tenant', user: { token } }],
    contexts: [{ name: 'hostile', context: { cluster: 'hostile', user: 'tenant' } }],
    'current-context': 'hostile',
  });
}
