// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// The control plane's own life cycle, on a second, independent instance (its
// own directory and ports) so the shared clusters of other tests are untouched:
// start on demand, restart with data kept, per-cluster feature gates, stop, and
// no process left behind. Its ports are free ones: etcd's picked by the
// supervisor (--etcd-port 0), the clusters' asked for as NAME:0 or, to try
// NAME:PORT, found free by the test.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KubeClient } from '../../src/kube/client.js';
import { ApiError } from '../../src/kube/errors.js';
import { watchEvents } from '../../src/kube/watch-stream.js';
import { controlplane, controlPlaneStatus, kubeconfigPath } from '../support/controlplane.js';

const ETCD_PORT = 0;
let dir = '';
const clients: KubeClient[] = [];
const cp = (args: string[]) => controlplane(args, { dir, etcdPort: ETCD_PORT });

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The port `up` printed for a cluster. */
function portPrinted(out: string, cluster: string): number {
  const m = new RegExp(`^${cluster}\\s+https://127\\.0\\.0\\.1:(\\d+)`, 'm').exec(out);
  if (!m) throw new Error(`up printed no address for ${cluster}: ${out}`);
  return Number(m[1]);
}

async function client(cluster: string): Promise<KubeClient> {
  const c = await KubeClient.fromFile(cluster, kubeconfigPath(cluster, dir));
  clients.push(c);
  return c;
}

/** Every process whose command line mentions our directory. */
async function processesUsing(needle: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (cmdline.includes(needle) && !/^\d+ \(.*\) Z/.test(stat)) pids.push(Number(entry));
  }
  return pids;
}

async function pidOf(file: string): Promise<number> {
  return Number((await readFile(path.join(dir, file), 'utf8')).trim());
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'syncprims-cp-'));
});

afterAll(async () => {
  for (const c of clients) c.close();
  await cp(['down']).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

describe('controlplane life cycle', () => {
  test('up starts a named cluster on its port, writes its kubeconfig, and serves v1.36.3; etcd took a free pair', async () => {
    const port = await freePort();
    const out = await cp(['up', `solo:${port}`]);
    expect(out).toContain(`KUBECONFIG=${kubeconfigPath('solo', dir)}`);
    expect(portPrinted(out, 'solo')).toBe(port);
    const solo = await client('solo');
    expect(solo.server.port).toBe(String(port));
    const v = await solo.request<{ gitVersion: string }>({ path: '/version' });
    expect(v.gitVersion).toBe('v1.36.3');
    // up is idempotent: a running cluster is reused, not started twice.
    const before = await pidOf('solo.pid');
    await cp(['up', `solo:${port}`]);
    expect(await pidOf('solo.pid')).toBe(before);
    // --etcd-port 0: the supervisor picked the port and wrote it down.
    const etcdPort = Number((await readFile(path.join(dir, 'etcd.port'), 'utf8')).trim());
    expect(etcdPort).toBeGreaterThan(0);
    await expect(fetch(`http://127.0.0.1:${etcdPort}/health`).then((r) => r.json())).resolves.toMatchObject({ health: 'true' });
  });

  test('a restarted cluster keeps its data and serves again', async () => {
    const solo = await client('solo');
    await solo.request({
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'survivor' }, data: { kept: 'yes' } },
    });
    const before = await pidOf('solo.pid');
    await cp(['restart', 'solo']);
    const after = await pidOf('solo.pid');
    expect(after).not.toBe(before);
    expect(await processesUsing(`${dir}`)).not.toContain(before);
    const cm = await solo.request<{ data: Record<string, string> }>({
      path: '/api/v1/namespaces/default/configmaps/survivor',
    });
    expect(cm.data).toEqual({ kept: 'yes' });
  });

  test('a cluster started on demand works beside the others, with its own data', async () => {
    const out = await cp(['up', 'extra:0']);
    const port = portPrinted(out, 'extra');
    expect(port).toBeGreaterThan(0);
    const extra = await client('extra');
    expect(extra.server.port).toBe(String(port));
    await extra.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'only-in-extra' } },
    });
    const solo = await client('solo');
    await expect(solo.request({ path: '/api/v1/namespaces/only-in-extra' })).rejects.toMatchObject({ status: 404 });
    const status = await controlPlaneStatus({ dir, etcdPort: ETCD_PORT });
    expect(status.clusters.filter((c) => c.running).map((c) => c.name)).toEqual(['extra', 'solo']);
  });

  test('feature gates are set per cluster: WatchList off on one, on by default on another', async () => {
    await cp(['up', 'nowl:0', '--feature-gates', 'nowl=WatchList=false']);
    const query = {
      watch: 1,
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: true,
    };
    const nowl = await client('nowl');
    const refused = await nowl
      .stream({ path: '/api/v1/namespaces', query, idleTimeoutMs: 10_000 })
      .then((res) => (res.destroy(), undefined))
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(422);

    const solo = await client('solo');
    const res = await solo.stream({ path: '/api/v1/namespaces', query, idleTimeoutMs: 10_000 });
    let initialEventsEnd = false;
    for await (const ev of watchEvents(res)) {
      if (ev.type === 'BOOKMARK' && ev.object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true') {
        initialEventsEnd = true;
        break;
      }
    }
    expect(initialEventsEnd).toBe(true);
  });

  test('stop ends one cluster and leaves the others running', async () => {
    const apiserver = await pidOf('extra.pid');
    const kcm = await pidOf('extra-kcm.pid');
    await cp(['stop', 'extra']);
    const left = await processesUsing(dir);
    expect(left).not.toContain(apiserver);
    expect(left).not.toContain(kcm);
    const solo = await client('solo');
    await expect(solo.request({ path: '/readyz', accept: 'text/plain' })).resolves.toBe('ok');
  });

  test('a cluster that asked for any free port comes back on the same one: its kubeconfig still points there', async () => {
    const before = (await client('extra')).server.port;
    const out = await cp(['up', 'extra:0']);
    expect(String(portPrinted(out, 'extra'))).toBe(before);
    const extra = await client('extra');
    expect(extra.server.port).toBe(before);
    await expect(extra.request({ path: '/api/v1/namespaces/only-in-extra' })).resolves.toMatchObject({ metadata: { name: 'only-in-extra' } });
  });

  test('down stops everything and leaves no process behind', async () => {
    const supervisor = await pidOf('controlplane.pid');
    expect(await processesUsing(dir)).toContain(supervisor);
    await cp(['down']);
    expect(await processesUsing(dir)).toEqual([]);
    const status = await controlPlaneStatus({ dir, etcdPort: ETCD_PORT });
    expect(status.running).toBe(false);
  });
});
