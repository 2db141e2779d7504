// The web view's HTTP server: the page, its scripts, the view as JSON, the
// view's updates as server-sent events, and the detail of one sync. Read
// only (GET and HEAD); no login of its own (docs/ui.md: it sits behind
// `kubectl port-forward` or the cluster's auth proxy).
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../runtime/logger.js';
import { loopbackByDefault } from '../runtime/http-endpoints.js';
import { syncDetail, type DetailSources } from './detail.js';
import type { ViewFeed } from './feed.js';
import { isLoopbackHost, loopbackHostAllowed, streamOriginAllowed } from './host-check.js';
import { PAGE_HTML, PAGE_CSS } from './page.js';

/** The browser modules served from dist/ui/client/ (compiled there from src/ui/client/ by tsc). */
const CLIENT_FILES = new Set(['app.js', 'graph-view.js', 'panels.js', 'dom.js']);
const CLIENT_DIR = new URL('./client/', import.meta.url);

/** A page that reads its stream slower than views come and has this much unsent is cut off: it reconnects and gets the latest view. */
const MAX_UNSENT_BYTES = 16 * 2 ** 20;

/** A comment line on each open stream this often, so proxies keep it open and dead clients are found. */
const HEARTBEAT_MS = 15_000;

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export interface UiServerOptions {
  addr: string;
  feed: ViewFeed;
  sources: DetailSources;
  logger: Logger;
}

export interface UiServer {
  port: number;
  /** The address to open: `http://host:port/`. */
  url: string;
  close(): Promise<void>;
}

/** `8082` or `:8082` bind to loopback; a host must be named (`0.0.0.0:8082`) to listen on others. */
export function uiListenAddr(addr: string): { host: string; port: number } {
  return loopbackByDefault(addr);
}

export async function serveUi(opts: UiServerOptions): Promise<UiServer> {
  const { host, port } = uiListenAddr(opts.addr);
  const loopbackOnly = isLoopbackHost(host);
  const streams = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    handle(req, res, { ...opts, loopbackOnly, streams }).catch((err: unknown) => {
      opts.logger.warn({ err: String(err), path: req.url }, 'ui request failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const heartbeat = setInterval(() => streams.forEach((s) => s.write(': ping\n\n')), HEARTBEAT_MS);
  heartbeat.unref();
  return {
    port: bound,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/`,
    close: async () => {
      clearInterval(heartbeat);
      for (const s of streams) s.end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Context extends UiServerOptions {
  loopbackOnly: boolean;
  streams: Set<http.ServerResponse>;
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, ctx: Context): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain', 'read only');
  // Bound to loopback, it answers only to loopback names: a web page elsewhere cannot rebind a name to it.
  if (ctx.loopbackOnly && !loopbackHostAllowed(req.headers.host)) {
    return refuse(req, res, ctx, 421, 'wrong host: open the view at http://127.0.0.1:<port>/ or http://localhost:<port>/');
  }
  const url = new URL(req.url ?? '/', 'http://ui');
  const route = url.pathname;
  if (route === '/') return send(res, 200, 'text/html; charset=utf-8', PAGE_HTML);
  if (route === '/favicon.ico') return send(res, 204, 'text/plain', '');
  if (route === '/app.css') return send(res, 200, 'text/css; charset=utf-8', PAGE_CSS);
  if (route.startsWith('/client/') && CLIENT_FILES.has(route.slice('/client/'.length))) {
    return send(res, 200, 'text/javascript; charset=utf-8', await readFile(new URL(route.slice('/client/'.length), CLIENT_DIR), 'utf8'));
  }
  if (route === '/api/view') return sendJson(res, 200, ctx.feed.get());
  if (route === '/api/stream') {
    if (!streamOriginAllowed(req.headers.origin, req.headers.host)) return refuse(req, res, ctx, 403, 'wrong origin: the stream is for the page of this host only');
    return stream(req, res, ctx);
  }
  if (route === '/api/sync') return detail(url, res, ctx);
  return send(res, 404, 'text/plain', 'not found');
}

async function detail(url: URL, res: http.ServerResponse, ctx: Context): Promise<void> {
  const [kind, namespace, name] = ['kind', 'namespace', 'name'].map((p) => url.searchParams.get(p) ?? '');
  const obj = ctx.feed.find(kind!, namespace!, name!);
  if (!obj) return sendJson(res, 404, { error: `${kind} ${namespace}/${name} is not in the operator's cache` });
  return sendJson(res, 200, await syncDetail(obj, ctx.sources));
}

/** Server-sent events: the view now, then each new one. */
function stream(req: http.IncomingMessage, res: http.ServerResponse, ctx: Context): void {
  res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream', connection: 'keep-alive' });
  const sendView = (data: unknown): void => {
    if (res.writableLength > MAX_UNSENT_BYTES) {
      ctx.logger.warn({ unsentBytes: res.writableLength }, 'ui: a page reads its event stream too slowly: closing it (it reconnects)');
      res.destroy();
      return;
    }
    res.write(`event: view\ndata: ${JSON.stringify(data)}\n\n`);
  };
  sendView(ctx.feed.get());
  const stop = ctx.feed.subscribe((view, version) => sendView({ view, version }));
  ctx.streams.add(res);
  req.on('close', () => {
    stop();
    ctx.streams.delete(res);
  });
}

function send(res: http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

function sendJson(res: http.ServerResponse, status: number, doc: unknown): void {
  send(res, status, 'application/json', JSON.stringify(doc));
}

/** A request from where the view does not answer: a short text, and a log line naming what was refused. */
function refuse(req: http.IncomingMessage, res: http.ServerResponse, ctx: Context, status: number, text: string): void {
  ctx.logger.warn({ status, host: req.headers.host, origin: req.headers.origin, path: req.url }, `ui: request refused (${text})`);
  send(res, status, 'text/plain', text);
}
