// Many identities on one API server, as a fleet of tenants is: what a new
// cluster's first reconcile asks of the server. Its discovery is shared by the
// identities of that server, and a ServiceAccount's objects in its own
// namespace are watched there from the first, not refused cluster-wide first.
import { beforeAll, describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import { clusterClient } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import type { LogLine, OperatorProcess } from '../support/operator.js';
import { applyRemoteSync, putKubeconfigSecret, serviceAccountKubeconfig, waitForRemoteReady } from '../support/remote.js';

let op: OperatorProcess;
let mgmt: KubeClient;
let edge1: KubeClient;
// Trace: every request the operator sends is a log line (cluster, method, path, status).
const ns = useOperatedNamespace('mgmt', 'rids', (o) => ({ client: mgmt, op } = o), ['--log-level', 'trace', '--cluster-id', 'rids']);
const edgeNs = useTestNamespace('edge-1', 'rids');
const IDENTITIES = ['tenant-a', 'tenant-b', 'tenant-c', 'tenant-d'];

beforeAll(async () => {
  edge1 = await clusterClient('edge-1');
}, 60_000);

const requestsOf = (cluster: string): LogLine[] => op.logs.filter((l) => l.msg === 'request' && l.cluster === cluster);

describe('identities of one API server', () => {
  test('namespaced ServiceAccounts: one discovery request for all of them, and each one\'s first watch in its namespace (no 403)', async () => {
    // Each a ServiceAccount of the edge namespace, allowed ConfigMaps there only: an identity (and a cluster) of its own.
    for (const name of IDENTITIES) {
      const kubeconfig = await serviceAccountKubeconfig(edge1, 'edge-1', edgeNs(), name, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }]);
      await putKubeconfigSecret(mgmt, ns(), `${name}-kubeconfig`, kubeconfig);
    }
    await Promise.all(
      IDENTITIES.map((name) =>
        applyRemoteSync(mgmt, ns(), name, {
          kubeConfig: { secretRef: { name: `${name}-kubeconfig` } },
          defaultNamespace: edgeNs(),
          source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { owner: name } }] },
        }),
      ),
    );
    for (const name of IDENTITIES) await waitForRemoteReady(mgmt, ns(), name, 'True', 'Succeeded');

    const clusters = IDENTITIES.map((name) => `${ns()}/${name}-kubeconfig`);
    const requests = clusters.flatMap(requestsOf);
    expect(new Set(requests.map((r) => r.cluster))).toEqual(new Set(clusters));
    // Discovery of what edge-1 serves (core/v1 for ConfigMaps) was asked once, by whichever identity came first.
    expect(requests.filter((r) => r.path === '/api/v1')).toHaveLength(1);
    // Nothing refused: no cluster-wide watch tried first.
    expect(requests.filter((r) => r.status === 403)).toEqual([]);
    for (const cluster of clusters) {
      const watches = requestsOf(cluster).filter((r) => String(r.query).includes('watch=1'));
      expect(watches.map((w) => w.path)).toEqual([`/api/v1/namespaces/${edgeNs()}/configmaps`]);
    }
  });

  test('a new RemoteSync\'s cluster is opened while it waits (here for a dependency): its Secret read, nothing sent to the cluster', async () => {
    const kubeconfig = await serviceAccountKubeconfig(edge1, 'edge-1', edgeNs(), 'waiter', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }]);
    await putKubeconfigSecret(mgmt, ns(), 'waiter-kubeconfig', kubeconfig);
    await applyRemoteSync(mgmt, ns(), 'waiter', {
      kubeConfig: { secretRef: { name: 'waiter-kubeconfig' } },
      dependsOn: [{ name: 'not-yet' }],
      defaultNamespace: edgeNs(),
      source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'waiter' }, data: { owner: 'waiter' } }] },
    });
    await waitForRemoteReady(mgmt, ns(), 'waiter', 'False', 'DependencyNotReady');
    // Opened without a reconcile getting that far: the one reading the Secret is the one opening it ahead.
    const cluster = `${ns()}/waiter-kubeconfig`;
    await eventually('its cluster opened', async () => (op.logs.some((l) => l.msg === 'cluster opened' && l.cluster === cluster) ? true : undefined));
    expect(requestsOf(cluster)).toEqual([]);
  });
});
