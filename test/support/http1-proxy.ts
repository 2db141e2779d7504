// A TLS-terminating reverse proxy in front of an API server that speaks
// HTTP/1.1 only (ALPN offers `http/1.1`), as many ingresses and corporate
// proxies do. It serves with the local control plane's serving certificate
// (127.0.0.1, signed by the cluster CA) and forwards each request to the API
// server as the kubeconfig's user (the admin client certificate).
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import path from 'node:path';
import { loadKubeConfigFile } from '../../src/kube/config.js';
import { KubeConfig } from '../../src/kube/kubeconfig.js';
import { LOCAL } from './controlplane-cli.js';

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer'];

export class Http1Proxy {
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: https.Server,
    private readonly upstream: https.Agent,
    private readonly target: URL,
    private readonly kubeConfigOfTarget: KubeConfig,
  ) {
    server.on('connection', (socket: net.Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => this.forward(req, res));
  }

  /** Starts a proxy on 127.0.0.1 for the cluster of `kubeconfigFile`. */
  static async start(kubeconfigFile: string): Promise<Http1Proxy> {
    const kc = loadKubeConfigFile(kubeconfigFile);
    const tls: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(tls);
    const server = https.createServer({
      key: readFileSync(path.join(LOCAL, 'pki', 'serving.key')),
      cert: readFileSync(path.join(LOCAL, 'pki', 'serving.crt')),
      ALPNProtocols: ['http/1.1'],
    });
    const upstream = new https.Agent({ keepAlive: true, ca: tls.ca, cert: tls.cert, key: tls.key });
    const proxy = new Http1Proxy(server, upstream, new URL(kc.getCurrentCluster()?.server ?? ''), kc);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Client connections open to the proxy now. */
  get connections(): number {
    return this.sockets.size;
  }

  /** A kubeconfig for the proxy: the cluster's CA (which signed the proxy's certificate), no credentials. */
  kubeConfig(): KubeConfig {
    const cluster = this.kubeConfigOfTarget.getCurrentCluster();
    const out = new KubeConfig();
    out.loadFromOptions({
      clusters: [{ skipTLSVerify: false, ...cluster, name: 'via-http1-proxy', server: `https://127.0.0.1:${this.port}` }],
      users: [{ name: 'anonymous' }],
      contexts: [{ name: 'via-http1-proxy', cluster: 'via-http1-proxy', user: 'anonymous' }],
      currentContext: 'via-http1-proxy',
    });
    return out;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.upstream.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const up = https.request(
      {
        host: this.target.hostname,
        port: this.target.port,
        method: req.method,
        path: req.url,
        headers: withoutHopByHop({ ...req.headers, host: this.target.host }),
        agent: this.upstream,
      },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, withoutHopByHop(upRes.headers));
        res.flushHeaders(); // a watch's headers go out before its first event
        upRes.pipe(res);
        res.once('close', () => {
          if (!upRes.complete) upRes.destroy(); // the client went away: end the watch upstream too
        });
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  }
}

function withoutHopByHop(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = { ...headers };
  for (const name of HOP_BY_HOP) delete out[name];
  return out;
}
