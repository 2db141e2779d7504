// HTTP/1.1 to an API server: for `http:` servers and for servers or proxies
// that do not speak HTTP/2. One request holds one socket, so watches (which
// hold theirs for minutes) get a pool of their own and never take the sockets
// of ordinary requests.
import http from 'node:http';
import https from 'node:https';
import type { AddressPolicy } from './address-policy.js';
import type { ConnectionStats, Exchange, Reply, TlsOptions, Transport } from './transport.js';

export class Http1Transport implements Transport {
  /** Ordinary requests: bounded, so a burst queues here instead of opening hundreds of sockets. */
  private readonly requests: http.Agent;
  /** Watches and other long responses: a socket each, as many as there are watches. */
  private readonly streams: http.Agent;
  private readonly lib: typeof http | typeof https;

  /** `policy`: the addresses its sockets may not connect to (the agents' lookup resolves once and hands them only allowed ones). */
  constructor(
    private readonly server: URL,
    tls: TlsOptions,
    requestSockets: number,
    private readonly saturated: () => void,
    private readonly policy?: AddressPolicy,
  ) {
    const secure = server.protocol === 'https:';
    this.lib = secure ? https : http;
    const Agent = secure ? https.Agent : http.Agent;
    const base = {
      keepAlive: true,
      scheduling: 'lifo' as const,
      ...(policy ? { lookup: policy.lookup } : {}),
      ...(secure ? { ...tls, ALPNProtocols: ['http/1.1'] } : {}),
    };
    this.requests = new Agent({ ...base, maxSockets: requestSockets });
    this.streams = new Agent(base);
  }

  send(exchange: Exchange): Promise<Reply> {
    const agent = exchange.long ? this.streams : this.requests;
    return new Promise((resolve, reject) => {
      // An IP literal is connected to without a lookup: checked here.
      this.policy?.checkHost(this.server.hostname);
      const req = this.lib.request(exchange.url, { method: exchange.method, headers: exchange.headers, agent });
      const onAbort = (): void => {
        // A request still queued in the agent emits nothing when destroyed (not until a socket
        // frees and the agent hands it over), so the deadline rejects it here.
        req.destroy(exchange.signal.reason as Error);
        reject(exchange.signal.reason as Error);
      };
      const done = (): void => exchange.signal.removeEventListener('abort', onAbort);
      req.on('response', (res) => {
        done();
        resolve(replyOf(res));
      });
      req.on('error', (err) => {
        done();
        reject(err);
      });
      if (exchange.signal.aborted) onAbort();
      else exchange.signal.addEventListener('abort', onAbort, { once: true });
      req.end(exchange.body);
      if (!exchange.long && count(this.requests.requests) > 0) this.saturated();
    });
  }

  stats(): ConnectionStats {
    const agents = [this.requests, this.streams];
    const busy = agents.reduce((n, a) => n + count(a.sockets), 0);
    return {
      protocol: 'http/1.1',
      connections: busy + agents.reduce((n, a) => n + count(a.freeSockets), 0),
      streams: busy,
      queued: agents.reduce((n, a) => n + count(a.requests, (req) => !(req as http.ClientRequest).destroyed), 0),
    };
  }

  close(): void {
    this.requests.destroy();
    this.streams.destroy();
  }
}

function replyOf(res: http.IncomingMessage): Reply {
  return {
    status: res.statusCode ?? 0,
    headers: res.headers,
    body: res,
    idleTimeout(ms, error) {
      // One response per socket at a time, so the socket's idleness is the response's.
      const socket = res.socket;
      const onTimeout = (): void => void res.destroy(error());
      socket.setTimeout(ms);
      socket.on('timeout', onTimeout);
      // The agent resets the socket's timeout when it takes the socket back.
      res.once('close', () => socket.off('timeout', onTimeout));
    },
  };
}

function count(lists: NodeJS.ReadOnlyDict<unknown[]>, which: (item: unknown) => boolean = () => true): number {
  let n = 0;
  for (const list of Object.values(lists)) n += list?.filter(which).length ?? 0;
  return n;
}
