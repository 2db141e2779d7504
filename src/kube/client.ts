import type { IncomingHttpHeaders } from 'node:http';
import type https from 'node:https';
import type { Readable } from 'node:stream';
import { loadKubeConfigFile } from './config.js';
import { isPlainPath } from './paths.js';
import { ApiError, apiErrorFrom, NotKubernetesError, ResponseLimitError, TransportError, type ResponseLimit } from './errors.js';
import type { KubeConfig } from './kubeconfig.js';
import { describeImpersonation, impersonationOf } from './kubeconfig-impersonation.js';
import { TokenBucket } from './token-bucket.js';
import type { SharedTransports, TransportHold } from './shared-transports.js';
import { createTransport } from './transport-alpn.js';
import { answerKind, boundedEvents, type AnswerKind, bytesText, DEFAULT_BODY_IDLE_MS, DEFAULT_MAX_BYTES, DEFAULT_MAX_EVENT_BYTES, readBounded } from './response-limits.js';
import { SaturationAlarm, tlsText, type ConnectionStats, type Reply, type TlsOptions, type TransportOptions } from './transport.js';

export type { ConnectionStats, Protocol, TransportOptions } from './transport.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  method?: Method;
  /** Absolute API path, e.g. `/api/v1/namespaces/default/configmaps`. */
  path: string;
  query?: Query;
  /** Sent as JSON (YAML is a superset, so apply patches are JSON too). */
  body?: unknown;
  contentType?: string;
  /**
   * The Accept header; default `application/json` (e.g. `...;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`).
   * Asked for JSON, an answer that is not (valid) JSON is a NotKubernetesError; asked for text, it is returned as a string.
   */
  accept?: string;
  /** Whole-request deadline, headers and body; default 30 s (the client's `timeoutMs`). */
  timeoutMs?: number;
  /** While the body streams, nothing for this long fails the request (default 10 s, or `timeoutMs` if shorter). */
  idleTimeoutMs?: number;
  /**
   * The answer's byte limit; default fitted to what is asked (response-limits.ts): a
   * discovery document, a page of a list (a GET of a collection), or one object.
   * On a stream (a watch): the limit of one event (a line), default 16 MiB.
   */
  maxBytes?: number;
  signal?: AbortSignal;
  /** Told the status of the response that is returned (e.g. 201 Created against 200 OK). */
  onStatus?: (status: number) => void;
}

export interface StreamOptions extends RequestOptions {
  /** The stream is destroyed when nothing arrives for this long. */
  idleTimeoutMs: number;
  /** An event (a line) begun must end within this (default: the client's request deadline). */
  eventDeadlineMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** The options of a client: its transport's, and where it gets its connections. */
export interface ClientOptions extends TransportOptions {
  /** Share connections with the other clients of this pool that have the same server and TLS settings. */
  shared?: SharedTransports;
  /** The deadline of a request that names none (default 30 s). */
  timeoutMs?: number;
  /** Writes are sent only while this says yes (Lease writes always, unless `fenceLeases`): see KubeClient.fenceWrites. */
  writeFence?: () => boolean;
  /** Lease writes are fenced too (a remote cluster's: our own Leases are never there, a sync's may be). */
  fenceLeases?: boolean;
}
/** Lease writes pass the write fence: they are how leadership is kept (and given up). */
const LEASES = /^\/apis\/coordination\.k8s\.io\/[^/]+\/namespaces\/[^/]+\/leases(\/|$)/;

/** A write refused by the client's write fence: this process does not lead (now). */
export class NotLeadingError extends Error {
  constructor(what: string) {
    super(`${what}: not sent: this process does not lead now, or does not hold the shard of this work now (its Lease was not renewed within the renew deadline, or passed to another replica)`);
    this.name = 'NotLeadingError';
  }
}

/** How many times a GET answered 429 with Retry-After is sent in all. */
const READ_RETRIES_ON_429 = 5;

/** What the apply engine and discovery need of a client: a name and requests. */
export interface Requester {
  readonly name: string;
  request<T = unknown>(opts: RequestOptions): Promise<T>;
}

/** GETs `path`; undefined when it does not exist (404), any other failure thrown. */
export async function getIfExists<T>(client: Requester, path: string): Promise<T | undefined> {
  try {
    return await client.request<T>({ path });
  } catch (err) {
    if (err instanceof ApiError && err.notFound) return undefined;
    throw err;
  }
}

/** What an observer learns of each request: for metrics, and for tests that assert what was sent. */
export interface RequestRecord {
  method: Method;
  url: URL;
  /** The response's status; undefined when no response came. */
  status?: number;
  /** No response came because the caller gave up (its signal aborted), which says nothing of the server. */
  aborted?: boolean;
  /**
   * Why no response came (the transport's error, without the request), e.g. `connect ECONNREFUSED 127.0.0.1:6443`;
   * or, with a status, why its body could not be read (a deadline or a limit passed: ResponseLimitError).
   */
  error?: string;
}

export type RequestObserver = (record: RequestRecord) => void;

/**
 * A client for one cluster. It sends raw JSON (client-node's generated models
 * drop fields they do not know, see DESIGN.md) and puts a deadline on every
 * call. Its connections (see transport-alpn.ts and docs/adr/0003-transport.md):
 * HTTP/2 when the server agrees to it, requests and watches as streams over a
 * few connections; HTTP/1.1 otherwise, with separate socket pools for requests
 * and for watches. Either way a request never waits behind open watches.
 */
export class KubeClient implements Requester {
  readonly server: URL;
  /** The connections; taken when the first request needs them, given back on close(). */
  private hold: TransportHold | undefined;
  private readonly limiter: TokenBucket | undefined;
  private readonly observers = new Set<RequestObserver>();
  private readonly saturation = new SaturationAlarm();

  private constructor(
    /** The name this client is known by in logs and metrics. */
    readonly name: string,
    private currentKubeConfig: KubeConfig,
    private tls: TlsOptions,
    private readonly userAgent: string,
    private readonly options: ClientOptions,
  ) {
    const cluster = currentKubeConfig.getCurrentCluster();
    if (!cluster) throw new Error(`kubeconfig for ${name} has no current cluster`);
    this.server = new URL(cluster.server);
    this.limiter = options.rateLimit ? new TokenBucket(options.rateLimit.qps, options.rateLimit.burst) : undefined;
  }

  /**
   * `userAgent` tells the server (and its audit log) who sends; default
   * `syncprims/<name>`. `options` tune the connections (defaults suit the operator).
   */
  static async create(
    name: string,
    kubeConfig: KubeConfig,
    userAgent = `syncprims/${name}`,
    options: ClientOptions = {},
  ): Promise<KubeClient> {
    return new KubeClient(name, kubeConfig, await tlsOf(kubeConfig), userAgent, options);
  }

  /**
   * From now on, a write (any method but GET; Lease writes excepted, they are
   * how leadership is kept) is refused before it is sent unless `allowed()`
   * says yes: a leader paused past its renew deadline (SIGSTOP, a frozen VM)
   * writes nothing once it wakes, though its work goes on until its timers
   * run. Clients opened for remote clusters take the same fence
   * (`writeFence`).
   */
  fenceWrites(allowed: () => boolean): void {
    this.options.writeFence = allowed;
  }

  /** The fence set by fenceWrites (or the options), for the clients of remote clusters. */
  get writeFence(): (() => boolean) | undefined {
    return this.options.writeFence;
  }

  get kubeConfig(): KubeConfig {
    return this.currentKubeConfig;
  }

  /**
   * Swaps the credentials of the same server (the cluster registry checks
   * that server and CA are unchanged): requests from now on carry the new
   * token. A new client certificate is bound when a connection is made, so
   * then the connections are replaced: open watches end and resume (from
   * their resourceVersion) over new ones.
   */
  async useKubeConfig(kubeConfig: KubeConfig): Promise<void> {
    const tls = await tlsOf(kubeConfig);
    this.currentKubeConfig = kubeConfig;
    if (tlsText(tls) === tlsText(this.tls)) return;
    this.tls = tls;
    this.close();
  }

  /** Whether this client shares its connections with others (then its connection figures are theirs too). */
  get sharesConnections(): boolean {
    return this.options.shared !== undefined;
  }

  static async fromFile(name: string, file: string, options: ClientOptions = {}): Promise<KubeClient> {
    return KubeClient.create(name, loadKubeConfigFile(file), undefined, options);
  }

  /** Sends a request and parses a JSON answer (text otherwise); throws ApiError or TransportError. */
  async request<T = unknown>(opts: RequestOptions, extraHeaders: Record<string, string | string[]> = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.requestOnce<T>(opts, extraHeaders);
      } catch (err) {
        // Reads are safe to repeat: wait as a 429 says (a few times), as client-go does.
        // Writes go back to the caller, whose queue honours Retry-After.
        const retryable = err instanceof ApiError && err.tooManyRequests && err.retryAfterSeconds !== undefined;
        if (!retryable || (opts.method ?? 'GET') !== 'GET' || attempt >= READ_RETRIES_ON_429) throw err;
        await new Promise((r) => setTimeout(r, Math.min(err.retryAfterSeconds ?? 1, 10) * 1000 * (1 + Math.random() * 0.2)));
      }
    }
  }

  private async requestOnce<T>(opts: RequestOptions, extraHeaders: Record<string, string | string[]>): Promise<T> {
    const { reply, record, finish } = await this.send(opts, extraHeaders, false);
    let text: string;
    try {
      const kind = answerKind(record.method, opts.path);
      text = await this.readBody(reply, opts, kind, opts.maxBytes ?? DEFAULT_MAX_BYTES[kind], finish.signal);
      this.notify(record);
    } catch (err) {
      this.notify({ ...record, aborted: opts.signal?.aborted === true, error: (err as Error).message.replace(/^[A-Z]+ \S+: /, '') });
      throw err;
    } finally {
      finish.done();
    }
    if (reply.status >= 300) {
      throw apiErrorFrom(reply.status, header(reply.headers, 'retry-after'), text, describe(opts), this.name);
    }
    opts.onStatus?.(reply.status);
    if (!text) return undefined as T;
    const type = header(reply.headers, 'content-type') ?? '';
    // A request that asked for text (`/metrics`, `/readyz`) gets it.
    if (!(opts.accept ?? 'application/json').includes('json')) return text as T;
    // One that asked for JSON and got something else did not reach the API server.
    const notKubernetes = (what: string): NotKubernetesError => new NotKubernetesError(describe(opts), this.server.origin, `HTTP ${reply.status} with ${what}`);
    if (!type.includes('json')) throw notKubernetes(`${type.split(';')[0] || 'no content type'}, not JSON`);
    try {
      return JSON.parse(text) as T;
    } catch {
      // Not V8's message: it quotes the text.
      throw notKubernetes(`${text.length} bytes that are not valid JSON`);
    }
  }

  /**
   * Opens a streaming response (a watch). The caller reads it and destroys it;
   * the stream is destroyed with a TransportError when nothing arrives on it
   * for `idleTimeoutMs` (on HTTP/2 per stream, not per connection).
   */
  async stream(opts: StreamOptions, extraHeaders: Record<string, string | string[]> = {}): Promise<Readable> {
    const { reply, record } = await this.send(opts, extraHeaders, true);
    this.notify(record);
    if (reply.status >= 300) {
      // The refusal (a Status) is one object, read within the request's deadline.
      const text = await this.readBody(reply, opts, 'object', DEFAULT_MAX_BYTES.object, AbortSignal.timeout(this.timeoutOf(opts)));
      throw apiErrorFrom(reply.status, header(reply.headers, 'retry-after'), text, describe(opts), this.name);
    }
    reply.idleTimeout(opts.idleTimeoutMs, () => new TransportError(`${describe(opts)}: no data for ${opts.idleTimeoutMs} ms`));
    const maxBytes = opts.maxBytes ?? DEFAULT_MAX_EVENT_BYTES;
    const deadlineMs = opts.eventDeadlineMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return boundedEvents(reply.body, {
      maxBytes,
      deadlineMs,
      tooLarge: () => this.limitError(opts, 'bytes', `one watch event of more than ${bytesText(maxBytes)}, the limit of an event`),
      tooSlow: () => this.limitError(opts, 'deadline', `one watch event not complete within ${deadlineMs} ms of its first byte`),
    });
  }

  /**
   * The same cluster and connection pool, acting as another user: every
   * request carries `Impersonate-User` (and `Impersonate-Group`) headers.
   * Throws when the kubeconfig impersonates already (`as:`).
   */
  impersonate(user: string, groups: string[] = []): Requester {
    // One impersonated identity per request: the kubeconfig's (as:) would be replaced, or mixed with this one (its groups).
    const own = impersonationOf(this.currentKubeConfig.getCurrentUser());
    if (own) throw new Error(`${this.name}: its kubeconfig impersonates ${describeImpersonation(own)} (as:): it cannot act as ${user} too (one impersonated identity per request)`);
    const headers: Record<string, string | string[]> = { 'impersonate-user': user };
    if (groups.length > 0) headers['impersonate-group'] = groups;
    return {
      name: `${this.name} as ${user}`,
      request: <T>(opts: RequestOptions) => this.request<T>(opts, headers),
    };
  }

  /**
   * Acting as a service account. No Impersonate-Group: for a service account
   * the API server adds its groups itself (system:serviceaccounts,
   * system:serviceaccounts:<namespace>, system:authenticated), so the caller
   * needs only `impersonate` on `serviceaccounts`.
   */
  asServiceAccount(namespace: string, name: string): Requester {
    return this.impersonate(`system:serviceaccount:${namespace}:${name}`);
  }

  /** Calls `fn` after each request with its method, URL and status; returns the way to stop. */
  observe(fn: RequestObserver): () => void {
    this.observers.add(fn);
    return () => this.observers.delete(fn);
  }

  /**
   * The connections to the API server now, for metrics (a gauge per cluster
   * and protocol) and logs: `protocol` is undefined until the first
   * connection to an https server has negotiated one; `connections` counts
   * open TCP connections (HTTP/2 sessions, or HTTP/1.1 sockets busy and idle);
   * `streams` the requests and watches in flight; `queued` the requests
   * waiting for a connection or a stream.
   */
  connectionStats(): ConnectionStats {
    return this.hold?.transport.stats() ?? { protocol: undefined, connections: 0, streams: 0, queued: 0 };
  }

  /**
   * Calls `fn` when requests have to wait for a connection (the HTTP/1.1
   * request pool is at its limit, or every HTTP/2 session is full and no
   * other may be opened), with the figures of that moment; at most once per
   * 30 s for this client. Returns the way to stop.
   */
  onSaturated(fn: (detail: ConnectionStats) => void): () => void {
    return this.saturation.on(fn);
  }

  /** Milliseconds requests have waited for the client-side rate limit (`rateLimit`), in all. */
  get throttledMilliseconds(): number {
    return this.limiter?.throttledMilliseconds ?? 0;
  }

  /** Closes every connection of this client (gives back its share of shared ones); a later request opens new ones. */
  close(): void {
    const hold = this.hold;
    this.hold = undefined;
    hold?.release();
  }

  private transport(): TransportHold['transport'] {
    if (!this.hold) {
      const saturated = (): void => this.saturation.raise(() => this.connectionStats());
      if (this.options.shared) {
        this.hold = this.options.shared.acquire(this.server, this.tls, this.options, saturated);
      } else {
        const transport = createTransport(this.server, this.tls, this.options, saturated);
        this.hold = { transport, release: () => transport.close() };
      }
    }
    return this.hold.transport;
  }

  /**
   * Sends the request and resolves with its response once the headers are in.
   * A long one (a watch) is then on its own; for the others, the deadline
   * (`timeoutMs`) runs on over the body: `finish.signal` aborts when it passes
   * (or the caller's signal does), and `finish.done()` stops it.
   */
  private async send(opts: RequestOptions, extraHeaders: Record<string, string | string[]>, long: boolean): Promise<Sent> {
    const url = urlOf(this.server, opts);
    const method = opts.method ?? 'GET';
    const body = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const headers = await this.headers(opts, extraHeaders, body);
    const timeoutMs = this.timeoutOf(opts);
    const cancel = new AbortController();
    let answered = false;
    const timer = setTimeout(() => {
      cancel.abort(
        answered
          ? this.limitError(opts, 'deadline', `an answer not complete within ${timeoutMs} ms, the request's deadline`)
          : new TransportError(`${describe(opts)}: no answer within ${timeoutMs} ms`),
      );
    }, timeoutMs);
    const onAbort = (): void => cancel.abort(new TransportError(`${describe(opts)}: aborted`));
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    const done = (): void => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    };
    try {
      await this.limiter?.take(cancel.signal);
      // Checked as late as can be: after the waits for credentials and the rate limit.
      this.checkWriteFence(method, opts);
      const reply = await this.transport().send({ method, url, headers, body, long, signal: cancel.signal });
      answered = true;
      if (long) done();
      return { reply, record: { method, url, status: reply.status }, finish: { signal: cancel.signal, done } };
    } catch (err) {
      done();
      if (err instanceof NotLeadingError) throw err;
      const error = ((err as Error).message ?? String(err)).replace(/^[A-Z]+ \S+: /, '');
      this.notify({ method, url, status: undefined, aborted: opts.signal?.aborted === true, error });
      throw err instanceof TransportError ? err : new TransportError(`${describe(opts)}: ${(err as Error).message}`, err);
    }
  }

  /**
   * The whole body as text, within `maxBytes` and, while it streams, the idle
   * deadline; `signal` (the request's deadline) destroys it when it aborts.
   * Past either, the body is destroyed (its connection or stream with it).
   */
  private async readBody(reply: Reply, opts: RequestOptions, what: AnswerKind, maxBytes: number, signal: AbortSignal): Promise<string> {
    const tooLarge = (): ResponseLimitError => this.limitError(opts, 'bytes', `more than ${bytesText(maxBytes)}, the limit of ${article(what)} ${what}`);
    const declared = Number(header(reply.headers, 'content-length'));
    if (declared > maxBytes) {
      const err = tooLarge();
      reply.body.destroy(err);
      throw err;
    }
    const idleMs = Math.min(opts.idleTimeoutMs ?? DEFAULT_BODY_IDLE_MS, this.timeoutOf(opts));
    reply.idleTimeout(idleMs, () => this.limitError(opts, 'idle', `nothing of the answer for ${idleMs} ms while it streamed`));
    const onAbort = (): void => {
      const reason = signal.reason as Error;
      // AbortSignal.timeout's own reason is a DOMException: said as the deadline it is.
      reply.body.destroy(reason instanceof TransportError ? reason : this.limitError(opts, 'deadline', `an answer not complete within ${this.timeoutOf(opts)} ms, the request's deadline`));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    try {
      return (await readBounded(reply.body, maxBytes, tooLarge)).toString('utf8');
    } catch (err) {
      // The body's own error may be a plain one (a reset); a bound passed is said as itself.
      throw err instanceof TransportError ? err : new TransportError(`${describe(opts)}: ${(err as Error).message}`, err);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  private timeoutOf(opts: RequestOptions): number {
    return opts.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  private limitError(opts: RequestOptions, limit: ResponseLimit, what: string): ResponseLimitError {
    return new ResponseLimitError(describe(opts), `${this.name} (${this.server.origin})`, limit, what);
  }

  private checkWriteFence(method: Method, opts: RequestOptions): void {
    const fence = this.options.writeFence;
    if (fence && method !== 'GET' && (this.options.fenceLeases || !LEASES.test(opts.path)) && !fence()) throw new NotLeadingError(describe(opts));
  }

  /** Lower-case request headers; the kubeconfig's credentials are refreshed (tokens) for each request. */
  private async headers(
    opts: RequestOptions,
    extraHeaders: Record<string, string | string[]>,
    body: Buffer | undefined,
  ): Promise<Record<string, string | string[] | number>> {
    const auth: https.RequestOptions = { headers: {} };
    await this.currentKubeConfig.applyHeaders(auth);
    const headers: Record<string, string | string[] | number> = {
      accept: opts.accept ?? 'application/json',
      'user-agent': this.userAgent,
    };
    const given = { ...(auth.headers as Record<string, string | string[] | number>), ...extraHeaders };
    for (const [k, v] of Object.entries(given)) headers[k.toLowerCase()] = v;
    if (body) {
      headers['content-type'] = opts.contentType ?? 'application/json';
      headers['content-length'] = body.length;
    }
    return headers;
  }

  private notify(record: RequestRecord): void {
    for (const fn of this.observers) fn(record);
  }
}

/** The TLS options of a kubeconfig's current cluster and user (CA, client certificate, server name). */
async function tlsOf(kubeConfig: KubeConfig): Promise<TlsOptions> {
  const opts: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(opts);
  const tls: TlsOptions = { ca: opts.ca, cert: opts.cert, key: opts.key };
  if (opts.rejectUnauthorized !== undefined) tls.rejectUnauthorized = opts.rejectUnauthorized;
  if (opts.servername) tls.servername = opts.servername;
  return tls;
}

function urlOf(server: URL, opts: RequestOptions): URL {
  // Built by apiPath (paths.ts), a path is plain; one that is not would be folded by the URL parser into another.
  if (!isPlainPath(opts.path)) throw new Error(`${describe(opts)}: not sent: the path has an empty, '.' or '..' segment`);
  const url = new URL(opts.path, server);
  for (const [k, v] of Object.entries(opts.query ?? {})) {
    if (v !== undefined) url.searchParams.set(k, String(v));
  }
  return url;
}

function describe(opts: RequestOptions): string {
  return `${opts.method ?? 'GET'} ${opts.path}`;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? 'an' : 'a';
}

/** A request sent, its response's headers in. */
interface Sent {
  reply: Reply;
  record: RequestRecord;
  /** The request's deadline over its body: `signal` aborts when it passes; `done()` when the body is read. */
  finish: { signal: AbortSignal; done: () => void };
}
