// A control plane of a test's own (its own directory, etcd and free ports),
// whose etcd the test may compact on demand: the shared clusters share one
// etcd, and compacting it would expire every other test's resource versions.
// etcd is reached over its gRPC gateway (plain HTTP/JSON on its client port).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { customResourceDefinitions } from '../../src/api/crds.js';
import { API_VERSION } from '../../src/api/kinds.js';
import { FIELD_MANAGER } from '../../src/api/marks.js';
import { serverSideApply } from '../../src/kube/apply.js';
import { KubeClient } from '../../src/kube/client.js';
import { Discovery } from '../../src/kube/discovery.js';
import { controlplane, kubeconfigPath } from './controlplane.js';
import { eventually } from './eventually.js';

/** The client side of one etcd's gRPC gateway. */
export class Etcd {
  constructor(readonly port: number) {}

  /** etcd's current revision: the resourceVersion of the last write of any cluster on it. */
  async revision(): Promise<number> {
    // A range over one unused key: the answer's header carries the store's revision.
    const res = await this.post<{ header: { revision: string } }>('/v3/kv/range', { key: Buffer.from('\0syncprims-test-probe').toString('base64') });
    return Number(res.header.revision);
  }

  /**
   * Compacts the history up to `revision` (default: the current one), so that
   * a watch or list from any older resourceVersion is refused with 410 Gone.
   * `physical`: returns once the old revisions are gone from the backend.
   */
  async compact(revision?: number): Promise<number> {
    const rev = revision ?? (await this.revision());
    await this.post('/v3/kv/compaction', { revision: String(rev), physical: true });
    return rev;
  }

  private async post<T>(endpoint: string, body: unknown): Promise<T> {
    const res = await fetch(`http://127.0.0.1:${this.port}${endpoint}`, { method: 'POST', body: JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`etcd ${endpoint}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  }
}

/**
 * A second, independent control plane (as lifecycle.test.ts starts) with one
 * cluster, on free ports, torn down by `down()`. `apiserverFlags` go to its
 * kube-apiserver, e.g. `--watch-cache=false`: watches are then served by etcd
 * itself, so a compaction shows in them (with the watch cache, a watch is
 * answered from the API server's memory, whatever etcd has compacted).
 */
export class PrivateControlPlane {
  private clients: KubeClient[] = [];

  private constructor(
    readonly dir: string,
    readonly cluster: string,
    readonly etcd: Etcd,
  ) {}

  static async start(cluster: string, apiserverFlags: string[] = []): Promise<PrivateControlPlane> {
    const dir = await mkdtemp(path.join(tmpdir(), 'syncprims-private-cp-'));
    const flags = apiserverFlags.flatMap((f) => ['--apiserver-flag', `${cluster}=${f}`]);
    try {
      await controlplane(['up', `${cluster}:0`, ...flags], { dir, etcdPort: 0 });
      const port = Number((await readFile(path.join(dir, 'etcd.port'), 'utf8')).trim());
      return new PrivateControlPlane(dir, cluster, new Etcd(port));
    } catch (err) {
      await controlplane(['down'], { dir }).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  get kubeconfig(): string {
    return kubeconfigPath(this.cluster, this.dir);
  }

  /** An admin client (closed by `down()`). */
  async client(): Promise<KubeClient> {
    const c = await KubeClient.fromFile(this.cluster, this.kubeconfig);
    this.clients.push(c);
    return c;
  }

  /**
   * A copy of the admin kubeconfig whose server is 127.0.0.1:`port` (a proxy
   * in front of the API server; its serving certificate names 127.0.0.1), as a file.
   */
  async kubeconfigViaPort(port: number): Promise<string> {
    const text = await readFile(this.kubeconfig, 'utf8');
    const file = path.join(this.dir, `${this.cluster}-via-${port}.kubeconfig`);
    await writeFile(file, text.replace(/server: https:\/\/127\.0\.0\.1:\d+/g, `server: https://127.0.0.1:${port}`), { mode: 0o600 });
    return file;
  }

  /** The port its API server listens on. */
  async apiserverPort(): Promise<number> {
    const m = /server: https:\/\/127\.0\.0\.1:(\d+)/.exec(await readFile(this.kubeconfig, 'utf8'));
    if (!m) throw new Error(`no server in ${this.kubeconfig}`);
    return Number(m[1]);
  }

  /** Applies the syncprims CRDs and waits until Syncs are served. */
  async installCrds(): Promise<void> {
    const client = await this.client();
    const discovery = new Discovery(client);
    for (const crd of customResourceDefinitions()) {
      await serverSideApply(client, discovery, crd, { fieldManager: FIELD_MANAGER, force: true });
    }
    await eventually('Syncs to be served', async () => {
      await client.request({ path: `/apis/${API_VERSION}/namespaces/default/syncs` });
      return true;
    });
  }

  /** Stops every process of it and removes its directory. */
  async down(): Promise<void> {
    for (const c of this.clients) c.close();
    await controlplane(['down'], { dir: this.dir }).catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}
