// Helpers for tests of RemoteSyncs: kubeconfig Secrets of the local
// clusters, and RemoteSyncs created and waited on by name.
import { readFile } from 'node:fs/promises';
import { parse, stringify } from 'yaml';
import { API_VERSION } from '../../src/api/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { kubeconfigPath } from './controlplane.js';
import { getSync, syncPath, waitForReady, type SyncObject } from './syncs.js';

export const REMOTESYNCS = 'remotesyncs';

/** The admin kubeconfig of a local cluster (client certificate inline), as YAML, optionally changed. */
export async function kubeconfigOf(cluster: string, change: (kc: Record<string, unknown>) => void = () => {}): Promise<string> {
  const kc = parse(await readFile(kubeconfigPath(cluster), 'utf8')) as Record<string, unknown>;
  change(kc);
  return stringify(kc);
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

/** Creates or updates a RemoteSync with server-side apply (manager `test`). */
export async function applyRemoteSync(client: KubeClient, namespace: string, name: string, spec: Record<string, unknown>): Promise<SyncObject> {
  return client.request<SyncObject>({
    method: 'PATCH',
    path: syncPath(namespace, name, REMOTESYNCS),
    query: { fieldManager: 'test', force: true },
    contentType: 'application/apply-patch+yaml',
    body: { apiVersion: API_VERSION, kind: 'RemoteSync', metadata: { name, namespace }, spec },
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
