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

async function listen(server: http.Server, addr: string): Promise<number> {
  const { host, port } = parseAddr(addr);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** A JSON document served at a path, made afresh for each request. */
export type DebugRoutes = Record<string, () => Promise<unknown>>;

/** `/healthz` (alive) and `/readyz` (ready once `ready()` says so); `debug`: more paths, JSON. */
export async function serveHealth(addr: string, ready: () => boolean, debug: DebugRoutes = {}): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    const route = debug[req.url ?? ''];
    if (route) {
      route()
        .then((doc) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc)))
        .catch((err: unknown) => res.writeHead(500).end(String(err)));
      return;
    }
    const ok = req.url === '/healthz' || (req.url === '/readyz' && ready());
    const known = req.url === '/healthz' || req.url === '/readyz';
    res.writeHead(known ? (ok ? 200 : 503) : 404, { 'content-type': 'text/plain' });
    res.end(known ? (ok ? 'ok' : 'not ready: caches are not primed yet') : 'not found');
  });
  return { server, port: await listen(server, addr) };
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
  return { server, port: await listen(server, addr) };
}

export function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
