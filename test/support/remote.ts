// Helpers for tests of RemoteSyncs: kubeconfig Secrets of the local
// clusters, and RemoteSyncs created and waited on by name.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll } from '@jest/globals';
import { parse, stringify } from 'yaml';
import { API_VERSION } from '../../src/api/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { clusterClient, ensureClusters, kubeconfigPath, kubeconfigViaPort } from './controlplane.js';
import { bindRole } from './rbac.js';
import { StallingProxy } from './stalling-proxy.js';
import { getSync, syncPath, waitForReady, type SyncObject } from './syncs.js';

export const REMOTESYNCS = 'remotesyncs';
export const PROXYSYNCS = 'proxysyncs';
export const FLEETSYNCS = 'fleetsyncs';

/** The admin kubeconfig of a local cluster (started if needed; client certificate inline), as YAML, optionally changed. */
export async function kubeconfigOf(cluster: string, change: (kc: Record<string, unknown>) => void = () => {}): Promise<string> {
  await ensureClusters([cluster]);
  const kc = parse(await readFile(kubeconfigPath(cluster), 'utf8')) as Record<string, unknown>;
  change(kc);
  return stringify(kc);
}

/**
 * A cluster the calling file (or describe block) can take down without
 * stopping a shared one: a StallingProxy in front of the API server of
 * `cluster`, started before its tests and closed after, and a kubeconfig
 * naming the proxy. `proxy().down()` closes every connection and refuses new
 * ones, as the port of a stopped API server does; `proxy().up()` reopens it.
 */
export function useClusterProxy(cluster: string): { proxy: () => StallingProxy; kubeconfig: () => Promise<string> } {
  let proxy: StallingProxy | undefined;
  beforeAll(async () => {
    proxy = await StallingProxy.start(Number((await clusterClient(cluster)).server.port));
  });
  afterAll(async () => proxy?.close());
  const started = (): StallingProxy => {
    if (!proxy) throw new Error(`the proxy in front of ${cluster} exists only inside tests (after beforeAll)`);
    return proxy;
  };
  return { proxy: started, kubeconfig: async () => kubeconfigViaPort(cluster, started().port).exportConfig() };
}

/**
 * A ServiceAccount `name` in `namespace` of the local cluster `cluster`
 * (reached by `client`), allowed `rules` in that namespace only (none: no
 * rights at all), and the cluster's kubeconfig with a token of it as the user.
 */
export async function serviceAccountKubeconfig(client: KubeClient, cluster: string, namespace: string, name: string, rules: unknown[] = []): Promise<string> {
  const base = `/api/v1/namespaces/${namespace}/serviceaccounts`;
  await client.request({ method: 'POST', path: base, body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } } });
  if (rules.length > 0) await bindRole(client, namespace, name, rules, { name, namespace });
  const req = await client.request<{ status: { token: string } }>({
    method: 'POST',
    path: `${base}/${name}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  return kubeconfigOf(cluster, (kc) => {
    const users = kc.users as { user: Record<string, unknown> }[];
    users[0]!.user = { token: req.status.token };
  });
}

/** Creates or replaces a Secret holding `kubeconfig` under `key`. */
export async function putKubeconfigSecret(client: KubeClient, namespace: string, name: string, kubeconfig: string, key = 'value'): Promise<void> {
  await client.request({
    method: 'PATCH',
    path: `/api/v1/namespaces/${namespace}/secrets/${name}`,
    query: { fieldManager: 'test', force: true },
    contentType: 'application/apply-patch+yaml',
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, data: { [key]: Buffer.from(kubeconfig).toString('base64') } },
  });
}

/**
 * Creates (or relabels: server-side apply) a kubeconfig Secret `secret` (default `<cluster>-kubeconfig`) of the local
 * cluster `edge`, labelled into the namespace's inventory as `cluster`.
 */
export async function registerCluster(client: KubeClient, namespace: string, cluster: string, edge: string, labels: Record<string, string> = {}, secret = `${cluster}-kubeconfig`): Promise<void> {
  await applyClusterSecret(client, namespace, { cluster, edge, labels, secret });
}

/**
 * `registerCluster` with the cluster's values (the annotations `values.syncprims.dev/<key>`): server-side apply, so a
 * value given before and not now is removed.
 */
export async function registerClusterWithValues(client: KubeClient, namespace: string, cluster: string, edge: string, labels: Record<string, string>, values: Record<string, string>): Promise<void> {
  const annotations = Object.fromEntries(Object.entries(values).map(([k, v]) => [`values.syncprims.dev/${k}`, v]));
  await applyClusterSecret(client, namespace, { cluster, edge, labels, secret: `${cluster}-kubeconfig`, annotations });
}

async function applyClusterSecret(
  client: KubeClient,
  namespace: string,
  { cluster, edge, labels, secret, annotations }: { cluster: string; edge: string; labels: Record<string, string>; secret: string; annotations?: Record<string, string> },
): Promise<void> {
  await client.request({
    method: 'PATCH',
    path: `/api/v1/namespaces/${namespace}/secrets/${secret}`,
    query: { fieldManager: 'test', force: true },
    contentType: 'application/apply-patch+yaml',
    body: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: secret, namespace, labels: { 'syncprims.dev/cluster': cluster, ...labels }, ...(annotations && { annotations }) },
      data: { value: Buffer.from(await kubeconfigOf(edge)).toString('base64') },
    },
  });
}

/**
 * The fleet the FleetSync tests roll out to: `east` (edge-1) and `west` (edge-2) in the namespace's inventory, labelled
 * by region (and `labels`), and `edgeNamespace` created in edge-2 (edge-1's is the file's remote namespace).
 */
export async function registerEastAndWest(
  client: KubeClient,
  namespace: string,
  edgeNamespace: string,
  labels: { east?: Record<string, string>; west?: Record<string, string> } = {},
): Promise<void> {
  await registerCluster(client, namespace, 'east', 'edge-1', { region: 'east', ...labels.east });
  await registerCluster(client, namespace, 'west', 'edge-2', { region: 'west', ...labels.west });
  const edge2 = await clusterClient('edge-2');
  await edge2.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: edgeNamespace } } });
}

/** Creates or updates a RemoteSync with server-side apply (manager `test`). */
export function applyRemoteSync(client: KubeClient, namespace: string, name: string, spec: Record<string, unknown>): Promise<SyncObject> {
  return applyKind(client, 'RemoteSync', REMOTESYNCS, namespace, name, spec);
}

/** Creates or updates a FleetSync with server-side apply (manager `test`). */
export function applyFleetSync(client: KubeClient, namespace: string, name: string, spec: Record<string, unknown>): Promise<SyncObject> {
  return applyKind(client, 'FleetSync', FLEETSYNCS, namespace, name, spec);
}

/** Creates or updates a ProxySync with server-side apply (manager `test`). */
export function applyProxySync(client: KubeClient, namespace: string, name: string, spec: Record<string, unknown>): Promise<SyncObject> {
  return applyKind(client, 'ProxySync', PROXYSYNCS, namespace, name, spec);
}

function applyKind(client: KubeClient, kind: string, plural: string, namespace: string, name: string, spec: Record<string, unknown>): Promise<SyncObject> {
  return client.request<SyncObject>({
    method: 'PATCH',
    path: syncPath(namespace, name, plural),
    query: { fieldManager: 'test', force: true },
    contentType: 'application/apply-patch+yaml',
    body: { apiVersion: API_VERSION, kind, metadata: { name, namespace }, spec },
  });
}

export function getRemoteSync(client: KubeClient, namespace: string, name: string): Promise<SyncObject> {
  return getSync(client, namespace, name, REMOTESYNCS);
}

/** Waits until the RemoteSync's Ready condition has this status (and reason) for its current generation. */
export function waitForRemoteReady(
  client: KubeClient,
  namespace: string,
  name: string,
  status: 'True' | 'False' | 'Unknown',
  reason?: string,
  timeoutMs = 60_000,
): Promise<SyncObject> {
  return waitForReady(client, namespace, name, status, reason, timeoutMs, REMOTESYNCS);
}
