import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { outboundAddressPolicy } from '../kube/address-policy.js';
import type { BudgetLease } from './budget.js';
import { messageOf, SourceError } from './errors.js';
import { formatBytes, SOURCE_LIMIT_FLAGS } from './limits.js';

/** One GET of a source URL: a deadline on the whole exchange, a size limit while streaming. */
export interface HttpGetOptions {
  url: string;
  /** Sent with the request; dropped when a redirect leaves the URL's origin. */
  headers?: Record<string, string>;
  /** PEM bundle trusted in addition to the system's CAs. */
  ca?: string;
  timeoutMs: number;
  maxBytes: number;
  /** What `maxBytes` is, for the refusal: the fetch limit and its flag unless given (`the index limit`). */
  maxBytesName?: string;
  signal?: AbortSignal;
  /** Charged with the body's bytes as they arrive (the process-wide memory budget); unbounded when omitted. */
  lease?: BudgetLease;
}

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The URL without credentials or query, for messages and status (a query may carry a signature). */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}${u.search ? '?...' : ''}`;
  } catch {
    return url.slice(0, 200);
  }
}

/** GETs `url` (following a few redirects) and returns the body; every failure is a SourceError. */
export async function httpGet(opts: HttpGetOptions): Promise<Buffer> {
  const label = displayUrl(opts.url);
  const deadline = new AbortController();
  const timer = setTimeout(() => {
    deadline.abort(new SourceError(`GET ${label}: no complete answer within ${opts.timeoutMs} ms (the fetch timeout, ${SOURCE_LIMIT_FLAGS.fetchTimeoutMs})`));
  }, opts.timeoutMs);
  const onAbort = (): void => deadline.abort(new SourceError(`GET ${label}: cancelled`));
  if (opts.signal?.aborted) onAbort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await follow(opts, deadline.signal);
  } catch (err) {
    if (deadline.signal.aborted) throw deadline.signal.reason;
    if (err instanceof SourceError) throw err;
    throw new SourceError(`GET ${label}: ${messageOf(err)}`, { cause: err });
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

async function follow(opts: HttpGetOptions, signal: AbortSignal): Promise<Buffer> {
  const first = new URL(opts.url);
  let url = first;
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new SourceError(`GET ${displayUrl(opts.url)}: only http and https URLs are supported (got ${url.protocol})`);
    }
    const headers = url.origin === first.origin ? opts.headers : undefined;
    const res = await send(url, { ...opts, headers }, signal).catch((err: unknown) => {
      throw hop === 0 ? err : new SourceError(`GET ${displayUrl(opts.url)}: redirected to ${displayUrl(url.href)}: ${messageOf(err)}`, { cause: err });
    });
    const status = res.statusCode ?? 0;
    if (REDIRECTS.has(status) && res.headers.location) {
      res.resume();
      if (hop >= MAX_REDIRECTS) throw new SourceError(`GET ${displayUrl(opts.url)}: more than ${MAX_REDIRECTS} redirects`);
      url = new URL(res.headers.location, url);
      continue;
    }
    if (status < 200 || status >= 300) throw await statusError(res, url);
    return readLimited(res, opts, displayUrl(url.href), signal);
  }
}

/**
 * One request, to an address the process's policy (--source-deny-cidrs)
 * allows: an IP literal is checked here, a name resolved once by the
 * socket's lookup, which hands it only allowed addresses.
 */
async function send(url: URL, opts: HttpGetOptions, signal: AbortSignal): Promise<http.IncomingMessage> {
  const policy = outboundAddressPolicy();
  policy.checkHost(url.hostname);
  const headers: http.OutgoingHttpHeaders = {
    'user-agent': 'syncprims',
    accept: '*/*',
    // The digest is of the bytes as served: no transfer compression.
    'accept-encoding': 'identity',
    ...opts.headers,
  };
  const options: https.RequestOptions = { method: 'GET', headers, signal, agent: false, lookup: policy.lookup };
  if (url.protocol === 'https:' && opts.ca) options.ca = [...tls.rootCertificates, opts.ca];
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(url, options);
    req.on('response', resolve);
    req.on('error', reject);
    req.end();
  });
}

async function statusError(res: http.IncomingMessage, url: URL): Promise<SourceError> {
  let text = '';
  for await (const chunk of res) {
    text += (chunk as Buffer).toString('utf8');
    if (text.length > 300) break;
  }
  res.destroy();
  const body = text.trim().replace(/\s+/g, ' ').slice(0, 200);
  const hint = res.statusCode === 401 || res.statusCode === 403 ? ' (check headersSecretRef)' : '';
  return new SourceError(
    `GET ${displayUrl(url.href)}: HTTP ${res.statusCode} ${res.statusMessage ?? ''}${hint}${body ? `: ${body}` : ''}`,
  );
}

/** The body, refused as soon as it passes `maxBytes` (or announces more); each chunk taken from the lease before it is kept. */
async function readLimited(
  res: http.IncomingMessage,
  opts: Pick<HttpGetOptions, 'maxBytes' | 'maxBytesName' | 'lease'>,
  label: string,
  signal: AbortSignal,
): Promise<Buffer> {
  const { maxBytes: max, lease } = opts;
  const limit = opts.maxBytesName ?? `the source limit on fetched bytes, ${SOURCE_LIMIT_FLAGS.maxFetchedBytes}`;
  const tooBig = (): SourceError => new SourceError(`GET ${label}: more than ${formatBytes(max)} (${limit})`);
  const announced = Number(res.headers['content-length']);
  if (Number.isFinite(announced) && announced > max) {
    res.destroy();
    throw tooBig();
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res) {
    total += (chunk as Buffer).length;
    if (total > max) {
      res.destroy();
      throw tooBig();
    }
    // While this waits for room, the socket is not read: the sender is held back too.
    await lease?.take((chunk as Buffer).length, signal).catch((err: unknown) => {
      res.destroy();
      throw err;
    });
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

const ALGORITHMS: Record<string, string> = { sha256: 'sha256', sha384: 'sha384', sha512: 'sha512' };

/** `algo:hex` of `data` with the algorithm of `like` (sha256 unless given). */
export function digestOf(data: Buffer, algorithm = 'sha256'): string {
  const algo = ALGORITHMS[algorithm];
  if (!algo) throw new SourceError(`digest algorithm ${algorithm} is not supported (use sha256, sha384 or sha512)`);
  return `${algorithm}:${createHash(algo).update(data).digest('hex')}`;
}

/** Throws a SourceError naming both digests when `data` does not have `expected`. */
export function verifyDigest(data: Buffer, expected: string, label: string): string {
  const [algorithm = '', hex] = expected.split(':', 2);
  if (!hex) throw new SourceError(`${label}: digest ${JSON.stringify(expected)} is not <algorithm>:<hex>`);
  const actual = digestOf(data, algorithm.toLowerCase());
  if (actual !== `${algorithm.toLowerCase()}:${hex.toLowerCase()}`) {
    throw new SourceError(
      `${label}: digest mismatch: expected ${expected}, got ${actual} (the content changed, or the digest is wrong)`,
    );
  }
  return actual;
}
