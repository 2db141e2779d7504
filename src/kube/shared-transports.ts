// Connections shared by clients of the same server and TLS settings, as
// client-go shares an http.Transport between rest.Configs whose TLS config is
// the same: bearer tokens travel in each request's headers, so a thousand
// ServiceAccount identities on one API server need a few HTTP/2 connections,
// not a thousand. A client certificate is part of the TLS settings, so
// certificate identities get connections of their own.
import { createHash } from 'node:crypto';
import { createTransport } from './transport-alpn.js';
import { tlsText, type ConnectionStats, type TlsOptions, type Transport, type TransportOptions } from './transport.js';

/** A hold on a shared transport; `release` once, when the client is done with it. */
export interface TransportHold {
  transport: Transport;
  release(): void;
}

interface Entry {
  server: URL;
  transport: Transport;
  /** The saturation listeners of the clients holding it (one per hold). */
  holders: Set<() => void>;
}

export class SharedTransports {
  private readonly entries = new Map<string, Entry>();

  /** The transport for `server` with `tls`, shared with every other holder of the same; `saturated` hears its saturation. */
  acquire(server: URL, tls: TlsOptions, options: TransportOptions, saturated: () => void): TransportHold {
    const key = keyOf(server, tls, options);
    let entry = this.entries.get(key);
    if (!entry) {
      const holders = new Set<() => void>();
      const transport = createTransport(server, tls, options, () => {
        for (const fn of holders) fn();
      });
      entry = { server, transport, holders };
      this.entries.set(key, entry);
    }
    // A function of its own per hold, so the same listener held twice is released twice.
    const hold = (): void => saturated();
    entry.holders.add(hold);
    const held = entry;
    let released = false;
    return {
      transport: held.transport,
      release: () => {
        if (released) return;
        released = true;
        held.holders.delete(hold);
        if (held.holders.size > 0) return;
        held.transport.close();
        if (this.entries.get(key) === held) this.entries.delete(key);
      },
    };
  }

  /** How many distinct transports are held (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  /** The connections to each server (its host), summed over the transports to it. */
  stats(): Map<string, ConnectionStats> {
    const byServer = new Map<string, ConnectionStats>();
    for (const { server, transport } of this.entries.values()) {
      const s = transport.stats();
      const sum = byServer.get(server.host);
      byServer.set(
        server.host,
        sum
          ? { protocol: sum.protocol ?? s.protocol, connections: sum.connections + s.connections, streams: sum.streams + s.streams, queued: sum.queued + s.queued }
          : s,
      );
    }
    return byServer;
  }
}

function keyOf(server: URL, tls: TlsOptions, options: TransportOptions): string {
  const { rateLimit: _perClient, addressPolicy, ...connection } = options;
  return createHash('sha256').update(JSON.stringify([server.origin, tlsText(tls), connection, addressPolicy?.cidrs])).digest('hex');
}
