// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// Real 429s: an API Priority and Fairness configuration gives the operator's
// user (a service account, so not exempt like system:masters) a tiny share of
// the server's concurrency and rejects the rest. The operator must absorb the
// 429s (backing off as Retry-After says) and still converge.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { API_VERSION, FINALIZER } from '../../src/api/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { closeClients, clusterClient, kubeconfigPath, OWN_LANE_CLUSTER } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { createSyncs } from '../support/syncs.js';

const CLUSTER = OWN_LANE_CLUSTER;
const FLOWCONTROL = '/apis/flowcontrol.apiserver.k8s.io/v1';
const cleanups: (() => Promise<unknown>)[] = [];
let client: KubeClient;
let dir = '';

beforeAll(async () => {
  client = await clusterClient(CLUSTER);
  await installCrds(CLUSTER);
  dir = await mkdtemp(path.join(tmpdir(), 'syncprims-apf-'));
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
  await closeClients();
});

/** A kubeconfig for a cluster-admin service account, authenticated by a bound token. */
async function serviceAccountKubeconfig(namespace: string, name: string): Promise<string> {
  await client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts`,
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
  });
  const binding = `${namespace}-${name}`;
  await client.request({
    method: 'POST',
    path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: binding },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  });
  cleanups.push(() => client.request({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${binding}` }));
  const token = await client.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const admin = await readFile(kubeconfigPath(CLUSTER), 'utf8');
  const ca = /certificate-authority-data: (\S+)/.exec(admin)?.[1];
  const server = /server: (\S+)/.exec(admin)?.[1];
  const file = path.join(dir, `${name}.kubeconfig`);
  await writeFile(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: ${CLUSTER}, cluster: {server: "${server}", certificate-authority-data: "${ca}"}}]`,
      `users: [{name: ${name}, user: {token: "${token.status.token}"}}]`,
      `contexts: [{name: ${CLUSTER}, context: {cluster: ${CLUSTER}, user: ${name}}}]`,
      `current-context: ${CLUSTER}`,
    ].join('\n'),
  );
  return file;
}

/** A priority level with the smallest share and no queueing, for one service account. */
async function throttle(namespace: string, serviceAccount: string): Promise<void> {
  const name = `syncprims-test-${namespace}`;
  await client.request({
    method: 'POST',
    path: `${FLOWCONTROL}/prioritylevelconfigurations`,
    body: {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name },
      spec: {
        type: 'Limited',
        limited: { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } },
      },
    },
  });
  cleanups.push(() => client.request({ method: 'DELETE', path: `${FLOWCONTROL}/prioritylevelconfigurations/${name}` }));
  await client.request({
    method: 'POST',
    path: `${FLOWCONTROL}/flowschemas`,
    body: {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name },
      spec: {
        priorityLevelConfiguration: { name },
        matchingPrecedence: 100,
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects: [{ kind: 'ServiceAccount', serviceAccount: { name: serviceAccount, namespace } }],
            resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
            nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
          },
        ],
      },
    },
  });
  cleanups.push(() => client.request({ method: 'DELETE', path: `${FLOWCONTROL}/flowschemas/${name}` }));
}

describe('API Priority and Fairness rejections', () => {
  const ns = useTestNamespace(CLUSTER, 'apf');

  test('the operator absorbs real 429s, honours Retry-After, and converges', async () => {
    const count = 300;
    const names = Array.from({ length: count }, (_, i) => `apf-${i}`);
    await createSyncs(client, ns(), names, () => ({ source: { inline: [] } }));
    const kubeconfig = await serviceAccountKubeconfig(ns(), 'operator');
    await throttle(ns(), 'operator');
    // The later --kubeconfig wins over the admin one OperatorProcess passes.
    const throttled = await OperatorProcess.start(CLUSTER, ['--namespace', ns(), '--concurrency', '32', '--kubeconfig', kubeconfig]);
    cleanups.push(() => throttled.stop('SIGKILL'));

    await eventually(
      `all ${count} Syncs reconciled`,
      async () => {
        const list = await client.request<{ items: KubeObject[] }>({ path: `/apis/${API_VERSION}/namespaces/${ns()}/syncs` });
        const done = list.items.filter(
          (s) =>
            s.metadata.finalizers?.includes(FINALIZER) &&
            (s.status as { observedGeneration?: number } | undefined)?.observedGeneration === s.metadata.generation,
        );
        return done.length === count ? true : undefined;
      },
      240_000,
    );
    const rejected = await throttled.metric('syncprims_cluster_requests_total', { code: '429' });
    expect(rejected).toBeGreaterThan(0);
    expect(await throttled.metric('workqueue_retries_total', { name: 'sync' })).toBeGreaterThan(0);
    expect(await throttled.stop('SIGTERM')).toBe(0);
    // Rejections were absorbed, never logged as failures of the operator.
    expect(throttled.logs.filter((l) => l.level === 'error')).toEqual([]);
  });
});
