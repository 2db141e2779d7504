// A fault-injecting reverse proxy in front of a real API server, for tests of
// how the operator behaves when its API servers misbehave (issue 15, item 2).
//
// It terminates TLS with a CA of its own (made here with the `openssl`
// binary), speaks HTTP/2 and HTTP/1.1 (ALPN: the operator's client prefers h2,
// see src/kube/transport-alpn.ts), and forwards each request over HTTP/1.1 to
// the API server as the cluster's admin (its client certificate): whatever
// credentials the client sent are dropped, so a kubeconfig for the proxy needs
// only a placeholder token. Faults are switched at runtime per request matcher
// (method, path, watch or not): a status answer (429 with Retry-After, 500,
// 503, 409), a connection reset, a delay, a request that is accepted and never
// answered; live watches can be stalled (the proxy stops forwarding their
// bytes), and whole connections made half-open (a TCP relay in front of the
// TLS server stops passing data, see stalling-proxy.ts). Every request is
// recorded, so a test can count what the client sent while a fault was on.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { loadKubeConfigFile } from '../../src/kube/config.js';
import { kubeconfigPath } from './controlplane.js';
import { StallingProxy } from './stalling-proxy.js';

/** Which requests a fault applies to; every given field must match. */
export interface Matcher {
  /** e.g. `PATCH`, or /^(PATCH|PUT)$/. */
  method?: string | RegExp;
  /** Tested against the path with its query, e.g. /\/configmaps\//. */
  path?: RegExp;
  /** Only watches (true), or only what is not a watch (false). */
  watch?: boolean;
  /** Only requests sent with this bearer token (a kubeconfig's placeholder: one identity of several on the proxy). */
  token?: string;
}

export type Fault =
  /** Answers with this status and a Kubernetes Status body; Retry-After when given. */
  | { kind: 'status'; status: number; retryAfterSeconds?: number }
  /** Closes the client's connection (HTTP/1.1: the socket; HTTP/2: the session) without an answer. */
  | { kind: 'reset' }
  /** Forwards after this delay. */
  | { kind: 'delay'; ms: number }
  /** Accepts the request and never answers (until the fault is removed or the proxy closes). */
  | { kind: 'hang' };

/** One request as the proxy saw it. */
export interface SeenRequest {
  method: string;
  /** Path and query. */
  url: string;
  watch: boolean;
  protocol: 'h2' | 'http/1.1';
  userAgent: string;
  /** The bearer token it was sent with (dropped before forwarding). */
  token?: string;
  /** Milliseconds since the epoch, when it arrived. */
  at: number;
  /** The fault it met, if any (`status 429`, `reset`, ...). */
  fault?: string;
}

export interface FaultHandle {
  /** Ends the fault: requests it held (`hang`) are closed, later ones pass. */
  remove(): void;
}

interface Rule {
  match: Matcher;
  fault: Fault;
  /** Requests held by a `hang`, closed when the rule goes. */
  held: Set<() => void>;
}

type Req = http.IncomingMessage | http2.Http2ServerRequest;
type Res = http.ServerResponse | http2.Http2ServerResponse;

/** A response being forwarded: to stall it, or to end it. */
interface Forwarding {
  seen: SeenRequest;
  upstream: http.IncomingMessage;
  client: Res;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'http2-settings']);

export interface FaultProxyOptions {
  /** Offer h2 in ALPN (default true); false: HTTP/1.1 only. */
  http2?: boolean;
}

export class FaultProxy {
  readonly requests: SeenRequest[] = [];
  private readonly rules = new Set<Rule>();
  private readonly forwarding = new Set<Forwarding>();
  private readonly stalled = new Set<Forwarding>();
  private readonly sessions = new Set<http2.Http2Session>();
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: http2.Http2SecureServer | https.Server,
    /** A TCP relay in front of the TLS server: what makes connections half-open. */
    private readonly front: StallingProxy,
    private readonly upstream: https.Agent,
    private readonly target: URL,
    readonly caPem: string,
  ) {
    server.on('connection', (socket: net.Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    server.on('session', (session: http2.Http2Session) => {
      this.sessions.add(session);
      session.once('close', () => this.sessions.delete(session));
    });
    server.on('request', (req: Req, res: Res) => this.handle(req, res));
  }

  /** Starts a proxy on 127.0.0.1 in front of a local cluster (`mgmt`, `edge-1`, ...). */
  static async start(cluster: string, options: FaultProxyOptions = {}): Promise<FaultProxy> {
    const kc = loadKubeConfigFile(kubeconfigPath(cluster));
    const tls: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(tls);
    const pki = proxyPki();
    const serving = { key: pki.key, cert: pki.cert };
    const server =
      options.http2 === false
        ? https.createServer({ ...serving, ALPNProtocols: ['http/1.1'] })
        : http2.createSecureServer({ ...serving, allowHTTP1: true });
    const upstream = new https.Agent({ keepAlive: true, ca: tls.ca, cert: tls.cert, key: tls.key });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const front = await StallingProxy.start((server.address() as net.AddressInfo).port);
    return new FaultProxy(server, front, upstream, new URL(kc.getCurrentCluster()?.server ?? ''), pki.ca);
  }

  /** Where clients connect. */
  get port(): number {
    return this.front.port;
  }

  /**
   * A kubeconfig (YAML) for the proxy: its CA, and a placeholder token (the
   * proxy authenticates upstream), `user` merged into its user (another
   * token: another identity on the same server).
   */
  kubeconfig(name = 'via-fault-proxy', user: Record<string, unknown> = {}): string {
    return stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name, cluster: { server: `https://127.0.0.1:${this.port}`, 'certificate-authority-data': Buffer.from(this.caPem).toString('base64') } }],
      users: [{ name, user: { token: 'replaced-by-the-fault-proxy', ...user } }],
      contexts: [{ name, context: { cluster: name, user: name } }],
      'current-context': name,
    });
  }

  /** Switches a fault on for the requests `match` selects (the newest rule wins); returns the way to end it. */
  inject(match: Matcher, fault: Fault): FaultHandle {
    const rule: Rule = { match, fault, held: new Set() };
    this.rules.add(rule);
    return {
      remove: () => {
        this.rules.delete(rule);
        for (const close of rule.held) close();
        rule.held.clear();
      },
    };
  }

  /** Ends every fault, resumes nothing stalled (stalled watches stay stalled until the client gives up). */
  clearFaults(): void {
    for (const rule of [...this.rules]) {
      this.rules.delete(rule);
      for (const close of rule.held) close();
    }
  }

  /**
   * Live forwarded responses that `match` selects (watches, usually) stop
   * passing bytes, without closing: as a server or middlebox that hangs mid
   * stream. The connection stays healthy (HTTP/2 pings are answered), so only
   * the client's own idleness check on the stream can notice. Returns how many.
   */
  stallStreams(match: Matcher): number {
    let n = 0;
    for (const f of this.forwarding) {
      if (!matches(match, f.seen) || this.stalled.has(f)) continue;
      f.upstream.unpipe(f.client as NodeJS.WritableStream);
      f.upstream.pause();
      this.stalled.add(f);
      n++;
    }
    return n;
  }

  /** Live watches (forwarded responses that are watches) that `match` selects and that still pass data. */
  liveWatches(match: Matcher = {}): SeenRequest[] {
    return [...this.forwarding].filter((f) => f.seen.watch && !this.stalled.has(f) && matches(match, f.seen)).map((f) => f.seen);
  }

  /**
   * Every open connection goes silent in both directions at the TCP level
   * (a half-open link), and new ones are accepted and never answered, until
   * `restoreConnections()`. HTTP/2 pings go unanswered too.
   */
  halfOpenConnections(): number {
    const n = this.front.stallAll();
    this.front.blackHole();
    return n;
  }

  /** Connections pass again; the silent ones are closed. */
  restoreConnections(): void {
    this.front.restore();
  }

  /** The recorded requests that `match` selects, since `since` (ms since the epoch). */
  seen(match: Matcher = {}, since = 0): SeenRequest[] {
    return this.requests.filter((r) => r.at >= since && matches(match, r));
  }

  async close(): Promise<void> {
    this.clearFaults();
    for (const f of this.forwarding) {
      f.upstream.destroy();
      destroyResponse(f.client);
    }
    for (const s of this.sessions) s.destroy();
    for (const s of this.sockets) s.destroy();
    this.upstream.destroy();
    await this.front.close();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private handle(req: Req, res: Res): void {
    const url = req.url ?? '/';
    const query = new URL(url, 'https://proxy').searchParams;
    const seen: SeenRequest = {
      method: req.method ?? 'GET',
      url,
      watch: ['1', 'true'].includes(query.get('watch') ?? ''),
      protocol: req.httpVersion === '2.0' ? 'h2' : 'http/1.1',
      userAgent: String(req.headers['user-agent'] ?? ''),
      token: /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1],
      at: Date.now(),
    };
    this.requests.push(seen);
    const rule = [...this.rules].reverse().find((r) => matches(r.match, seen));
    if (!rule) return this.forward(req, res, seen);
    const fault = rule.fault;
    switch (fault.kind) {
      case 'status':
        seen.fault = `status ${fault.status}`;
        return answer(res, fault.status, fault.retryAfterSeconds);
      case 'reset':
        seen.fault = 'reset';
        return resetConnection(req);
      case 'delay': {
        seen.fault = `delay ${fault.ms}`;
        const timer = setTimeout(() => this.forward(req, res, seen), fault.ms);
        res.once('close', () => clearTimeout(timer));
        return;
      }
      case 'hang': {
        seen.fault = 'hang';
        const close = (): void => destroyResponse(res);
        rule.held.add(close);
        res.once('close', () => rule.held.delete(close));
        return;
      }
    }
  }

  private forward(req: Req, res: Res, seen: SeenRequest): void {
    const up = https.request(
      {
        host: this.target.hostname,
        port: this.target.port,
        method: req.method,
        path: req.url,
        headers: { ...forwardedHeaders(req.headers), host: this.target.host },
        agent: this.upstream,
      },
      (upRes) => {
        const forwarding: Forwarding = { seen, upstream: upRes, client: res };
        this.forwarding.add(forwarding);
        res.writeHead(upRes.statusCode ?? 502, forwardedHeaders(upRes.headers));
        // A watch's headers go out before its first event.
        (res as http.ServerResponse).flushHeaders?.();
        upRes.pipe(res as NodeJS.WritableStream);
        const done = (): void => {
          this.forwarding.delete(forwarding);
          this.stalled.delete(forwarding);
          if (!upRes.complete) upRes.destroy(); // the client went away: end the request upstream too
        };
        res.once('close', done);
        upRes.once('close', () => {
          // Upstream ended early (the API server went away): so does the client's response.
          if (!upRes.complete) destroyResponse(res);
        });
      },
    );
    up.on('error', () => destroyResponse(res));
    req.pipe(up);
  }
}

function matches(m: Matcher, r: SeenRequest): boolean {
  if (m.method !== undefined && !(typeof m.method === 'string' ? m.method === r.method : m.method.test(r.method))) return false;
  if (m.path !== undefined && !m.path.test(r.url)) return false;
  if (m.watch !== undefined && m.watch !== r.watch) return false;
  if (m.token !== undefined && m.token !== r.token) return false;
  return true;
}

/** Request or response headers without hop-by-hop ones, HTTP/2 pseudo-headers, or the client's credentials. */
function forwardedHeaders(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(':') || HOP_BY_HOP.has(name) || name === 'authorization' || value === undefined) continue;
    out[name] = value;
  }
  return out;
}

const REASONS: Record<number, string> = { 409: 'Conflict', 429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable' };

/** An answer as the API server gives it: a Status object. */
function answer(res: Res, status: number, retryAfterSeconds: number | undefined): void {
  const body = JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `injected by the fault proxy: HTTP ${status}`,
    reason: REASONS[status] ?? 'InternalError',
    code: status,
  });
  const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
  if (retryAfterSeconds !== undefined) headers['retry-after'] = String(retryAfterSeconds);
  res.writeHead(status, headers);
  res.end(body);
}

/** Drops the client's connection: an HTTP/1.1 socket, or the whole HTTP/2 session (every stream on it). */
function resetConnection(req: Req): void {
  if ('stream' in req) req.stream.session?.destroy();
  else req.socket.destroy();
}

function destroyResponse(res: Res): void {
  if ('stream' in res) {
    if (!res.stream.destroyed) res.stream.close(http2.constants.NGHTTP2_CANCEL);
  } else {
    res.socket?.destroy();
  }
}

interface Pki {
  /** The CA certificate (PEM) a kubeconfig trusts. */
  ca: string;
  /** The serving certificate for 127.0.0.1 and its key (PEM). */
  cert: string;
  key: string;
}

let pki: Pki | undefined;

/** A CA and a serving certificate for 127.0.0.1 signed by it, made once per test process. */
function proxyPki(): Pki {
  if (pki) return pki;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fault-proxy-pki-'));
  const at = (f: string): string => path.join(dir, f);
  const openssl = (...args: string[]): void => {
    try {
      execFileSync('openssl', args, { stdio: 'pipe' });
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: Buffer };
      const why = e.code === 'ENOENT' ? 'the openssl binary is not installed (Debian: apt-get install openssl)' : (e.stderr?.toString() || e.message);
      throw new Error(`the fault proxy could not make its CA with openssl: ${why}`, { cause: err });
    }
  };
  try {
    openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-subj', '/CN=fault-proxy-ca', '-keyout', at('ca.key'), '-out', at('ca.crt'));
    openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=127.0.0.1',
      '-keyout', at('server.key'), '-out', at('server.csr'));
    writeFileSync(at('ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
    openssl('x509', '-req', '-in', at('server.csr'), '-CA', at('ca.crt'), '-CAkey', at('ca.key'), '-CAcreateserial',
      '-days', '2', '-extfile', at('ext'), '-out', at('server.crt'));
    pki = { ca: readFileSync(at('ca.crt'), 'utf8'), cert: readFileSync(at('server.crt'), 'utf8'), key: readFileSync(at('server.key'), 'utf8') };
    return pki;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
