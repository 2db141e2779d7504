// The test harness's view of the local control plane (controlplane/): which
// clusters run, starting the ones a test needs, and clients for them by name.
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfigFile } from '../../src/kube/config.js';
import { Discovery } from '../../src/kube/discovery.js';
import { KubeConfig } from '../../src/kube/kubeconfig.js';
import { controlplane, controlPlaneStatus, LOCAL, STARTED_FILE } from './controlplane-cli.js';

export { controlplane, controlPlaneStatus, LOCAL, ROOT, CONTROLPLANE } from './controlplane-cli.js';
export type { ClusterStatus, ControlPlaneOptions } from './controlplane-cli.js';

/**
 * Starts the named clusters unless they run already (reusing what is up).
 * `featureGates` maps a cluster to its gates, e.g. `{ nowl: 'WatchList=false' }`.
 */
export async function ensureClusters(names: string[], featureGates: Record<string, string> = {}): Promise<void> {
  const status = await controlPlaneStatus();
  const up = new Set(status.clusters.filter((c) => c.running).map((c) => c.name));
  const missing = names.filter((n) => !up.has(n));
  if (missing.length === 0) return;
  const gates = missing.filter((n) => featureGates[n]).flatMap((n) => ['--feature-gates', `${n}=${featureGates[n]}`]);
  await controlplane(['up', ...missing, ...gates]);
  await appendFile(STARTED_FILE, missing.map((n) => `${n}\n`).join(''));
}

export function kubeconfigPath(cluster: string, dir = LOCAL): string {
  return path.join(dir, `${cluster}.kubeconfig`);
}

/** A local cluster's admin kubeconfig, pointed at 127.0.0.1:`port` (a proxy in front of its API server). */
export function kubeconfigViaPort(cluster: string, port: number): KubeConfig {
  const kc = loadKubeConfigFile(kubeconfigPath(cluster));
  const out = new KubeConfig();
  out.loadFromOptions({
    clusters: kc.clusters.map((c) => ({ ...c, server: `https://127.0.0.1:${port}` })),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return out;
}

/**
 * The cluster of the own lane (test/support/lanes-runner.js): files marked
 * `// Lane: own clusters` that would otherwise load mgmt, restart its API
 * server or count its requests in the audit log use it, one file at a time,
 * while the shared lane's files use mgmt, edge-1 and edge-2.
 */
export const OWN_LANE_CLUSTER = 'own-lane';

const clients = new Map<string, Promise<KubeClient>>();

/** An admin client for a local cluster by name (started if needed). */
export function clusterClient(cluster: string): Promise<KubeClient> {
  let client = clients.get(cluster);
  if (!client) {
    client = ensureClusters([cluster]).then(() => KubeClient.fromFile(cluster, kubeconfigPath(cluster)));
    clients.set(cluster, client);
  }
  return client;
}

/** The client and a discovery of its own, for tests that apply objects. */
export async function clusterApi(cluster: string): Promise<{ client: KubeClient; discovery: Discovery }> {
  const client = await clusterClient(cluster);
  return { client, discovery: new Discovery(client) };
}

/** Closes the keep-alive sockets of every client made here (call in afterAll). */
export async function closeClients(): Promise<void> {
  for (const c of clients.values()) (await c.catch(() => undefined))?.close();
  clients.clear();
}
