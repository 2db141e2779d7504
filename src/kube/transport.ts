// What a KubeClient's transports share: one request and its response as a
// transport sees them, the figures that metrics and logs need, and the options.
// See docs/adr/0003-transport.md for why there are two protocols.
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { ConnectionOptions } from 'node:tls';
import type { AddressPolicy } from './address-policy.js';

export type Protocol = 'h2' | 'http/1.1';

/** What a client holds to its API server at one moment. */
export interface ConnectionStats {
  /** The protocol the server agreed to; undefined before the first connection to an https server. */
  protocol: Protocol | undefined;
  /** Open TCP connections to the API server (HTTP/2 sessions, or HTTP/1.1 sockets busy and idle). */
  connections: number;
  /** Requests and watches in flight: HTTP/2 streams, or HTTP/1.1 requests holding a socket. */
  streams: number;
  /** Requests waiting for a connection or a stream to become free. */
  queued: number;
}

/** The TLS settings of a client, from its kubeconfig. */
export type TlsOptions = Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;

/** The TLS settings as one text: equal texts, equal connections. */
export function tlsText(tls: TlsOptions): string {
  const text = (v: unknown): string => (v === undefined ? '' : String(v));
  return JSON.stringify((['ca', 'cert', 'key', 'rejectUnauthorized', 'servername'] as const).map((k) => text(tls[k])));
}

/** Limits and switches of the transport; the defaults suit the operator. */
export interface TransportOptions {
  /** Offer HTTP/2 to https servers (default true); false speaks HTTP/1.1 only, as client-go's DISABLE_HTTP2. */
  http2?: boolean;
  /** HTTP/1.1: sockets for ordinary requests (default 64); watches have a pool of their own. */
  http1RequestSockets?: number;
  /** HTTP/2: the TCP connect and TLS handshake of a new connection fail after this (default 10 s). */
  connectTimeoutMs?: number;
  /** HTTP/2: most connections (sessions) per client (default 16). */
  http2MaxSessions?: number;
  /** HTTP/2: a connection that has received nothing for this long is pinged (default 30 s). */
  http2ReadIdleMs?: number;
  /** HTTP/2: ...and closed, failing its streams, when the ping is not answered within this (default 15 s). */
  http2PingTimeoutMs?: number;
  /** A client-side rate limit on every request (client-go's QPS and Burst); none when unset. */
  rateLimit?: { qps: number; burst: number };
  /** Addresses never connected to (`--source-deny-cidrs`, for the servers of kubeconfigs in Secrets); any when unset. */
  addressPolicy?: AddressPolicy;
}

/** One request as the transport sends it. */
export interface Exchange {
  method: string;
  url: URL;
  /** Lower-case names. */
  headers: Record<string, string | string[] | number>;
  body?: Buffer;
  /** A long-lived response (a watch): it never takes a connection or a stream slot kept for requests. */
  long: boolean;
  /** Aborting it before the response rejects the exchange with `signal.reason`. */
  signal: AbortSignal;
}

/** The response: status, headers and the body to read (or destroy). */
export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Readable;
  /** Destroys `body` with `error()` once nothing arrives on this response for `ms`. */
  idleTimeout(ms: number, error: () => Error): void;
}

export interface Transport {
  send(exchange: Exchange): Promise<Reply>;
  stats(): ConnectionStats;
  /** Destroys every connection; a later request opens new ones. */
  close(): void;
}

export type SaturationListener = (detail: ConnectionStats) => void;

/** Tells listeners that requests wait, at most once per `everyMs`. */
export class SaturationAlarm {
  private readonly listeners = new Set<SaturationListener>();
  private last = -Infinity;

  constructor(private readonly everyMs = 30_000) {}

  on(fn: SaturationListener): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  raise(detail: () => ConnectionStats): void {
    const now = Date.now();
    if (this.listeners.size === 0 || now - this.last < this.everyMs) return;
    this.last = now;
    const stats = detail();
    for (const fn of this.listeners) {
      try {
        fn(stats);
      } catch {
        // a listener's failure is not the request's
      }
    }
  }
}

/** Resolves as `promise`, or rejects with the signal's reason when it aborts first. */
export function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
