// What bench/ui.ts and bench/ui-screenshot.ts share: a control plane of their
// own (.local/bench-ui-plane, its own etcd on ETCD_PORT and the cluster
// `bench-ui` on PORT, free ports unless set: a test run that started the shared
// one in .local takes it down when it ends), the operator of the working tree
// (dist/, built by `make build`) with `--ui-addr`, Syncs created in bulk, and
// headless Chromium (test/support/browser.ts: Debian's chromium, installed
// when missing).
import { rmSync } from 'node:fs';
import path from 'node:path';
import { API_VERSION } from '../src/api/kinds.js';
import { mapLimit } from '../src/apply/map-limit.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfigFile } from '../src/kube/config.js';
import { collectionPath, type KubeObject } from '../src/kube/resources.js';
import { controlplane, installCrds, LOCAL, OperatorProcess, ROOT, SYNCS, until, type ControlPlaneDir } from './support.js';

export const CLUSTER = 'bench-ui';
const PLANE: ControlPlaneDir = { dir: path.join(LOCAL, 'bench-ui-plane'), etcdPort: Number(process.env.ETCD_PORT ?? 0) };
const PORT = Number(process.env.PORT ?? 0);
export const KUBECONFIG = path.join(PLANE.dir, `${CLUSTER}.kubeconfig`);
/** The working tree's build: the view is measured as it is now (`make bench` builds it first). */
export const MAIN = path.join(ROOT, 'dist', 'cli', 'main.js');

const cp = (args: string[]): Promise<string> => controlplane(args, PLANE);

/** Starts the plane afresh (a plane left by a run cut short goes first) and returns an admin client with the CRDs installed. */
export async function startPlane(): Promise<KubeClient> {
  await cp(['down']).catch(() => undefined);
  rmSync(PLANE.dir, { recursive: true, force: true });
  console.log(`a control plane of its own in ${path.relative(ROOT, PLANE.dir)} (ports: ${PORT ? `API server ${PORT}` : 'free ones'})...`);
  await cp(['up', `${CLUSTER}:${PORT}`]);
  const client = await KubeClient.create(CLUSTER, loadKubeConfigFile(KUBECONFIG), 'syncprims-bench-ui');
  await installCrds(client);
  return client;
}

export async function stopPlane(client: KubeClient | undefined): Promise<void> {
  client?.close();
  await cp(['down']).catch((err: unknown) => console.error(`stopping the plane: ${String(err)}`));
}

/** The operator on `namespace` with the web view on a free loopback port; resolves with it and the view's address. */
export async function operatorWithUi(namespace: string, logName: string): Promise<{ op: OperatorProcess; url: string }> {
  const op = await OperatorProcess.start({ main: MAIN, kubeconfig: KUBECONFIG, log: path.join(LOCAL, `${logName}.log`) }, namespace, ['--ui-addr', '127.0.0.1:0']);
  let url = '';
  await until('the web view to listen', async () => {
    url = (op.logsSince(0).find((l) => l.msg === 'ui listening')?.fields.url as string | undefined) ?? '';
    return url !== '';
  }, 60_000, 50);
  return { op, url };
}

export interface SyncSpec {
  name: string;
  spec: Record<string, unknown>;
  kind?: 'Sync' | 'RemoteSync' | 'FleetSync';
}

/** Creates the syncs (16 at a time) with server-side apply. */
export async function applySyncs(client: KubeClient, namespace: string, syncs: SyncSpec[]): Promise<void> {
  await mapLimit(syncs, 16, ({ name, spec, kind = 'Sync' }) =>
    client.request({
      method: 'PATCH',
      path: `/apis/${API_VERSION}/namespaces/${namespace}/${kind.toLowerCase()}s/${name}`,
      query: { fieldManager: 'bench', force: true },
      contentType: 'application/apply-patch+yaml',
      body: { apiVersion: API_VERSION, kind, metadata: { name, namespace }, spec },
    }),
  );
}

/** Waits until `count` Syncs of the namespace are Ready=True. */
export async function waitAllReady(client: KubeClient, namespace: string, count: number): Promise<void> {
  await until(`${count} Syncs Ready in ${namespace}`, async () => {
    const list = await client.request<{ items: KubeObject[] }>({ path: collectionPath(SYNCS, namespace) });
    const ready = list.items.filter((o) => (o.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    return ready.length >= count;
  }, 600_000, 500);
}

/** A ConfigMap for a sync to apply. */
export const configMap = (namespace: string, name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { a: '1' } });
