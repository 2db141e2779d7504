// Hostile archives and a local HTTP server to serve them, for tests of bad
// input: gzip bombs built from many small gzip members (each 1 MiB of zeros
// in about 1 KiB), tar headers written by hand (so that a file can claim a
// size it never delivers), and routes that never answer or trickle bytes.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

const MiB = 1024 * 1024;

/** One gzip member: 1 MiB of zeros in about 1 KiB (members inflate one after the other). */
export const ZEROS_MEMBER = gzipSync(Buffer.alloc(MiB), { level: 9 });

/** A ustar header for one regular file of `size` bytes (whose content need not follow in full). */
export function ustarHeader(name: string, size: number): Buffer {
  const b = Buffer.alloc(512);
  b.write(name, 0);
  b.write('0000644\0', 100);
  b.write('0000000\0', 108);
  b.write('0000000\0', 116);
  b.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  b.write('00000000000\0', 136);
  b.write('        ', 148);
  b.write('0', 156);
  b.write('ustar\0', 257);
  b.write('00', 263);
  let sum = 0;
  for (const byte of b) sum += byte;
  b.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return b;
}

/** A regular file entry: header and content padded to 512 bytes. */
export function ustarFile(name: string, content: string | Buffer): Buffer {
  const data = Buffer.from(content);
  const pad = Buffer.alloc((512 - (data.length % 512)) % 512);
  return Buffer.concat([ustarHeader(name, data.length), data, pad]);
}

/**
 * A .tar.gz bomb: the `before` files (whole), then `bombName` claiming 5 GiB,
 * of which `inflatedMiB` MiB of zeros follow. About 1 KiB compressed per MiB.
 */
export function gzipBomb(inflatedMiB: number, bombName = 'bomb.yaml', before: { name: string; data: string }[] = []): Buffer {
  const head = Buffer.concat([...before.map((f) => ustarFile(f.name, f.data)), ustarHeader(bombName, 5 * 1024 * MiB)]);
  return Buffer.concat([gzipSync(head), ...Array.from({ length: inflatedMiB }, () => ZEROS_MEMBER)]);
}

/** What a route of the hostile server does. */
export type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** Serves fixed bodies by path, and any routes given. */
export class HostileServer {
  readonly files = new Map<string, Buffer>();
  readonly routes = new Map<string, Route>();
  /** Requests seen, by path, with their headers. */
  readonly seen: { path: string; headers: http.IncomingHttpHeaders }[] = [];
  private server = http.createServer((req, res) => this.handle(req, res));
  base = '';

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The same server by another host name (another origin, for redirects). */
  get otherOrigin(): string {
    return this.base.replace('127.0.0.1', 'localhost');
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    this.seen.push({ path, headers: req.headers });
    const route = this.routes.get(path);
    if (route) return route(req, res);
    const body = this.files.get(path);
    if (!body) return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-length': body.length }).end(body);
  }
}

/** A route that sends headers and then one byte every `everyMs`, for ever (until the client leaves). */
export function trickle(everyMs: number): Route {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/yaml' });
    const timer = setInterval(() => res.write('#'), everyMs);
    res.on('close', () => clearInterval(timer));
  };
}

/** A route that sends `head`, then 1 MiB gzip members of zeros as fast as they are read, until the client leaves. */
export function endlessBomb(head: Buffer): Route {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/gzip' });
    res.write(head);
    const pump = (): void => {
      while (!res.destroyed) {
        if (!res.write(ZEROS_MEMBER)) {
          res.once('drain', pump);
          return;
        }
      }
    };
    pump();
  };
}

/** A route that accepts the request and never answers. */
export const silent: Route = () => undefined;

/** The peak resident set (VmHWM) of a process, in bytes, from /proc. */
export function peakRss(pid: number): number {
  return vmField(pid, 'VmHWM');
}

/** The resident set now (VmRSS) of a process, in bytes. */
export function currentRss(pid: number): number {
  return vmField(pid, 'VmRSS');
}

function vmField(pid: number, field: string): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}
