// The far side of a test file whose RemoteSyncs and ProxySyncs reach another
// local cluster: the namespace named as the file's own there, the CRDs, an
// operator of that cluster if the file wants one, and their cleanup.
import { afterAll, beforeAll } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import { clusterClient } from './controlplane.js';
import { installCrds } from './crds.js';
import { releaseSyncFinalizers } from './namespace.js';
import { OperatorProcess } from './operator.js';

export interface RemoteNamespaceOptions {
  /** Create the namespace before the tests (false: a sync of the test applies it). Default true. */
  create?: boolean;
  /** Start an operator of that cluster watching the namespace, with these more flags (absent: none runs there). */
  operator?: string[];
  /** Receives an admin client of that cluster and its operator (when one was asked for). */
  ready?: (client: KubeClient, op: OperatorProcess | undefined) => void;
}

/**
 * For the calling file: syncprims' CRDs in `cluster` and the namespace named
 * `ns()` there (the file's test namespace in its home cluster), and with
 * `operator` an operator of `cluster` watching it, before the tests. After
 * them, that operator stops, the namespace is deleted and the finalizers of
 * the syncs left in it are released (nothing else would release them).
 */
export function useRemoteNamespace(cluster: string, ns: () => string, opts: RemoteNamespaceOptions = {}): void {
  let client: KubeClient | undefined;
  let op: OperatorProcess | undefined;
  beforeAll(async () => {
    client = await clusterClient(cluster);
    await installCrds(cluster);
    if (opts.create ?? true) {
      await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns() } } });
    }
    if (opts.operator) op = await OperatorProcess.start(cluster, ['--namespace', ns(), ...opts.operator]);
    opts.ready?.(client, op);
  }, 120_000);
  afterAll(async () => {
    await op?.stop('SIGTERM');
    if (!client) return;
    await client.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}` }).catch(() => undefined);
    await releaseSyncFinalizers(client, ns());
  });
}
