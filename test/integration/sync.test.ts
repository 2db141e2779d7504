// Sync end to end through a running operator on the real control plane:
// staged apply, edits, prune, drift, health, and the spec's switches.
import { describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { eventually } from '../support/eventually.js';
import { schemalessCrd } from '../support/crds.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { deploymentOf, markDeploymentAvailable } from '../support/workloads.js';
import { OperatorProcess } from '../support/operator.js';
import { applySync, deleteSyncAndWait, eventsFor, find, getSync, readyOf, waitForReady } from '../support/syncs.js';

const CLUSTER = 'mgmt';
let client: KubeClient;
let op: OperatorProcess;
const ns = useOperatedNamespace(CLUSTER, 'sync', (o) => ({ client, op } = o));

const cm = (name: string, namespace: string | undefined, data: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: namespace ? { name, namespace } : { name },
  data,
});

/** A pruned object is gone, or on its way (a CRD or Namespace has finalizers of its own). */
async function stateOf(path: string): Promise<'gone' | 'terminating' | 'still there'> {
  const obj = await find<KubeObject>(client, path);
  return obj === undefined ? 'gone' : obj.metadata.deletionTimestamp ? 'terminating' : 'still there';
}

describe('apply, edit, prune, drift', () => {
  test('a CRD, its custom resource, a Namespace and objects in it become Ready in one reconcile', async () => {
    const group = `${ns()}.sync.test`;
    const target = `${ns()}-app`;
    const crd = schemalessCrd(group, 'Widget', 'widgets');
    // Listed in the "wrong" order on purpose: the engine stages CRDs and Namespaces first.
    const objects = [
      { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1', namespace: target }, spec: { size: 2 } },
      cm('settings', target, { a: '1' }),
      crd,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: target } },
    ];
    await applySync(client, ns(), 'stack', { source: { inline: objects } });
    const ready = await waitForReady(client, ns(), 'stack', 'True', 'Succeeded');
    expect(ready.status?.inventory?.entries.map((e) => e.id)).toEqual(
      [`${target}_settings__ConfigMap`, `${target}_w1_${group}_Widget`, `_${target}__Namespace`, `_widgets.${group}_apiextensions.k8s.io_CustomResourceDefinition`].sort(),
    );
    expect(ready.status?.lastAppliedRevision).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(ready.status?.summary).toMatchObject({ total: 4, current: 4, leastStatus: 'Current' });
    expect(await find(client, `/apis/${group}/v1/namespaces/${target}/widgets/w1`)).toMatchObject({ spec: { size: 2 } });
    // One reconcile applied it all: no failed attempt on the way.
    expect(await op.metric('controller_runtime_reconcile_errors_total', { controller: 'sync' })).toBe(0);
    const applied = await eventually('an Applied Event', async () =>
      (await eventsFor(client, ns(), 'stack')).find((e) => e.reason === 'Applied'),
    );
    expect(applied.message).toContain('4 created');

    // Edit the source: the change is applied and the revision moves on.
    objects[1] = cm('settings', target, { a: '2' });
    await applySync(client, ns(), 'stack', { source: { inline: objects } });
    const edited = await eventually('the edit to be applied', async () => {
      const s = await getSync(client, ns(), 'stack');
      return s.status?.lastAppliedRevision !== ready.status?.lastAppliedRevision && readyOf(s)?.status === 'True' ? s : undefined;
    });
    expect(edited.status?.lastAttemptedRevision).toBe(edited.status?.lastAppliedRevision);
    expect(await find(client, `/api/v1/namespaces/${target}/configmaps/settings`)).toMatchObject({ data: { a: '2' } });

    // Remove an object: it is pruned.
    await applySync(client, ns(), 'stack', { source: { inline: objects.filter((o) => o.kind !== 'Widget') } });
    await eventually('the Widget to be pruned', async () =>
      (await find(client, `/apis/${group}/v1/namespaces/${target}/widgets/w1`)) === undefined ? true : undefined,
    );
    const after = await waitForReady(client, ns(), 'stack', 'True');
    expect(after.status?.inventory?.entries).toHaveLength(3);

    // Change an object by hand: corrected at once on request.
    await client.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${target}/configmaps/settings`,
      contentType: 'application/merge-patch+json',
      body: { data: { a: 'tampered' } },
    });
    await applySync(client, ns(), 'stack', { source: { inline: objects.filter((o) => o.kind !== 'Widget') } }, {
      annotations: { 'syncprims.dev/reconcile-requested-at': 'now-1' },
    });
    await eventually('the drift to be corrected', async () => {
      const got = await find<{ data: Record<string, string> }>(client, `/api/v1/namespaces/${target}/configmaps/settings`);
      return got?.data.a === '2' ? true : undefined;
    });
    const handled = await eventually('lastHandledReconcileAt', async () => {
      const s = await getSync(client, ns(), 'stack');
      return s.status?.lastHandledReconcileAt === 'now-1' ? s : undefined;
    });
    expect(readyOf(handled)?.status).toBe('True');

    // Deleted, it prunes what it applied, the cluster-scoped CRD and Namespace too.
    await deleteSyncAndWait(client, ns(), 'stack');
    expect(await stateOf(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`)).not.toBe('still there');
    expect(await stateOf(`/api/v1/namespaces/${target}`)).not.toBe('still there');
  });

  test('objects are read from the watches, not fetched: one PATCH per new object, no request per unchanged one', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `counted-${i}`);
    // A first Sync of ConfigMaps starts the watch of owned ConfigMaps, so the count below is the steady case.
    await applySync(client, ns(), 'counted-warmup', { source: { inline: [cm('counted-warmup', ns())] } });
    await waitForReady(client, ns(), 'counted-warmup', 'True');
    const requests = async (method: string, code?: string) =>
      op.metric('syncprims_cluster_requests_total', code ? { method, code } : { method });
    const before = { get: await requests('GET'), created: await requests('PATCH', '201'), patched: await requests('PATCH', '200') };
    await applySync(client, ns(), 'counted', { source: { inline: names.map((n) => cm(n, ns())) } });
    await waitForReady(client, ns(), 'counted', 'True');
    expect((await requests('PATCH', '201')) - before.created).toBe(names.length);
    // No GET per object: only what the reconcile itself reads (none, here) and nothing per object.
    expect((await requests('GET')) - before.get).toBeLessThan(5);

    const mid = { get: await requests('GET'), patched: await requests('PATCH', '200') };
    await applySync(client, ns(), 'counted', { source: { inline: names.map((n) => cm(n, ns())) } }, {
      annotations: { 'syncprims.dev/reconcile-requested-at': 'count-1' },
    });
    await eventually('the requested reconcile', async () =>
      (await getSync(client, ns(), 'counted')).status?.lastHandledReconcileAt === 'count-1' ? true : undefined,
    );
    // Only the status write: unchanged objects are decided from the cache (our managedFields entry
    // and the live values), with no dry run, no GET and no real write. The status write is seen on
    // the server a moment before the operator counts its response.
    const patched = await eventually('the status write to be counted', async () => {
      const n = (await requests('PATCH', '200')) - mid.patched;
      return n >= 1 ? n : undefined;
    });
    expect(patched).toBe(1);
    expect((await requests('GET')) - mid.get).toBeLessThan(5);
    expect(before.patched).toBeGreaterThan(0);
  });

  test('a CRD whose kind the set does not use is not waited on; one it uses is', async () => {
    const crd = (plural: string, kind: string, group: string) => schemalessCrd(group, kind, plural);
    const group = `${ns()}.crdwait.test`;
    const gets = () => op.metric('syncprims_cluster_requests_total', { method: 'GET' });
    // Warm up the watches of CRDs and ConfigMaps, so that what follows counts only the waits.
    await applySync(client, ns(), 'crd-warmup', { source: { inline: [crd('warmups', 'Warmup', group), cm('crd-warmup', ns())] } });
    await waitForReady(client, ns(), 'crd-warmup', 'True');

    let before = await gets();
    await applySync(client, ns(), 'crd-unused', { source: { inline: [crd('gadgets', 'Gadget', group), cm('crd-unused', ns())] } });
    await waitForReady(client, ns(), 'crd-unused', 'True');
    expect((await gets()) - before).toBe(0);

    before = await gets();
    await applySync(client, ns(), 'crd-used', {
      source: { inline: [crd('gizmos', 'Gizmo', group), { apiVersion: `${group}/v1`, kind: 'Gizmo', metadata: { name: 'g1', namespace: ns() } }] },
    });
    await waitForReady(client, ns(), 'crd-used', 'True');
    // Waiting for Established reads the CRD; discovery is read again for the new kind.
    expect((await gets()) - before).toBeGreaterThan(0);
    // Their CRDs are cluster-scoped: pruned, not left behind by the run.
    for (const name of ['crd-warmup', 'crd-unused', 'crd-used']) await deleteSyncAndWait(client, ns(), name);
    for (const plural of ['warmups', 'gadgets', 'gizmos']) expect(await stateOf(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${plural}.${group}`)).not.toBe('still there');
  });

  test('drift is corrected within the interval', async () => {
    await applySync(client, ns(), 'drifty', { interval: '2s', source: { inline: [cm('drifty', ns(), { v: 'good' })] } });
    await waitForReady(client, ns(), 'drifty', 'True');
    await client.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${ns()}/configmaps/drifty`,
      contentType: 'application/merge-patch+json',
      body: { data: { v: 'bad' } },
    });
    await eventually('the interval resync to correct it', async () => {
      const got = await find<{ data: Record<string, string> }>(client, `/api/v1/namespaces/${ns()}/configmaps/drifty`);
      return got?.data.v === 'good' ? true : undefined;
    }, 30_000);
  });
});

describe('health', () => {
  const deployment = (name: string): KubeObject => deploymentOf(name, ns());

  test('a Deployment goes from InProgress to Current when its status says so (the test plays the controllers)', async () => {
    await applySync(client, ns(), 'web', { timeout: '5m', source: { inline: [deployment('web')] } });
    // Past "applying revision ...": applied, and waiting for health.
    const waiting = await eventually('the Sync to wait for the Deployment', async () => {
      const s = await getSync(client, ns(), 'web');
      return readyOf(s)?.reason === 'Progressing' && readyOf(s)?.message.startsWith('waiting for') ? s : undefined;
    });
    expect(readyOf(waiting)?.message).toContain(`Deployment ${ns()}/web (InProgress)`);
    expect(waiting.status?.summary).toMatchObject({ inProgress: 1, leastStatus: 'InProgress' });
    const before = await op.metric('controller_runtime_reconcile_total', { controller: 'sync' });

    await markDeploymentAvailable(client, ns(), 'web');
    const ready = await waitForReady(client, ns(), 'web', 'True', 'Succeeded', 30_000);
    expect(ready.status?.summary).toMatchObject({ current: 1, leastStatus: 'Current' });
    // Woken by the watch, not by polling: a handful of reconciles, not one per tick.
    const after = await op.metric('controller_runtime_reconcile_total', { controller: 'sync' });
    expect(after - before).toBeLessThan(6);
  });

  test('a Deployment that never becomes ready ends in HealthCheckFailed naming it', async () => {
    await applySync(client, ns(), 'stuck', { timeout: '3s', source: { inline: [deployment('stuck')] } });
    const failed = await waitForReady(client, ns(), 'stuck', 'False', 'HealthCheckFailed', 60_000);
    expect(readyOf(failed)?.message).toContain(`Deployment ${ns()}/stuck`);
    expect(readyOf(failed)?.message).toContain('timed out after 3s');
    // The Event follows the status write.
    await eventually('a HealthCheckFailed Event', async () =>
      (await eventsFor(client, ns(), 'stuck')).some((e) => e.reason === 'HealthCheckFailed' && e.type === 'Warning') || undefined,
    );
  });
});
