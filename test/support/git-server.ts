// A Git smart-HTTP server on loopback for tests (issue 48): bare repositories
// under a temporary root (made by git-repos.ts), served by Debian's
// git-http-backend run as a CGI per request, as a forge serves them. Optional
// basic or bearer authentication, optional HTTPS (a self-signed certificate,
// tls-server.ts), redirect rules (a path that answers 302 elsewhere), and a
// record of every request by repository and kind, to count what a client did:
//
// - `refs`: GET <repo>/info/refs?service=git-upload-pack (the ref advertisement:
//   one ref resolution for protocol v0/v1 clients such as go-git);
// - `ls-refs`: a protocol v2 POST git-upload-pack whose command is ls-refs (the
//   git CLI's ref listing; it sends a `refs` GET first, for the capabilities);
// - `fetch`: POST git-upload-pack answered with a pack (v0/v1, or v2 command=fetch):
//   one per fetch of objects, whatever the protocol;
// - `negotiate`: POST git-upload-pack answered without a pack (a v0/v1 shallow
//   fetch's first round, which only learns the shallow boundary, or a round of haves);
// - `push`: anything of git-receive-pack (refused: the backend has no user to allow);
// - `redirect`: answered by a redirect rule; `unauthorized`: answered 401;
// - `other`: the rest (dumb HTTP paths, HEAD, objects/...).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { inflateSync, gunzipSync, constants as zlib } from 'node:zlib';
import { selfSignedCertificate } from './tls-server.js';

export const GIT_HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';

export type GitRequestKind = 'refs' | 'ls-refs' | 'fetch' | 'negotiate' | 'push' | 'redirect' | 'unauthorized' | 'other';

/** One request the server answered. */
export interface GitRequest {
  /** The repository's name as in `repoUrl(name)` (without `.git`); '' when the path names none. */
  repo: string;
  kind: GitRequestKind;
  method: string;
  /** The path and query as requested. */
  url: string;
  status: number;
  /** The Authorization header sent, if any. */
  authorization?: string;
  /** The Git-Protocol header sent (`version=2` from the git CLI), if any. */
  gitProtocol?: string;
}

export type GitAuth = { username: string; password: string } | { bearerToken: string };

export interface GitServerOptions {
  /** Required on every request (401 otherwise, with `WWW-Authenticate: Basic` or `Bearer`). */
  auth?: GitAuth;
  /** Serve HTTPS with a self-signed certificate for 127.0.0.1 (its PEM is `caPem`). */
  tls?: boolean;
  /** Where bare repositories live (default: a new temporary directory, removed by `close`). */
  root?: string;
}

export interface GitServer {
  /** `http://127.0.0.1:<port>` (https with `tls`). */
  url: string;
  /** The directory of the bare repositories: `<root>/<name>.git` (createBareRepo(server.root, name)). */
  root: string;
  /** With `tls`: the certificate to trust (GIT_SSL_CAINFO, the source's caSecretRef). */
  caPem?: string;
  /** `<url>/<name>.git` */
  repoUrl(name: string): string;
  /** Every request answered since the start or the last `reset`, in order. */
  requests: GitRequest[];
  /** Requests of `repo` (any repo: undefined) of `kind` (any kind: undefined). */
  count(repo?: string, kind?: GitRequestKind): number;
  /** Requests of `repo`, by kind (every kind present, 0 when none). */
  counts(repo: string): Record<GitRequestKind, number>;
  /** Forgets the requests so far. */
  reset(): void;
  /** Changes (or drops) the authentication required from now on. */
  setAuth(auth: GitAuth | undefined): void;
  /**
   * Requests whose path starts with `fromPath` answer `status` (302) to `toUrl`
   * followed by the rest of the path and the query (`/moved.git` ->
   * `http://127.0.0.2:9/x.git`: `/moved.git/info/refs?service=...` goes to
   * `http://127.0.0.2:9/x.git/info/refs?service=...`). Checked before authentication.
   */
  redirect(fromPath: string, toUrl: string, status?: number): void;
  close(): Promise<void>;
}

const KINDS: GitRequestKind[] = ['refs', 'ls-refs', 'fetch', 'negotiate', 'push', 'redirect', 'unauthorized', 'other'];
/** A pack's signature and version 2, as upload-pack sends it (raw or in side-band channel 1). */
const PACK_SIGNATURE = Buffer.from('PACK\0\0\0\x02', 'latin1');
/** How much of a request body is kept to tell ls-refs from fetch (the command comes first). */
const PEEK_BYTES = 64 * 1024;

/** Starts the server on 127.0.0.1 (a free port). */
export async function startGitServer(opts: GitServerOptions = {}): Promise<GitServer> {
  const ownRoot = opts.root === undefined;
  const root = opts.root ?? mkdtempSync(path.join(os.tmpdir(), 'syncprims-git-'));
  const state: ServerState = { root, auth: opts.auth, redirects: [], requests: [] };
  const handler = (req: IncomingMessage, res: ServerResponse): void => handle(state, req, res);
  const cert = opts.tls ? selfSignedCertificate() : undefined;
  const server = cert ? https.createServer({ key: cert.key, cert: cert.caPem }, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `${cert ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ofRepo = (repo?: string, kind?: GitRequestKind): GitRequest[] =>
    state.requests.filter((r) => (repo === undefined || r.repo === repo) && (kind === undefined || r.kind === kind));
  return {
    url,
    root,
    ...(cert ? { caPem: cert.caPem } : {}),
    repoUrl: (name) => `${url}/${name}.git`,
    get requests() {
      return state.requests;
    },
    count: (repo, kind) => ofRepo(repo, kind).length,
    counts: (repo) => Object.fromEntries(KINDS.map((k) => [k, ofRepo(repo, k).length])) as Record<GitRequestKind, number>,
    reset: () => void (state.requests = []),
    setAuth: (auth) => void (state.auth = auth),
    redirect: (fromPath, toUrl, status = 302) => void state.redirects.push({ fromPath, toUrl, status }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      if (ownRoot) rmSync(root, { recursive: true, force: true });
    },
  };
}

interface ServerState {
  root: string;
  auth: GitAuth | undefined;
  redirects: { fromPath: string; toUrl: string; status: number }[];
  requests: GitRequest[];
}

function handle(state: ServerState, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const record = (kind: GitRequestKind, status: number): void => {
    state.requests.push({
      repo: repoOf(url.pathname),
      kind,
      method: req.method ?? '',
      url: req.url ?? '/',
      status,
      ...(req.headers.authorization !== undefined ? { authorization: req.headers.authorization } : {}),
      ...(typeof req.headers['git-protocol'] === 'string' ? { gitProtocol: req.headers['git-protocol'] } : {}),
    });
  };
  const rule = state.redirects.find((r) => url.pathname.startsWith(r.fromPath));
  if (rule) {
    record('redirect', rule.status);
    res.writeHead(rule.status, { location: `${rule.toUrl}${url.pathname.slice(rule.fromPath.length)}${url.search}` }).end();
    return void req.resume();
  }
  const user = authorized(state.auth, req.headers.authorization);
  if (user === false) {
    record('unauthorized', 401);
    const challenge = state.auth && 'bearerToken' in state.auth ? 'Bearer realm="git"' : 'Basic realm="git"';
    res.writeHead(401, { 'www-authenticate': challenge, 'content-type': 'text/plain' }).end('unauthorized\n');
    return void req.resume();
  }
  runBackend(state.root, req, res, url, user, (peek, status, pack) => record(kindOf(req.method ?? '', url, req.headers['content-encoding'], peek, pack), status));
}

/** The user name (basic), '' (bearer or no authentication required), or false: refused. */
function authorized(auth: GitAuth | undefined, header: string | undefined): string | false {
  if (auth === undefined) return '';
  if ('bearerToken' in auth) return header === `Bearer ${auth.bearerToken}` ? '' : false;
  const expected = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  return header === expected ? auth.username : false;
}

/** `org/app` of `/org/app.git/info/refs`; the path before the smart-HTTP suffix when there is no `.git`. */
export function repoOf(pathname: string): string {
  const dotGit = /^\/(.+?)\.git(\/|$)/.exec(pathname);
  if (dotGit) return dotGit[1] ?? '';
  const bare = /^\/(.+?)\/(info\/refs|git-upload-pack|git-receive-pack|HEAD|objects\/.*)$/.exec(pathname);
  return bare?.[1] ?? '';
}

function kindOf(method: string, url: URL, encoding: string | string[] | undefined, peek: Buffer, pack: boolean): GitRequestKind {
  const p = url.pathname;
  if (p.endsWith('/git-receive-pack') || url.searchParams.get('service') === 'git-receive-pack') return 'push';
  if (method === 'GET' && p.endsWith('/info/refs') && url.searchParams.get('service') === 'git-upload-pack') return 'refs';
  if (method !== 'POST' || !p.endsWith('/git-upload-pack')) return 'other';
  if (/(^|\n|[0-9a-f]{4})command=ls-refs/.test(decoded(peek, encoding))) return 'ls-refs';
  return pack ? 'fetch' : 'negotiate';
}

/** The start of a request body as text, gunzipped/inflated as its Content-Encoding says (partial input allowed). */
function decoded(peek: Buffer, encoding: string | string[] | undefined): string {
  const flush = { finishFlush: zlib.Z_SYNC_FLUSH };
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') return gunzipSync(peek, flush).toString('latin1');
    if (encoding === 'deflate') return inflateSync(peek, flush).toString('latin1');
  } catch {
    return '';
  }
  return peek.toString('latin1');
}

/**
 * Runs git-http-backend for one request: the body streamed to its stdin, its
 * CGI headers (Status: among them) parsed off its stdout, the rest streamed
 * back. `done` gets the first bytes of the body, the status answered, and whether a pack went out.
 */
function runBackend(root: string, req: IncomingMessage, res: ServerResponse, url: URL, user: string, done: (peek: Buffer, status: number, pack: boolean) => void): void {
  const header = (name: string): string | undefined => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  };
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: root,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.slice(1),
    REQUEST_METHOD: req.method ?? 'GET',
    REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
    SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
    GATEWAY_INTERFACE: 'CGI/1.1',
  };
  const optional: Record<string, string | undefined> = {
    CONTENT_TYPE: header('content-type'),
    CONTENT_LENGTH: header('content-length'),
    HTTP_CONTENT_ENCODING: header('content-encoding'),
    HTTP_GIT_PROTOCOL: header('git-protocol'),
    GIT_PROTOCOL: header('git-protocol'),
    REMOTE_USER: user === '' ? undefined : user,
  };
  for (const [k, v] of Object.entries(optional)) if (v !== undefined) env[k] = v;
  const child = spawn(GIT_HTTP_BACKEND, [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const peek: Buffer[] = [];
  let peeked = 0;
  req.on('data', (chunk: Buffer) => {
    if (peeked < PEEK_BYTES) peek.push(chunk.subarray(0, PEEK_BYTES - peeked));
    peeked += chunk.length;
  });
  req.pipe(child.stdin);
  child.stdin.on('error', () => undefined); // a backend that answers before reading all of the body
  const stderr: Buffer[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  let status = 0;
  relayCgi(child.stdout, res, (s) => (status = s));
  const pack = sawPack(child.stdout);
  child.on('error', (err) => {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(`git-http-backend: ${err.message}\n`);
  });
  child.on('close', (code) => {
    if (!res.headersSent) {
      status = 500;
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`git-http-backend exited ${code}: ${Buffer.concat(stderr).toString()}`);
    }
    done(Buffer.concat(peek), status, pack());
  });
  res.on('close', () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
}

/** Parses the CGI headers off `out` (up to the blank line), writes them as the response's, then pipes the rest. */
function relayCgi(out: NodeJS.ReadableStream, res: ServerResponse, onStatus: (status: number) => void): void {
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    const m = /\r?\n\r?\n/.exec(head.toString('latin1'));
    if (!m) return;
    out.removeListener('data', onData);
    out.pause();
    const headers: Record<string, string> = {};
    let status = 200;
    for (const line of head.subarray(0, m.index).toString('latin1').split(/\r?\n/)) {
      const i = line.indexOf(':');
      if (i <= 0) continue;
      const [name, value] = [line.slice(0, i).trim(), line.slice(i + 1).trim()];
      if (name.toLowerCase() === 'status') status = parseInt(value, 10) || 500;
      else headers[name] = value;
    }
    onStatus(status);
    res.writeHead(status, headers);
    res.write(head.subarray(m.index + m[0].length));
    out.pipe(res);
    out.resume();
  };
  out.on('data', onData);
}

/** Watches `out` for a pack's signature (across chunk boundaries): whether one went by, so far. */
function sawPack(out: NodeJS.ReadableStream): () => boolean {
  let seen = false;
  let tail = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    const window = Buffer.concat([tail, chunk]);
    if (window.includes(PACK_SIGNATURE)) {
      seen = true;
      out.removeListener('data', onData);
    }
    tail = window.subarray(Math.max(0, window.length - PACK_SIGNATURE.length + 1));
  };
  out.on('data', onData);
  return () => seen;
}
