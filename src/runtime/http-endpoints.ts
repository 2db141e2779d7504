import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** `:8080`, `127.0.0.1:8080` or `8080` to host and port (`0` picks a free port). */
export function parseAddr(addr: string): { host?: string; port: number } {
  const colon = addr.lastIndexOf(':');
  const host = colon > 0 ? addr.slice(0, colon) : undefined;
  const port = Number(colon >= 0 ? addr.slice(colon + 1) : addr);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`address ${addr}: bad port`);
  return { host, port };
}

/** `8083` or `:8083` to loopback (`127.0.0.1`); a host must be named (`0.0.0.0:8083`) to listen on others. */
export function loopbackByDefault(addr: string): { host: string; port: number } {
  const { host, port } = parseAddr(addr);
  return { host: host ?? '127.0.0.1', port };
}

async function listen(server: http.Server, { host, port }: { host?: string; port: number }): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** Where a server listens, as `host:port` (`[::1]:port` for IPv6). */
export function boundAddress(server: http.Server): string {
  const { address, port } = server.address() as AddressInfo;
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

/** `/healthz` (alive) and `/readyz` (ready once `ready()` says so). */
export async function serveHealth(addr: string, ready: () => boolean): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    const ok = req.url === '/healthz' || (req.url === '/readyz' && ready());
    const known = req.url === '/healthz' || req.url === '/readyz';
    res.writeHead(known ? (ok ? 200 : 503) : 404, { 'content-type': 'text/plain' });
    res.end(known ? (ok ? 'ok' : 'not ready: caches are not primed yet') : 'not found');
  });
  return { server, port: await listen(server, parseAddr(addr)) };
}

/** Where the debug endpoints listen unless told otherwise (`--debug-addr`): loopback only. */
export const DEFAULT_DEBUG_ADDR = '127.0.0.1:8083';

/** A JSON document served at a path, made afresh for each request. */
export type DebugRoutes = Record<string, () => Promise<unknown>>;

/**
 * The debug endpoints (`--enable-debug-endpoints`), on a listener of their
 * own: on loopback unless `addr` names another host, so that what they show
 * is for whoever is on the operator's host (or `kubectl port-forward`s to it),
 * while /healthz stays where a kubelet reaches it.
 */
export async function serveDebug(addr: string, routes: DebugRoutes): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    const route = routes[req.url ?? ''];
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    route()
      .then((doc) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc)))
      .catch((err: unknown) => res.writeHead(500).end(String(err)));
  });
  return { server, port: await listen(server, loopbackByDefault(addr)) };
}

/** `/metrics` in the Prometheus text format. */
export async function serveMetrics(addr: string, registry: Registry): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end('not found');
      return;
    }
    registry
      .metrics()
      .then((text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text))
      .catch((err: unknown) => res.writeHead(500).end(String(err)));
  });
  return { server, port: await listen(server, parseAddr(addr)) };
}

export function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
