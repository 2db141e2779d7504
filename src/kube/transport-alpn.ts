// Which protocol a client speaks to its API server: HTTP/2 when the server
// agrees to it in TLS ALPN, HTTP/1.1 otherwise (see docs/adr/0003-transport.md).
// The health check of HTTP/2 connections (ping a connection that has received
// nothing for 30 s, drop it when the ping goes unanswered for 15 s, as
// client-go) can be tightened by the environment, where the options name no
// value: SYNCPRIMS_HTTP2_READ_IDLE_MS and SYNCPRIMS_HTTP2_PING_TIMEOUT_MS (the
// fault tests make a half-open connection show within seconds, not a minute).
import { Http1Transport } from './transport-http1.js';
import { Http2Transport, NotHttp2Error } from './transport-http2.js';
import type { ConnectionStats, Exchange, Protocol, Reply, TlsOptions, Transport, TransportOptions } from './transport.js';

/**
 * The transport for a server: HTTP/1.1 for `http:` (or when HTTP/2 is
 * switched off), else HTTP/2 with HTTP/1.1 as the fallback when the server
 * does not choose `h2` in ALPN. `saturated` is called when requests wait.
 */
export function createTransport(server: URL, tls: TlsOptions, options: TransportOptions, saturated: () => void): Transport {
  const http1 = new Http1Transport(server, tls, options.http1RequestSockets ?? 64, saturated, options.addressPolicy);
  if (server.protocol !== 'https:' || options.http2 === false) return http1;
  const http2 = new Http2Transport(server, tls, {
    maxSessions: options.http2MaxSessions ?? 16,
    connectTimeoutMs: options.connectTimeoutMs,
    readIdleMs: options.http2ReadIdleMs ?? fromEnv('SYNCPRIMS_HTTP2_READ_IDLE_MS') ?? 30_000,
    pingTimeoutMs: options.http2PingTimeoutMs ?? fromEnv('SYNCPRIMS_HTTP2_PING_TIMEOUT_MS') ?? 15_000,
    saturated,
    addressPolicy: options.addressPolicy,
  });
  return new NegotiatedTransport(http2, http1);
}

/** A positive number of milliseconds from the environment; undefined when unset (or not such a number). */
function fromEnv(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || !/^\d+$/.test(text) || Number(text) <= 0) return undefined;
  return Number(text);
}

/**
 * HTTP/2 until a connection comes back without `h2` from ALPN (an HTTP/1.1
 * server or proxy); from then on HTTP/1.1 for this client. Sessions already
 * open keep serving their streams until these end.
 */
class NegotiatedTransport implements Transport {
  private protocol: Protocol | undefined;

  constructor(
    private readonly http2: Http2Transport,
    private readonly http1: Http1Transport,
  ) {}

  async send(exchange: Exchange): Promise<Reply> {
    if (this.protocol === 'http/1.1') return this.http1.send(exchange);
    try {
      const reply = await this.http2.send(exchange);
      this.protocol = 'h2';
      return reply;
    } catch (err) {
      if (!(err instanceof NotHttp2Error)) throw err;
      this.protocol = 'http/1.1';
      return this.http1.send(exchange);
    }
  }

  stats(): ConnectionStats {
    const a = this.http2.stats();
    const b = this.http1.stats();
    return {
      protocol: this.protocol ?? a.protocol,
      connections: a.connections + b.connections,
      streams: a.streams + b.streams,
      queued: a.queued + b.queued,
    };
  }

  close(): void {
    this.http2.close();
    this.http1.close();
  }
}
