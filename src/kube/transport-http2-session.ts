// One HTTP/2 connection to an API server, as the pool sees it: how many
// streams it may still carry, whether it is healthy, and sending on it.
import http2 from 'node:http2';
import type { TLSSocket } from 'node:tls';
import { TransportError } from './errors.js';
import type { Exchange, Reply } from './transport.js';

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants;

/**
 * Receive windows. The 64 KiB default makes a big LIST or a WatchList's
 * initial set wait for a WINDOW_UPDATE every 64 KiB; client-go's transport
 * opens 4 MiB a stream. The connection's window is shared by all streams.
 */
const STREAM_WINDOW_BYTES = 4 * 2 ** 20;
const SESSION_WINDOW_BYTES = 32 * 2 ** 20;
/** Node refuses new streams when a session's buffers pass this (MB; default 10). */
const SESSION_MEMORY_MB = 64;
/** Never more streams on one connection than this, whatever the server allows. */
const MAX_STREAMS_PER_SESSION = 1000;
const SETTINGS_TIMEOUT_MS = 10_000;
/** A session without streams for this long is closed, unless it is the pool's last. */
export const IDLE_SESSION_MS = 60_000;
/** Headers HTTP/2 forbids (RFC 9113 8.2.2); `host` becomes `:authority`. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host']);

export interface SessionHealth {
  /** Ping when nothing has been received for this long (client-go: ReadIdleTimeout). */
  readIdleMs: number;
  /** Destroy the session when a ping is not answered within this (client-go: PingTimeout). */
  pingTimeoutMs: number;
}

export interface SessionHooks {
  /** A stream ended, or the session takes streams again: waiting requests may find room. */
  room(): void;
  /** The session takes no more streams (GOAWAY, error, closing); its streams may go on. */
  draining(session: PooledSession): void;
  /** The connection is gone. */
  closed(session: PooledSession): void;
  /** The session has had no stream for IDLE_SESSION_MS. */
  idle(session: PooledSession): void;
}

/** The server did not process the stream (refused, or the session went away first): safe to send elsewhere. */
export class UnprocessedStreamError extends Error {}

export class PooledSession {
  private active = 0;
  private limit: number;
  private draining = false;
  /** Something on this session timed out: no new streams until a ping is answered. */
  private suspect = false;
  private pinging = false;
  private lastBytesRead: number;
  private lastReadAt = Date.now();
  private idleSince = Date.now();
  private readonly healthTimer: NodeJS.Timeout;

  /** Connects over `socket` (TLS, ALPN `h2`) and waits for the server's SETTINGS. */
  static async open(origin: string, socket: TLSSocket, health: SessionHealth, hooks: SessionHooks): Promise<PooledSession> {
    const session = http2.connect(origin, {
      createConnection: () => socket,
      settings: { enablePush: false, initialWindowSize: STREAM_WINDOW_BYTES },
      maxSessionMemory: SESSION_MEMORY_MB,
    });
    session.on('error', () => undefined); // the session closes after an error; 'close' tells the pool
    await remoteSettings(session, origin);
    session.setLocalWindowSize(SESSION_WINDOW_BYTES);
    return new PooledSession(session, socket, origin, health, hooks);
  }

  private constructor(
    private readonly session: http2.ClientHttp2Session,
    private readonly socket: TLSSocket,
    private readonly origin: string,
    private readonly health: SessionHealth,
    private readonly hooks: SessionHooks,
  ) {
    this.limit = streamLimit(session);
    this.lastBytesRead = socket.bytesRead;
    session.on('remoteSettings', () => {
      this.limit = streamLimit(session);
      hooks.room();
    });
    session.on('goaway', () => this.drain());
    session.on('error', () => this.drain());
    session.on('close', () => {
      clearInterval(this.healthTimer);
      this.drain();
      hooks.closed(this);
    });
    this.healthTimer = setInterval(() => this.checkHealth(), Math.max(10, Math.floor(health.readIdleMs / 3))).unref();
    // An idle session does not keep the process alive; one with streams does (as HTTP/1.1 sockets do).
    session.unref();
  }

  /** Streams open on this session now. */
  get streams(): number {
    return this.active;
  }

  /** Whether a new stream fits: long-lived ones (watches) leave a tenth of the slots to requests. */
  hasRoom(long: boolean): boolean {
    if (this.draining || this.suspect) return false;
    const reserve = this.limit > 1 ? Math.ceil(this.limit / 10) : 0;
    return this.active < (long ? this.limit - reserve : this.limit);
  }

  /** Opens the stream at once (the caller chose this session in the same turn) and resolves with its response. */
  send(exchange: Exchange): Promise<Reply> {
    let stream: http2.ClientHttp2Stream;
    try {
      stream = this.session.request(requestHeaders(exchange), { endStream: exchange.body === undefined });
    } catch (err) {
      this.drain();
      return Promise.reject(new UnprocessedStreamError(`${this.origin}: ${(err as Error).message}`, { cause: err }));
    }
    this.track(stream);
    if (exchange.body !== undefined) stream.end(exchange.body);
    return this.response(stream, exchange.signal);
  }

  /** Closes the session once its streams are done (it takes no new ones). */
  closeWhenDone(): void {
    this.drain();
    if (!this.session.closed) this.session.close();
  }

  /** Destroys the connection; its streams fail with `err`. */
  destroy(err: Error): void {
    this.drain();
    this.session.destroy(err);
  }

  private track(stream: http2.ClientHttp2Stream): void {
    if (this.active++ === 0 && !this.session.destroyed) this.session.ref();
    stream.once('close', () => {
      if (--this.active === 0) {
        this.idleSince = Date.now();
        if (!this.session.destroyed) this.session.unref();
      }
      this.hooks.room();
    });
  }

  private response(stream: http2.ClientHttp2Stream, signal: AbortSignal): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.doubt();
        cancel(stream, signal.reason as Error);
      };
      let settled = false;
      const settle = (): void => {
        settled = true;
        signal.removeEventListener('abort', onAbort);
      };
      stream.once('response', (headers) => {
        settle();
        resolve(this.replyOf(stream, headers));
      });
      const refused = (): boolean => stream.rstCode === NGHTTP2_REFUSED_STREAM;
      stream.once('error', (err) => {
        settle();
        reject(refused() ? new UnprocessedStreamError(`${this.origin}: stream refused`, { cause: err }) : err);
      });
      stream.once('close', () => {
        // Every stream closes, most after their response: an Error (and its stack) only for those that had none.
        if (settled) return;
        settle();
        const why = `the stream closed before a response (HTTP/2 error code ${stream.rstCode})`;
        reject(refused() ? new UnprocessedStreamError(`${this.origin}: ${why}`) : new Error(why));
      });
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private replyOf(stream: http2.ClientHttp2Stream, headers: http2.IncomingHttpHeaders): Reply {
    return {
      status: Number(headers[':status']),
      headers,
      body: stream,
      idleTimeout: (ms, error) => {
        // Per stream: data on the session's other streams does not keep this one alive.
        stream.setTimeout(ms, () => {
          this.doubt();
          cancel(stream, error());
        });
      },
    };
  }

  /** Something timed out on this session: route new streams elsewhere until a ping is answered. */
  private doubt(): void {
    if (this.draining) return;
    this.suspect = true;
    this.ping();
  }

  private checkHealth(): void {
    const now = Date.now();
    const bytes = this.socket.bytesRead;
    if (bytes !== this.lastBytesRead) {
      this.lastBytesRead = bytes;
      this.lastReadAt = now;
    } else if (now - this.lastReadAt >= this.health.readIdleMs) {
      this.ping();
    }
    if (this.active === 0 && !this.draining && now - this.idleSince >= IDLE_SESSION_MS) this.hooks.idle(this);
  }

  private ping(): void {
    if (this.pinging || this.session.destroyed) return;
    const ms = this.health.pingTimeoutMs;
    const timer = setTimeout(() => this.fail(`no answer to a ping within ${ms} ms`), ms).unref();
    const answered = (err: Error | null): void => {
      clearTimeout(timer);
      this.pinging = false;
      if (err) return void this.fail(`ping failed: ${err.message}`);
      this.lastReadAt = Date.now();
      if (!this.suspect) return;
      this.suspect = false;
      this.hooks.room();
    };
    try {
      this.pinging = this.session.ping(answered);
    } catch {
      this.pinging = false;
    }
    if (!this.pinging) clearTimeout(timer);
  }

  /** The connection is broken or half-open: its streams fail now (watches reconnect) instead of hanging. */
  private fail(why: string): void {
    this.drain();
    this.session.destroy(new TransportError(`HTTP/2 connection to ${this.origin}: ${why}`));
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    this.hooks.draining(this);
  }
}

function streamLimit(session: http2.ClientHttp2Session): number {
  const max = session.remoteSettings.maxConcurrentStreams ?? 100;
  return Math.max(1, Math.min(max, MAX_STREAMS_PER_SESSION));
}

function requestHeaders(exchange: Exchange): http2.OutgoingHttpHeaders {
  const headers: http2.OutgoingHttpHeaders = {
    ':method': exchange.method,
    ':path': `${exchange.url.pathname}${exchange.url.search}`,
  };
  for (const [name, value] of Object.entries(exchange.headers)) {
    const lower = name.toLowerCase();
    if (!CONNECTION_HEADERS.has(lower)) headers[lower] = value;
  }
  return headers;
}

/** Resets the stream (CANCEL, not INTERNAL_ERROR) and fails its reader with `err`. */
function cancel(stream: http2.ClientHttp2Stream, err: Error): void {
  if (!stream.closed) stream.close(NGHTTP2_CANCEL);
  stream.destroy(err);
}

function remoteSettings(session: http2.ClientHttp2Session, origin: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      session.off('remoteSettings', onSettings).off('error', onError).off('close', onClose);
    };
    const fail = (why: string): void => {
      done();
      session.destroy();
      reject(new Error(`HTTP/2 connection to ${origin}: ${why}`));
    };
    const onSettings = (): void => {
      done();
      resolve();
    };
    const onError = (err: Error): void => fail(err.message);
    const onClose = (): void => fail('closed before its SETTINGS');
    const timer = setTimeout(() => fail(`no SETTINGS within ${SETTINGS_TIMEOUT_MS} ms`), SETTINGS_TIMEOUT_MS);
    session.on('remoteSettings', onSettings).on('error', onError).on('close', onClose);
  });
}
