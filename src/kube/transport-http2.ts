// HTTP/2 to an API server: requests and watches are streams over a few
// connections (one is enough until the server's MAX_CONCURRENT_STREAMS is
// reached), as client-go does. A request never waits behind watches: a full
// session makes the pool open another one, and watches leave a tenth of every
// session's streams to requests.
import net from 'node:net';
import tls from 'node:tls';
import type { AddressPolicy } from './address-policy.js';
import { TransportError } from './errors.js';
import { PooledSession, UnprocessedStreamError, type SessionHooks } from './transport-http2-session.js';
import { unlessAborted, type ConnectionStats, type Exchange, type Reply, type TlsOptions, type Transport } from './transport.js';

/** The server chose HTTP/1.1 (or nothing) in ALPN: this request, and the next ones, go over HTTP/1.1. */
export class NotHttp2Error extends Error {}

/** TCP connect plus TLS handshake, unless the options say otherwise. */
const CONNECT_TIMEOUT_MS = 10_000;
/** How many sessions a request that the server did not process is offered to. */
const SEND_ATTEMPTS = 3;

export interface Http2PoolOptions {
  maxSessions: number;
  /** TCP connect plus TLS handshake (default 10 s). */
  connectTimeoutMs?: number;
  readIdleMs: number;
  pingTimeoutMs: number;
  /** Requests wait: every session is full and no other may be opened. */
  saturated: () => void;
  /** Addresses never connected to (the socket's lookup resolves once and hands it only allowed ones). */
  addressPolicy?: AddressPolicy;
}

export class Http2Transport implements Transport {
  /** Sessions that take new streams. */
  private readonly usable = new Set<PooledSession>();
  /** Every open session, draining ones included. */
  private readonly open = new Set<PooledSession>();
  private connecting: Promise<void> | undefined;
  /** Sockets between connect and the server's SETTINGS: close() ends them too. */
  private readonly handshaking = new Set<tls.TLSSocket>();
  private waiters: { resolve: () => void; reject: (err: Error) => void }[] = [];
  private waiting = 0;
  /** Whether a session ever opened: the server speaks h2. */
  private negotiated = false;
  private readonly hooks: SessionHooks = {
    room: () => this.wake(),
    draining: (s) => {
      this.usable.delete(s);
      this.wake();
    },
    closed: (s) => {
      this.usable.delete(s);
      this.open.delete(s);
      this.wake();
    },
    idle: (s) => {
      if ([...this.usable].some((other) => other !== s)) s.closeWhenDone();
    },
  };

  constructor(
    private readonly server: URL,
    private readonly tls: TlsOptions,
    private readonly options: Http2PoolOptions,
  ) {}

  async send(exchange: Exchange): Promise<Reply> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.sendOnce(exchange);
      } catch (err) {
        if (!(err instanceof UnprocessedStreamError) || attempt >= SEND_ATTEMPTS) throw err;
      }
    }
  }

  stats(): ConnectionStats {
    let streams = 0;
    for (const s of this.open) streams += s.streams;
    return { protocol: this.negotiated ? 'h2' : undefined, connections: this.open.size, streams, queued: this.waiting };
  }

  close(): void {
    const closed = (): Error => new TransportError(`${this.server.origin}: the client was closed`);
    // Requests waiting for a stream fail (first: closing sessions wakes waiters) rather than
    // open a connection for a client being closed.
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(closed());
    for (const socket of this.handshaking) socket.destroy();
    for (const s of this.open) s.destroy(closed());
    this.open.clear();
    this.usable.clear();
  }

  private async sendOnce(exchange: Exchange): Promise<Reply> {
    for (;;) {
      // Choosing the session and opening the stream happen in one turn, so no other request takes the slot between.
      const session = this.withRoom(exchange.long);
      if (session) return session.send(exchange);
      this.waiting++;
      try {
        await unlessAborted(this.room(), exchange.signal);
      } finally {
        this.waiting--;
      }
    }
  }

  private withRoom(long: boolean): PooledSession | undefined {
    // The oldest first: streams gather on few sessions, and spare ones go idle and close.
    for (const s of this.usable) if (s.hasRoom(long)) return s;
    return undefined;
  }

  /** Resolves when a new session is open or, with sessions at their limit, when a stream ends somewhere. */
  private room(): Promise<void> {
    if (this.connecting) return this.connecting;
    if (this.usable.size < this.options.maxSessions) {
      this.connecting = this.connect().finally(() => (this.connecting = undefined));
      return this.connecting;
    }
    this.options.saturated();
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.resolve();
  }

  private async connect(): Promise<void> {
    const socket = connectAlpn(this.server, this.tls, ['h2', 'http/1.1'], this.options.addressPolicy);
    this.handshaking.add(socket);
    try {
      await secured(socket, this.options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS);
      if (socket.alpnProtocol !== 'h2') {
        socket.destroy();
        throw new NotHttp2Error(`${this.server.origin} chose ${socket.alpnProtocol || 'no protocol'} in ALPN, not h2`);
      }
      const health = { readIdleMs: this.options.readIdleMs, pingTimeoutMs: this.options.pingTimeoutMs };
      const session = await PooledSession.open(this.server.origin, socket, health, this.hooks);
      this.usable.add(session);
      this.open.add(session);
      this.negotiated = true;
    } finally {
      this.handshaking.delete(socket);
    }
  }
}

/** A TLS connection to `server` offering `protocols` in ALPN, with the client's certificates, to an address `policy` allows. */
function connectAlpn(server: URL, options: TlsOptions, protocols: string[], policy: AddressPolicy | undefined): tls.TLSSocket {
  // An IP literal is connected to without a lookup: checked here.
  policy?.checkHost(server.hostname);
  const host = server.hostname.replace(/^\[(.*)\]$/, '$1');
  // SNI takes names, not addresses (RFC 6066).
  const servername = options.servername ?? (net.isIP(host) ? undefined : host);
  const lookup = policy ? { lookup: policy.lookup } : {};
  return tls.connect({ ...options, ...lookup, host, port: Number(server.port || 443), servername, ALPNProtocols: protocols });
}

/** Resolves when the TLS handshake is done; fails after `timeoutMs`. */
function secured(socket: tls.TLSSocket, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => socket.destroy(new Error(`no TLS connection within ${timeoutMs} ms`)), timeoutMs);
    const onError = (err: Error): void => {
      clearTimeout(timer);
      reject(err);
    };
    const onClose = (): void => onError(new Error('the connection closed during the TLS handshake'));
    socket.once('error', onError).once('close', onClose);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      socket.off('error', onError).off('close', onClose);
      socket.on('error', () => undefined); // from here on the HTTP/2 session reports the socket's errors
      resolve();
    });
  });
}
