import net from 'node:net';

/**
 * A loopback TCP proxy in front of an API server that can stall: existing
 * connections stop passing data (without closing), as a half-open link or a
 * hung middlebox would. New connections pass normally.
 */
export class StallingProxy {
  private readonly server: net.Server;
  private readonly pairs = new Set<[net.Socket, net.Socket]>();

  private constructor(private readonly target: number) {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.target, '127.0.0.1');
      const pair: [net.Socket, net.Socket] = [client, upstream];
      this.pairs.add(pair);
      client.pipe(upstream);
      upstream.pipe(client);
      const close = (): void => {
        client.destroy();
        upstream.destroy();
        this.pairs.delete(pair);
      };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    });
  }

  static async start(targetPort: number): Promise<StallingProxy> {
    const proxy = new StallingProxy(targetPort);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Existing connections go silent in both directions; returns how many. */
  stallAll(): number {
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
    return this.pairs.size;
  }

  async close(): Promise<void> {
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    await new Promise((resolve) => this.server.close(resolve));
  }
}
