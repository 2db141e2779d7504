import net from 'node:net';

/**
 * A loopback TCP proxy in front of an API server that can stall: existing
 * connections stop passing data (without closing), as a half-open link or a
 * hung middlebox would. New connections pass normally, unless the proxy is a
 * black hole (`blackHole()`): then they are accepted and never answered, or
 * down (`down()`): then its port refuses them, as a stopped API server's does.
 */
export class StallingProxy {
  private readonly server: net.Server;
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private readonly swallowed = new Set<net.Socket>();
  private swallowing = false;
  private listeningOn = 0;

  private constructor(private readonly target: number) {
    this.server = net.createServer((client) => {
      if (this.swallowing) {
        this.swallowed.add(client);
        client.on('error', () => client.destroy()).on('close', () => this.swallowed.delete(client));
        client.pause();
        return;
      }
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
    await proxy.listen(0);
    proxy.listeningOn = proxy.port;
    return proxy;
  }

  private listen(port: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.server.once('error', reject).listen(port, '127.0.0.1', () => (this.server.off('error', reject), resolve()));
    });
  }

  /** Its port (the same one while it is down). */
  get port(): number {
    return (this.server.address() as net.AddressInfo | null)?.port ?? this.listeningOn;
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

  /** Every connection, open or new, is accepted and never answered, until `restore()`. */
  blackHole(): void {
    this.swallowing = true;
    this.stallAll();
  }

  /** Passes traffic again: stalled and swallowed connections are closed, new ones pass. */
  restore(): void {
    this.swallowing = false;
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    for (const s of this.swallowed) s.destroy();
  }

  /**
   * As its API server stopped: every open connection is closed and the port
   * refuses new ones, until `up()` listens on it again. (The server behind it
   * keeps running: a shared cluster is not stopped for one test.)
   */
  async down(): Promise<void> {
    await this.close();
  }

  /** Listens on its port again after `down()` (if it is down): connections pass as before. */
  async up(): Promise<void> {
    this.swallowing = false;
    if (this.server.listening) return;
    await this.listen(this.listeningOn);
  }

  async close(): Promise<void> {
    for (const s of this.swallowed) s.destroy();
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    if (this.server.listening) await new Promise((resolve) => this.server.close(resolve));
  }
}
