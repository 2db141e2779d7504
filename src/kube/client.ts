import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfigFile } from './config.js';
import { ApiError, apiErrorFrom, TransportError } from './errors.js';

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
  accept?: string;
  /** Whole-request deadline; default 30 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Told the status of the response that is returned (e.g. 201 Created against 200 OK). */
  onStatus?: (status: number) => void;
}

export interface StreamOptions extends RequestOptions {
  /** The stream is destroyed when nothing arrives for this long. */
  idleTimeoutMs: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** How many times a GET answered 429 with Retry-After is sent in all. */
const READ_RETRIES_ON_429 = 5;

/** What the apply engine and discovery need of a client: a name and requests. */
export interface Requester {
  readonly name: string;
  request<T = unknown>(opts: RequestOptions): Promise<T>;
}

/** What an observer learns of each request: for metrics, and for tests that assert what was sent. */
export interface RequestRecord {
  method: Method;
  url: URL;
  /** The response's status; undefined when no response came. */
  status?: number;
}

export type RequestObserver = (record: RequestRecord) => void;

/**
 * A client for one cluster. It sends raw JSON (client-node's generated models
 * drop fields they do not know, see DESIGN.md), shares one keep-alive agent
 * for all its requests, and puts a deadline on every call.
 */
export class KubeClient implements Requester {
  readonly server: URL;
  private readonly agent: http.Agent;
  private readonly tls: https.AgentOptions;
  private readonly observers = new Set<RequestObserver>();

  private constructor(
    /** The name this client is known by in logs and metrics. */
    readonly name: string,
    public kubeConfig: KubeConfig,
    tls: https.AgentOptions,
    private readonly userAgent: string,
  ) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error(`kubeconfig for ${name} has no current cluster`);
    this.server = new URL(cluster.server);
    this.tls = tls;
    const agentOptions = { keepAlive: true, maxSockets: 128, ...tls };
    this.agent = this.server.protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  }

  /** `userAgent` tells the server (and its audit log) who sends; default `syncprims/<name>`. */
  static async create(name: string, kubeConfig: KubeConfig, userAgent = `syncprims/${name}`): Promise<KubeClient> {
    const opts: https.RequestOptions = {};
    await kubeConfig.applyToHTTPSOptions(opts);
    const tls: https.AgentOptions = { ca: opts.ca, cert: opts.cert, key: opts.key };
    if (opts.rejectUnauthorized !== undefined) tls.rejectUnauthorized = opts.rejectUnauthorized;
    if (opts.servername) tls.servername = opts.servername;
    return new KubeClient(name, kubeConfig, tls, userAgent);
  }

  static async fromFile(name: string, file: string): Promise<KubeClient> {
    return KubeClient.create(name, loadKubeConfigFile(file));
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
    const res = await this.send(opts, extraHeaders, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const text = await readBody(res);
    if (res.statusCode === undefined || res.statusCode >= 300) {
      throw apiErrorFrom(res.statusCode ?? 0, header(res, 'retry-after'), text, describe(opts));
    }
    opts.onStatus?.(res.statusCode);
    if (!text) return undefined as T;
    const json = (header(res, 'content-type') ?? '').includes('json');
    return (json ? JSON.parse(text) : text) as T;
  }

  /**
   * Opens a streaming response (a watch). The caller reads it and destroys it;
   * the stream is destroyed with an error when it stays silent too long.
   */
  async stream(opts: StreamOptions, extraHeaders: Record<string, string | string[]> = {}): Promise<http.IncomingMessage> {
    const res = await this.send(opts, extraHeaders, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    if (res.statusCode === undefined || res.statusCode >= 300) {
      const text = await readBody(res);
      throw apiErrorFrom(res.statusCode ?? 0, header(res, 'retry-after'), text, describe(opts));
    }
    res.socket.setTimeout(opts.idleTimeoutMs, () => {
      res.destroy(new TransportError(`${describe(opts)}: no data for ${opts.idleTimeoutMs} ms`));
    });
    return res;
  }

  /**
   * The same cluster and connection pool, acting as another user: every
   * request carries `Impersonate-User` (and `Impersonate-Group`) headers.
   */
  impersonate(user: string, groups: string[] = []): Requester {
    const headers: Record<string, string | string[]> = { 'impersonate-user': user };
    if (groups.length > 0) headers['impersonate-group'] = groups;
    return {
      name: `${this.name} as ${user}`,
      request: <T>(opts: RequestOptions) => this.request<T>(opts, headers),
    };
  }

  /** Calls `fn` after each request with its method, URL and status; returns the way to stop. */
  observe(fn: RequestObserver): () => void {
    this.observers.add(fn);
    return () => this.observers.delete(fn);
  }

  /**
   * Swaps the credentials (same server and CA, as the cluster registry
   * checks): requests from now on carry the new token; a new client
   * certificate takes effect on new connections, so open ones are closed.
   */
  useKubeConfig(kubeConfig: KubeConfig): void {
    this.kubeConfig = kubeConfig;
  }

  /** Frees the sockets of this client. */
  close(): void {
    this.agent.destroy();
  }

  private async send(
    opts: RequestOptions,
    extraHeaders: Record<string, string | string[]>,
    timeoutMs: number,
  ): Promise<http.IncomingMessage> {
    const auth: https.RequestOptions = { headers: {} };
    // Refreshes tokens where the kubeconfig's user has them; TLS comes from our agent.
    await this.kubeConfig.applyToHTTPSOptions(auth);
    const url = new URL(opts.path, this.server);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const body = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const headers: http.OutgoingHttpHeaders = {
      ...(auth.headers as http.OutgoingHttpHeaders),
      accept: opts.accept ?? 'application/json',
      'user-agent': this.userAgent,
      ...extraHeaders,
    };
    if (body) {
      headers['content-type'] = opts.contentType ?? 'application/json';
      headers['content-length'] = body.length;
    }
    const lib = url.protocol === 'https:' ? https : http;
    const method = opts.method ?? 'GET';
    const notify = (status?: number): void => {
      for (const fn of this.observers) fn({ method, url, status });
    };
    return new Promise((resolve, reject) => {
      const req = lib.request(url, { method, headers, agent: this.agent, ...this.tls });
      const timer = setTimeout(() => {
        req.destroy(new TransportError(`${describe(opts)}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      const onAbort = (): void => void req.destroy(new TransportError(`${describe(opts)}: aborted`));
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('response', (res) => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        notify(res.statusCode);
        resolve(res);
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        notify(undefined);
        reject(err instanceof TransportError ? err : new TransportError(`${describe(opts)}: ${err.message}`, err));
      });
      req.end(body);
    });
  }
}

function describe(opts: RequestOptions): string {
  return `${opts.method ?? 'GET'} ${opts.path}`;
}

function header(res: http.IncomingMessage, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

async function readBody(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
