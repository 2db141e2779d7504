// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// The multi-tenant install (`syncprims bootstrap --multi-tenant`), on a
// cluster of this file's own: the operator runs as a local process with the
// token of the ServiceAccount the install made and the arguments its
// Deployment names, as the demo runs it. A tenant's Syncs that name no
// account apply as their namespace's `default` account: inside the namespace
// what the tenant granted it, nothing in another namespace, no
// cluster-scoped kind; the operator's own account writes none of it; and the
// bootstrap Sync still converges, as the account bootstrap made for it.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { closeClients, clusterClient, kubeconfigPath } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { bindRole } from '../support/rbac.js';
import { kubeconfigOf } from '../support/remote.js';
import { applySync, eventsFor, find, getSync, readyOf, waitForReady } from '../support/syncs.js';
import { markDeploymentAvailable } from '../support/workloads.js';

/** A cluster of this file's own: the install is cluster-wide (CRDs, ClusterRoles), and its operator watches every namespace. */
const CLUSTER = 'multi-tenant';
const SYSTEM = 'syncprims-system';
const OPERATOR = `system:serviceaccount:${SYSTEM}:syncprims-operator`;
const tenant = useTestNamespace(CLUSTER, 'mt-tenant');
const other = useTestNamespace(CLUSTER, 'mt-other');
let client: KubeClient;
let op: OperatorProcess | undefined;

const configMap = (name: string, namespace: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { a: '1' } });
const clusterRole = (name: string) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules: [] });

/** A kubeconfig of the cluster whose user is a token of the operator's ServiceAccount (as `kubectl create token`). */
async function operatorKubeconfig(): Promise<string> {
  const req = await client.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${SYSTEM}/serviceaccounts/syncprims-operator/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'multi-tenant-')), 'operator.kubeconfig');
  writeFileSync(file, await kubeconfigOf(CLUSTER, (kc) => ((kc.users as { user: unknown }[])[0]!.user = { token: req.status.token })));
  return file;
}

/** The operator's arguments as its Deployment names them, but its endpoints (the test's process listens on loopback ports of its own). */
async function deploymentArgs(): Promise<string[]> {
  type Deployment = { spec: { template: { spec: { containers: { args: string[] }[] } } } };
  const d = await client.request<Deployment>({ path: `/apis/apps/v1/namespaces/${SYSTEM}/deployments/syncprims-operator` });
  return d.spec.template.spec.containers[0]!.args.filter((a) => a !== 'run' && !/^--(metrics|health)-addr=/.test(a));
}

/** Whether the API server lets `user` do `verb` on `resource` (in `namespace`), by a SubjectAccessReview. */
async function allowed(user: string, verb: string, resource: string, namespace?: string, group = ''): Promise<boolean> {
  const review = await client.request<{ status: { allowed: boolean } }>({
    method: 'POST',
    path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, resourceAttributes: { verb, resource, group, namespace } } },
  });
  return review.status.allowed;
}

beforeAll(async () => {
  assertCliBuilt();
  client = await clusterClient(CLUSTER);
  // A cluster installed in the default mode first, switched by bootstrap --multi-tenant.
  const install = await runCli(['install', '--apply', '--kubeconfig', kubeconfigPath(CLUSTER)], { timeoutMs: 120_000 });
  if (install.code !== 0) throw new Error(`syncprims install --apply exited ${install.code}: ${install.stderr}`);
  const bootstrap = await runCli(['bootstrap', '--multi-tenant', '--kubeconfig', kubeconfigPath(CLUSTER)], { timeoutMs: 120_000 });
  if (bootstrap.code !== 0) throw new Error(`syncprims bootstrap --multi-tenant exited ${bootstrap.code}: ${bootstrap.stderr}`);
  op = await OperatorProcess.start(CLUSTER, ['--kubeconfig', await operatorKubeconfig(), ...(await deploymentArgs())]);
}, 180_000);

afterAll(async () => {
  await op?.stop('SIGTERM');
  await closeClients();
});

describe('syncprims bootstrap --multi-tenant', () => {
  test('the operator runs with the token of its ServiceAccount and the Deployment\'s --default-service-account=default', async () => {
    expect(await deploymentArgs()).toContain('--default-service-account=default');
    await op!.waitForLog('the operator to start its controllers as the ServiceAccount', (l) => l.msg === 'remote clusters' && l.defaultServiceAccount === 'default');
  });

  test('the operator\'s own account reads every kind and impersonates accounts, but writes no kind that syncs apply', async () => {
    for (const [verb, resource, group] of [
      ['create', 'configmaps', ''],
      ['patch', 'configmaps', ''],
      ['delete', 'deployments', 'apps'],
      ['patch', 'secrets', ''],
    ] as const) {
      expect(`${verb} ${resource}: ${await allowed(OPERATOR, verb, resource, tenant(), group)}`).toBe(`${verb} ${resource}: false`);
    }
    for (const [verb, resource] of [['patch', 'clusterroles'], ['create', 'clusterrolebindings'], ['patch', 'customresourcedefinitions']] as const) {
      const group = resource === 'customresourcedefinitions' ? 'apiextensions.k8s.io' : 'rbac.authorization.k8s.io';
      expect(`${verb} ${resource}: ${await allowed(OPERATOR, verb, resource, undefined, group)}`).toBe(`${verb} ${resource}: false`);
    }
    expect(await allowed(OPERATOR, 'watch', 'deployments', undefined, 'apps')).toBe(true);
    expect(await allowed(OPERATOR, 'impersonate', 'serviceaccounts', tenant())).toBe(true);
    // The default mode's apply-everything role, installed before, is gone.
    expect(await find(client, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/syncprims-apply')).toBeUndefined();
    expect(await find(client, '/apis/rbac.authorization.k8s.io/v1/clusterroles/syncprims-apply')).toBeUndefined();
  });

  test('a tenant\'s Syncs that name no account apply as its default account: its own namespace yes, another namespace no, a ClusterRole no', async () => {
    const account = `system:serviceaccount:${tenant()}:default`;
    const escape = `${tenant()}-escape`;
    // What the tenant grants its default account: ConfigMaps in its own namespace.
    await bindRole(client, tenant(), 'deployer', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }], { name: 'default', namespace: tenant() });
    await applySync(client, tenant(), 'inside', { source: { inline: [configMap('inside', tenant())] } });
    await applySync(client, tenant(), 'elsewhere', { source: { inline: [configMap('elsewhere', other())] } });
    await applySync(client, tenant(), 'cluster-scoped', { source: { inline: [clusterRole(escape)] } });
    try {
      await waitForReady(client, tenant(), 'inside', 'True', 'Succeeded');
      expect(await find(client, `/api/v1/namespaces/${tenant()}/configmaps/inside`)).toMatchObject({ data: { a: '1' } });
      for (const [name, what, refused] of [
        ['elsewhere', `ConfigMap ${other()}/elsewhere`, `User "${account}" cannot patch resource "configmaps" in API group "" in the namespace "${other()}"`],
        ['cluster-scoped', `ClusterRole ${escape}`, `User "${account}" cannot patch resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope`],
      ]) {
        const message = readyOf(await waitForReady(client, tenant(), name!, 'False', 'ApplyFailed'))!.message ?? '';
        expect(message).toContain(what);
        expect(message).toContain(refused);
        const event = await eventually(`the ApplyFailed Event of ${name}`, async () => (await eventsFor(client, tenant(), name!)).find((e) => e.reason === 'ApplyFailed'));
        expect(event.message).toContain(account);
        await op!.waitForLog(`the log line of ${name}'s refusal`, (l) => l.name === name && JSON.stringify(l).includes(account));
      }
      expect(await find(client, `/api/v1/namespaces/${other()}/configmaps/elsewhere`)).toBeUndefined();
      expect(await find(client, `/apis/rbac.authorization.k8s.io/v1/clusterroles/${escape}`)).toBeUndefined();
    } finally {
      await client.request({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/clusterroles/${escape}` }).catch(() => undefined);
    }
  });

  test('the bootstrap Sync converges as syncprims-bootstrap, and puts back an object of the operator\'s deleted from under it', async () => {
    const sync = await getSync(client, SYSTEM, 'syncprims');
    expect(sync.spec).toMatchObject({ serviceAccountName: 'syncprims-bootstrap' });
    // The local cluster runs no pods: the test plays the kubelet for the Deployment (its process stands in for the pods).
    const ready = async () => {
      await markDeploymentAvailable(client, SYSTEM, 'syncprims-operator');
      return readyOf(await getSync(client, SYSTEM, 'syncprims'))?.status === 'True' ? true : undefined;
    };
    await eventually('the bootstrap Sync to be Ready', ready, 120_000);
    const inventory = ((await getSync(client, SYSTEM, 'syncprims')).status?.inventory as { entries: { id: string }[] }).entries.map((e) => e.id);
    expect(inventory).toEqual(expect.arrayContaining(['_syncprims-read_rbac.authorization.k8s.io_ClusterRole', `${SYSTEM}_syncprims-operator_apps_Deployment`]));
    // Put back as its account (an apply that creates: SSA asks for `create`).
    await client.request({ method: 'DELETE', path: `/api/v1/namespaces/${SYSTEM}/services/syncprims-operator-metrics` });
    await eventually('the metrics Service to be put back', () => find<KubeObject>(client, `/api/v1/namespaces/${SYSTEM}/services/syncprims-operator-metrics`), 60_000);
    await eventually('the bootstrap Sync to be Ready again', ready, 60_000);
  }, 200_000);
});
