// Tenancy: with --default-service-account, syncs that name no account apply as
// that account of their namespace, so a tenant cannot escape it; and the
// tenant example (examples/tenant/) as it is written.
import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { serverSideApply } from '../../src/kube/apply.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { clusterApi, clusterClient, ROOT } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { useSyncOperator } from '../support/operator.js';
import { applyProxySync, applyRemoteSync, kubeconfigOf, putKubeconfigSecret, PROXYSYNCS, REMOTESYNCS } from '../support/remote.js';
import { applySync, eventsFor, find, waitForReady } from '../support/syncs.js';

const CLUSTER = 'mgmt';
const ACCOUNT = 'deployer';
let client: KubeClient;
const ns = useTestNamespace(CLUSTER, 'tenancy');
useSyncOperator(
  CLUSTER,
  ns,
  (c) => {
    client = c;
  },
  ['--default-service-account', ACCOUNT],
);

const clusterRole = (name: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name },
  rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
});
const configMap = (name: string, namespace: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { a: '1' } });

/** examples/tenant/team-a.yaml with team-a renamed to this test's namespace. */
function tenantExample(namespace: string): KubeObject[] {
  const text = readFileSync(path.join(ROOT, 'examples', 'tenant', 'team-a.yaml'), 'utf8').replaceAll('team-a', namespace);
  return parseAllDocuments(text, { version: '1.1' }).map((d) => d.toJS() as KubeObject);
}

const forbidden = new RegExp(`system:serviceaccount:.*:${ACCOUNT}" cannot patch resource "clusterroles"`);

describe('--default-service-account', () => {
  const escapes: string[] = [];
  afterAll(async () => {
    // Nothing should have been created; removed all the same if it was.
    for (const name of escapes) await client.request({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}` }).catch(() => undefined);
  });

  test('a Sync naming no account applies as that account of its namespace: inside it yes, a ClusterRole no', async () => {
    const escape = `${ns()}-by-default`;
    escapes.push(escape);
    // The account, its Role and RoleBinding, as the tenant example writes them.
    const { discovery } = await clusterApi(CLUSTER);
    for (const obj of tenantExample(ns()).filter((o) => ['ServiceAccount', 'Role', 'RoleBinding'].includes(o.kind))) {
      await serverSideApply(client, discovery, obj, { fieldManager: 'test', force: true });
    }
    await applySync(client, ns(), 'inside', { source: { inline: [configMap('inside', ns())] } });
    await applySync(client, ns(), 'escape-by-default', { source: { inline: [clusterRole(escape)] } });
    await waitForReady(client, ns(), 'inside', 'True', 'Succeeded');
    const refused = await waitForReady(client, ns(), 'escape-by-default', 'False', 'ApplyFailed');
    const ready = refused.status!.conditions!.find((c) => c.type === 'Ready')!;
    // The condition names the object and the verb the API server refused.
    expect(ready.message).toContain(`ClusterRole ${escape}`);
    expect(ready.message).toMatch(forbidden);
    expect((await eventsFor(client, ns(), 'escape-by-default')).find((e) => e.reason === 'ApplyFailed')?.message).toMatch(forbidden);
    expect(await find(client, `/apis/rbac.authorization.k8s.io/v1/clusterroles/${escape}`)).toBeUndefined();
  });

  test('the tenant example: "apps" applies as team-a/deployer, "escape" is refused', async () => {
    const { discovery } = await clusterApi(CLUSTER);
    // Its namespace is this test's; the Syncs name their account (deployer, as the default does).
    escapes.push(`${ns()}-everything`);
    for (const obj of tenantExample(ns()).filter((o) => o.kind !== 'Namespace')) {
      await serverSideApply(client, discovery, obj, { fieldManager: 'test', force: true });
    }
    await waitForReady(client, ns(), 'apps', 'True', 'Succeeded');
    expect(await find(client, `/api/v1/namespaces/${ns()}/configmaps/settings`)).toMatchObject({ data: { greeting: `hello from ${ns()}` } });
    const refused = await waitForReady(client, ns(), 'escape', 'False', 'ApplyFailed');
    expect(refused.status!.conditions!.find((c) => c.type === 'Ready')!.message).toMatch(forbidden);
  });

  test('in a remote cluster: a RemoteSync applies as the account of its namespace there; a ProxySync gives its remote Sync the account', async () => {
    await putKubeconfigSecret(client, ns(), 'edge-1-kubeconfig', await kubeconfigOf('edge-1'));
    const edge = await clusterClient('edge-1');
    // The account does not exist in edge-1, so it may do nothing there: the admin kubeconfig is not used as such.
    await edge.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns() } } }).catch(() => undefined);
    try {
      await applyRemoteSync(client, ns(), 'remote', { clusterRef: { name: 'edge-1' }, source: { inline: [configMap('remote', ns())] } });
      const remote = await eventually('the RemoteSync to be refused', async () => {
        const s = await client.request<{ status?: { conditions?: { type: string; reason?: string; message?: string }[] } }>({ path: `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/${REMOTESYNCS}/remote` });
        const ready = s.status?.conditions?.find((c) => c.type === 'Ready');
        return ready?.reason === 'ApplyFailed' ? ready : undefined;
      });
      expect(remote.message).toContain(`system:serviceaccount:${ns()}:${ACCOUNT}`);
      await applyProxySync(client, ns(), 'proxy', { clusterRef: { name: 'edge-1' }, template: { metadata: { namespace: ns() }, spec: { source: { inline: [] } } } });
      const remoteSync = await eventually('the remote Sync in edge-1', () => find<{ spec: { serviceAccountName?: string } }>(edge, `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/syncs/proxy`));
      expect(remoteSync.spec.serviceAccountName).toBe(ACCOUNT);
      // A template that names its account keeps it.
      await applyProxySync(client, ns(), 'proxy', { clusterRef: { name: 'edge-1' }, template: { metadata: { namespace: ns() }, spec: { source: { inline: [] }, serviceAccountName: 'own' } } });
      await eventually('the remote Sync to keep the template\'s account', async () =>
        (await find<{ spec: { serviceAccountName?: string } }>(edge, `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/syncs/proxy`))?.spec.serviceAccountName === 'own' ? true : undefined,
      );
    } finally {
      for (const plural of [PROXYSYNCS, REMOTESYNCS]) {
        const name = plural === PROXYSYNCS ? 'proxy' : 'remote';
        await client.request({ method: 'DELETE', path: `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/${plural}/${name}` }).catch(() => undefined);
      }
      await eventually('the RemoteSync and ProxySync to be gone', async () => {
        const left = await Promise.all([PROXYSYNCS, REMOTESYNCS].map((p) => find(client, `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/${p}/${p === PROXYSYNCS ? 'proxy' : 'remote'}`)));
        return left.every((o) => o === undefined) ? true : undefined;
      });
      await edge.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}` }).catch(() => undefined);
    }
  });
});
