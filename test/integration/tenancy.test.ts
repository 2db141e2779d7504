// Tenancy: with --default-service-account, syncs that name no account apply as
// that account of their namespace, so a tenant cannot escape it; the tenant
// example (examples/tenant/) as it is written; and an operator of one namespace
// (--namespace) is not woken by what the syncs of other namespaces own.
import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { FIELD_MANAGER, OWNER_KIND_LABEL, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL } from '../../src/api/marks.js';
import { serverSideApply } from '../../src/kube/apply.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { clusterApi, clusterClient, ROOT } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { bindRole, PROXYSYNC_WRITER_RULES } from '../support/rbac.js';
import type { OperatorProcess } from '../support/operator.js';
import { applyProxySync, applyRemoteSync, kubeconfigOf, putKubeconfigSecret, PROXYSYNCS, REMOTESYNCS } from '../support/remote.js';
import { applySync, eventsFor, find, waitForReady } from '../support/syncs.js';

const CLUSTER = 'mgmt';
const ACCOUNT = 'deployer';
let client: KubeClient;
let op: OperatorProcess;
/** Another tenant's namespace, whose syncs this file's operator does not reconcile. */
const other = useTestNamespace(CLUSTER, 'tenancy-other');
const ns = useOperatedNamespace(CLUSTER, 'tenancy', (o) => ({ client, op } = o), ['--default-service-account', ACCOUNT, '--log-level', 'debug']);

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

/** The account, its Role and RoleBinding, as the tenant example writes them. */
async function applyAccount(): Promise<void> {
  const { discovery } = await clusterApi(CLUSTER);
  for (const obj of tenantExample(ns()).filter((o) => ['ServiceAccount', 'Role', 'RoleBinding'].includes(o.kind))) {
    await serverSideApply(client, discovery, obj, { fieldManager: 'test', force: true });
  }
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
    await applyAccount();
    await applySync(client, ns(), 'inside', { source: { inline: [configMap('inside', ns())] } });
    await applySync(client, ns(), 'escape-by-default', { source: { inline: [clusterRole(escape)] } });
    await waitForReady(client, ns(), 'inside', 'True', 'Succeeded');
    const refused = await waitForReady(client, ns(), 'escape-by-default', 'False', 'ApplyFailed');
    const ready = refused.status!.conditions!.find((c) => c.type === 'Ready')!;
    // The condition names the object and the verb the API server refused.
    expect(ready.message).toContain(`ClusterRole ${escape}`);
    expect(ready.message).toMatch(forbidden);
    // The Event follows the status write.
    const event = await eventually('the ApplyFailed Event', async () => (await eventsFor(client, ns(), 'escape-by-default')).find((e) => e.reason === 'ApplyFailed'));
    expect(event.message).toMatch(forbidden);
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

  test('in a remote cluster: a RemoteSync applies as the account of its namespace there; a ProxySync writes its remote Sync as the account, and gives it the account', async () => {
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
      // The ProxySync writes there as the account (the template's, else the default): both may write its Sync in edge-1.
      await bindRole(edge, ns(), 'proxysync-writer', PROXYSYNC_WRITER_RULES, { name: ACCOUNT, namespace: ns() });
      await bindRole(edge, ns(), 'proxysync-writer-own', PROXYSYNC_WRITER_RULES, { name: 'own', namespace: ns() });
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

describe('--namespace', () => {
  test('changes of objects that syncs of another namespace own (hand edits too) wake nothing here; a change of our own is corrected', async () => {
    await applyAccount();
    await applySync(client, ns(), 'mine', { source: { inline: [configMap('mine', ns())] } });
    await waitForReady(client, ns(), 'mine', 'True', 'Succeeded');
    // Another tenant's objects, applied as our field manager with its Sync's labels, then changed by hand:
    // the operator's cluster-wide watch of ConfigMaps (it must see every owned object) brings every change.
    const { discovery } = await clusterApi(CLUSTER);
    const labels = { [OWNER_KIND_LABEL]: 'Sync', [OWNER_NAMESPACE_LABEL]: other(), [OWNER_NAME_LABEL]: 'theirs' };
    const theirs = Array.from({ length: 5 }, (_, i) => ({ ...configMap(`theirs-${i}`, other()), metadata: { name: `theirs-${i}`, namespace: other(), labels } }));
    for (const obj of theirs) await serverSideApply(client, discovery, obj, { fieldManager: FIELD_MANAGER, force: true });
    for (const obj of theirs) {
      await client.request({
        method: 'PATCH',
        path: `/api/v1/namespaces/${other()}/configmaps/${obj.metadata.name}`,
        query: { fieldManager: 'kubectl-patch' },
        contentType: 'application/merge-patch+json',
        body: { data: { a: 'changed by hand' } },
      });
    }
    // Then one of ours: the same watch brings it after theirs, and its correction shows they were all heard.
    const mine = `/api/v1/namespaces/${ns()}/configmaps/mine`;
    await client.request({ method: 'PATCH', path: mine, query: { fieldManager: 'kubectl-patch' }, contentType: 'application/merge-patch+json', body: { data: { a: 'changed by hand' } } });
    await eventually('our ConfigMap to be corrected', async () => ((await find<{ data: { a: string } }>(client, mine))?.data.a === '1' ? true : undefined));
    await op.settledReconciles('Sync', ns(), 'mine');
    // No line at all about the other namespace: no reconcile of its Sync, no drift of its objects.
    expect(op.logs.filter((l) => l.namespace === other())).toEqual([]);
    // Theirs are left as they are: not ours to correct.
    expect(await find(client, `/api/v1/namespaces/${other()}/configmaps/theirs-0`)).toMatchObject({ data: { a: 'changed by hand' } });
  });
});
