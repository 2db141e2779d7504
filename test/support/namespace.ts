import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { clusterClient } from './controlplane.js';
import { stopOperatorsWatching } from './operator.js';

export const TEST_LABEL = 'syncprims.dev/test';

/**
 * Gives the calling test file a namespace of its own in a cluster: created in
 * beforeAll, deleted in afterAll. Returns a getter for its name.
 */
export function useTestNamespace(cluster: string, prefix: string): () => string {
  let name = '';
  beforeAll(async () => {
    const client = await clusterClient(cluster);
    await releaseStuckTestNamespaces(client);
    name = `${prefix}-${randomBytes(3).toString('hex')}`;
    await client.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [TEST_LABEL]: 'true' } } },
    });
  });
  afterAll(async () => {
    if (!name) return;
    // The file's operators of this namespace stop first: one still running could re-add a released finalizer.
    await stopOperatorsWatching(cluster, name);
    const client = await clusterClient(cluster);
    await client.request({ method: 'DELETE', path: `/api/v1/namespaces/${name}` }).catch(() => undefined);
    await releaseSyncFinalizers(client, name);
  });
  return () => {
    if (!name) throw new Error('the test namespace exists only inside tests (after beforeAll)');
    return name;
  };
}

/** How long a test namespace may take to go before it counts as stuck. */
const STUCK_AFTER_MS = 2 * 60_000;

/**
 * Test namespaces left Terminating by an earlier run that was cut short (its
 * afterAll never ran): their syncs' finalizers are released, so that the
 * namespace controller stops retrying them. The local clusters keep their
 * state between runs; without this, each interrupted run would leave the API
 * server busy for good and every later run slower.
 */
async function releaseStuckTestNamespaces(client: KubeClient): Promise<void> {
  const list = await client.request<{ items: KubeObject[] }>({ path: '/api/v1/namespaces', query: { labelSelector: `${TEST_LABEL}=true` } });
  const stuck = list.items.filter((n) => n.metadata.deletionTimestamp && Date.now() - Date.parse(n.metadata.deletionTimestamp) > STUCK_AFTER_MS);
  await Promise.all(stuck.map((n) => releaseSyncFinalizers(client, n.metadata.name!)));
  await deleteLeftoverCrds(client, new Set(list.items.map((n) => n.metadata.name!)));
}

/**
 * CRDs a test's Sync applied, left by a run cut short before the Sync was
 * deleted (its namespace went, the cluster-scoped CRD stayed): the next run's
 * Sync of the same CRD would meet an OwnershipConflict. Only CRDs whose
 * owner-namespace is a test namespace's name (`<prefix>-<6 hex>`) that no
 * longer exists: a file's own namespace exists while it runs.
 */
async function deleteLeftoverCrds(client: KubeClient, testNamespaces: Set<string>): Promise<void> {
  const crds = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const list = await client.request<{ items: KubeObject[] }>({ path: crds, query: { labelSelector: 'syncprims.dev/owner-namespace' } });
  const left = list.items.filter((c) => {
    const owner = c.metadata.labels?.['syncprims.dev/owner-namespace'] ?? '';
    return /^[a-z0-9-]+-[0-9a-f]{6}$/.test(owner) && !testNamespaces.has(owner);
  });
  await Promise.all(left.map((c) => client.request({ method: 'DELETE', path: `${crds}/${c.metadata.name}` }).catch(() => undefined)));
}

/**
 * The operator of a test has stopped by the time its namespace is deleted, so
 * nothing would remove the finalizers of the syncs left in it and the
 * namespace would stay Terminating (and its controller busy) for ever.
 */
export async function releaseSyncFinalizers(client: KubeClient, namespace: string): Promise<void> {
  for (const plural of ['syncs', 'remotesyncs', 'proxysyncs', 'fleetsyncs']) {
    const path = `/apis/syncprims.dev/v1alpha1/namespaces/${namespace}/${plural}`;
    const list = await client.request<{ items: KubeObject[] }>({ path }).catch(() => ({ items: [] as KubeObject[] }));
    await Promise.all(
      list.items
        .filter((o) => (o.metadata.finalizers ?? []).length > 0)
        .map((o) =>
          client
            .request({
              method: 'PATCH',
              path: `${path}/${o.metadata.name}`,
              contentType: 'application/merge-patch+json',
              body: { metadata: { finalizers: null } },
            })
            .catch(() => undefined),
        ),
    );
  }
}
