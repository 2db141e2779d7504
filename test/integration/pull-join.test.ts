// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// `syncprims join` on a cluster of this file's own (the install is
// cluster-wide: CRDs, ClusterRoles): the install's objects, accepted by a
// real API server, with the join bundle in its Secret and the Deployment
// running on it; a file that is not a join bundle is refused before anything
// is written.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { assertCliBuilt, runCli, tempDir } from '../support/cli.js';
import { closeClients, clusterClient, kubeconfigPath } from '../support/controlplane.js';
import { find } from '../support/syncs.js';

const CLUSTER = 'pull-join';
/** The operator's namespace, of this run (the cluster outlives a run). */
const SYSTEM = `join-${randomBytes(3).toString('hex')}`;
const dir = tempDir('syncprims-join-');
let client: KubeClient;

/** A join bundle as `cluster add --pull` writes it (its server is never dialled here). */
const BUNDLE = [
  'apiVersion: v1',
  'kind: Config',
  'clusters:',
  '  - name: managing-cluster',
  '    cluster:',
  '      server: https://127.0.0.1:7441',
  'users:',
  '  - name: syncprims-pull/edge-7',
  '    user:',
  '      token: not-a-real-token',
  'contexts:',
  '  - name: syncprims-pull/fleet/edge-7',
  '    context:',
  '      cluster: managing-cluster',
  '      user: syncprims-pull/edge-7',
  '      namespace: syncprims-pull-fleet-edge-7',
  'current-context: syncprims-pull/fleet/edge-7',
  '',
].join('\n');

beforeAll(async () => {
  assertCliBuilt();
  client = await clusterClient(CLUSTER);
}, 120_000);

afterAll(async () => {
  await client?.request({ method: 'DELETE', path: `/api/v1/namespaces/${SYSTEM}` }).catch(() => undefined);
  await closeClients();
});

describe('syncprims join', () => {
  test('a file that is not a join bundle is refused, and nothing is written', async () => {
    const file = path.join(dir, 'plain.yaml');
    writeFileSync(file, BUNDLE.replace('      namespace: syncprims-pull-fleet-edge-7\n', ''));
    const { code, stderr } = await runCli(['join', '--kubeconfig', kubeconfigPath(CLUSTER), '-n', SYSTEM, '--join-file', file]);
    expect(code).not.toBe(0);
    expect(stderr).toContain(`--join-file ${file} is not a join bundle`);
    expect(await find(client, `/api/v1/namespaces/${SYSTEM}`)).toBeUndefined();
  });

  test("installs the operator with the bundle in its Secret, mounted, and the flags that use it; a real API server accepts it all", async () => {
    const file = path.join(dir, 'edge-7.join.yaml');
    writeFileSync(file, BUNDLE, { mode: 0o600 });
    const { code, stdout, stderr } = await runCli(['join', '--kubeconfig', kubeconfigPath(CLUSTER), '-n', SYSTEM, '--join-file', file], { timeoutMs: 120_000 });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain(`joined: the operator in namespace ${SYSTEM} takes its assignments from https://127.0.0.1:7441 (namespace syncprims-pull-fleet-edge-7)`);
    const secret = await find<KubeObject & { data: Record<string, string> }>(client, `/api/v1/namespaces/${SYSTEM}/secrets/syncprims-upstream`);
    expect(Buffer.from(secret!.data.value!, 'base64').toString('utf8')).toBe(BUNDLE);
    const deployment = await find<{ spec: { template: { spec: { containers: { args: string[]; volumeMounts: unknown[] }[]; volumes: { name: string; secret?: { secretName: string } }[] } } } }>(
      client,
      `/apis/apps/v1/namespaces/${SYSTEM}/deployments/syncprims-operator`,
    );
    expect(deployment!.spec.template.spec.containers[0]!.args).toEqual(expect.arrayContaining(['--upstream-kubeconfig=/etc/syncprims/upstream/value', '--upstream-secret=syncprims-upstream']));
    expect(deployment!.spec.template.spec.containers[0]!.volumeMounts).toContainEqual({ name: 'upstream', mountPath: '/etc/syncprims/upstream', readOnly: true });
    expect(deployment!.spec.template.spec.volumes).toContainEqual(expect.objectContaining({ name: 'upstream', secret: expect.objectContaining({ secretName: 'syncprims-upstream' }) }));
    // A Role lets the operator's account update that Secret (its renewed token) and no other.
    const role = await find<{ rules: unknown[] }>(client, `/apis/rbac.authorization.k8s.io/v1/namespaces/${SYSTEM}/roles/syncprims-operator-upstream`);
    expect(role?.rules).toEqual([{ apiGroups: [''], resources: ['secrets'], resourceNames: ['syncprims-upstream'], verbs: ['get', 'update', 'patch'] }]);
    const binding = await find<{ subjects: unknown[] }>(client, `/apis/rbac.authorization.k8s.io/v1/namespaces/${SYSTEM}/rolebindings/syncprims-operator-upstream`);
    expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: 'syncprims-operator', namespace: SYSTEM }]);
  });
});
