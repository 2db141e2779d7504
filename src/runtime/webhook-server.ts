import http from 'node:http';
import { parseAddr } from './http-endpoints.js';
import type { AddressInfo } from 'node:net';

/**
 * `syncprims run --webhook-addr` (docs/source.md, "Webhooks"): `POST
 * /hooks/<token>` with a push event's body. `push(token, body)` says how many
 * syncs the token and the event woke; none is a 404 and nothing else, so a
 * caller that does not know a token learns nothing (not even that the path
 * exists). The body is read up to MAX_BODY_BYTES.
 */

export type PushHandler = (token: string, body: string) => Promise<number>;

const MAX_BODY_BYTES = 1024 * 1024;
/** A token in the path: what a Secret may hold, within reason. */
const TOKEN = /^\/hooks\/([A-Za-z0-9._~-]{1,256})$/;

export interface WebhookServer {
  server: http.Server;
  port: number;
}

export async function serveWebhook(addr: string, push: PushHandler, onError: (err: unknown) => void): Promise<WebhookServer> {
  const server = http.createServer((req, res) => {
    const token = TOKEN.exec((req.url ?? '').split('?')[0] ?? '')?.[1];
    if (req.method !== 'POST' || token === undefined) return notFound(res);
    readBody(req)
      .then((body) => (body === undefined ? 0 : push(token, body)))
      .then((woken) => {
        if (woken === 0) return notFound(res);
        res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ woken }));
      })
      .catch((err: unknown) => {
        onError(err);
        res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
      });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const { host, port } = parseAddr(addr);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}

function notFound(res: http.ServerResponse): void {
  res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
}

/** The body as text; undefined (the caller answers 404) past MAX_BODY_BYTES. */
function readBody(req: http.IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_BODY_BYTES) {
        req.destroy();
        return resolve(undefined);
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
