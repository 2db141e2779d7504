// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// The switches of the sync spec, each on the real control plane through a
// running operator: force, deletionPolicy, suspend, commonMetadata, prune,
// the prune opt-out annotation, ownership, and applying as a service account.
import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { schemalessCrd } from '../support/crds.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { bindRole } from '../support/rbac.js';
import { writesSince } from '../support/audit.js';
import { OWN_LANE_CLUSTER, ROOT } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import type { OperatorProcess } from '../support/operator.js';
import { applySync, deleteSyncAndWait, eventsFor, find, getSync, readyOf, syncPath, waitForReady, type SyncObject } from '../support/syncs.js';

const CLUSTER = OWN_LANE_CLUSTER;
let client: KubeClient;
let op: OperatorProcess;
const ns = useOperatedNamespace(CLUSTER, 'syncopt', (o) => ({ client, op } = o), ['--log-level', 'debug']);

const cm = (name: string, extra: Partial<KubeObject['metadata']> = {}, data: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns(), ...extra },
  data,
});
const cmPath = (name: string): string => `/api/v1/namespaces/${ns()}/configmaps/${name}`;
const gone = (path: string) => async () => ((await find(client, path)) === undefined ? true : undefined);

const deleteSync = (name: string): Promise<void> => deleteSyncAndWait(client, ns(), name);

describe('sync spec switches', () => {
  test('force recreates an object whose immutable fields changed; without it the failure says so', async () => {
    const secret = (v: string): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'frozen', namespace: ns() }, immutable: true, stringData: { v } });
    await applySync(client, ns(), 'immut', { source: { inline: [secret('1')] } });
    await waitForReady(client, ns(), 'immut', 'True');
    await applySync(client, ns(), 'immut', { source: { inline: [secret('2')] } });
    const failed = await waitForReady(client, ns(), 'immut', 'False', 'ApplyFailed');
    expect(readyOf(failed)?.message).toContain('Secret');
    expect(readyOf(failed)?.message).toContain('spec.force: true');
    const before = await find<KubeObject>(client, `/api/v1/namespaces/${ns()}/secrets/frozen`);
    await applySync(client, ns(), 'immut', { force: true, source: { inline: [secret('2')] } });
    await waitForReady(client, ns(), 'immut', 'True');
    const after = await find<KubeObject & { data: Record<string, string> }>(client, `/api/v1/namespaces/${ns()}/secrets/frozen`);
    expect(after?.metadata.uid).not.toBe(before?.metadata.uid);
    expect(Buffer.from(after?.data.v ?? '', 'base64').toString()).toBe('2');
  });

  test('deletionPolicy Delete prunes what the sync owned; Orphan leaves it', async () => {
    await applySync(client, ns(), 'del', { source: { inline: [cm('del-owned')] } });
    await applySync(client, ns(), 'orph', { deletionPolicy: 'Orphan', source: { inline: [cm('orph-owned')] } });
    await waitForReady(client, ns(), 'del', 'True');
    await waitForReady(client, ns(), 'orph', 'True');
    await deleteSync('del');
    await deleteSync('orph');
    expect(await find(client, cmPath('del-owned'))).toBeUndefined();
    expect(await find(client, cmPath('orph-owned'))).toBeDefined();
  });

  test('suspend stops reconciling and keeps Ready with reason Suspended; resuming applies the change', async () => {
    await applySync(client, ns(), 'susp', { source: { inline: [cm('susp', {}, { v: '1' })] } });
    await waitForReady(client, ns(), 'susp', 'True');
    await applySync(client, ns(), 'susp', { suspend: true, source: { inline: [cm('susp', {}, { v: '2' })] } });
    const suspended = await waitForReady(client, ns(), 'susp', 'True', 'Suspended');
    expect(suspended.status?.observedGeneration).toBe(suspended.metadata.generation);
    expect(await find(client, cmPath('susp'))).toMatchObject({ data: { v: '1' } });
    await applySync(client, ns(), 'susp', { suspend: false, source: { inline: [cm('susp', {}, { v: '2' })] } });
    await waitForReady(client, ns(), 'susp', 'True', 'Succeeded');
    expect(await find(client, cmPath('susp'))).toMatchObject({ data: { v: '2' } });
  });

  test('commonMetadata labels and annotations land on every object, beside the owner labels', async () => {
    await applySync(client, ns(), 'meta', {
      commonMetadata: { labels: { team: 'platform' }, annotations: { 'example.com/note': 'hi' } },
      source: { inline: [cm('meta-a'), cm('meta-b')] },
    });
    await waitForReady(client, ns(), 'meta', 'True');
    for (const name of ['meta-a', 'meta-b']) {
      const got = await find<KubeObject>(client, cmPath(name));
      expect(got?.metadata.labels).toMatchObject({
        team: 'platform',
        'syncprims.dev/owner-kind': 'Sync',
        'syncprims.dev/owner-namespace': ns(),
        'syncprims.dev/owner-name': 'meta',
      });
      expect(got?.metadata.annotations).toMatchObject({ 'example.com/note': 'hi' });
    }
  });

  test('prune: false keeps objects that left the set; the opt-out annotation protects one object', async () => {
    await applySync(client, ns(), 'keep', { prune: false, source: { inline: [cm('keep-1'), cm('keep-2')] } });
    await waitForReady(client, ns(), 'keep', 'True');
    await applySync(client, ns(), 'keep', { prune: false, source: { inline: [cm('keep-1')] } });
    await eventually('the new inventory', async () => {
      const s = await getSync(client, ns(), 'keep');
      return s.status?.observedGeneration === s.metadata.generation && readyOf(s)?.status === 'True' ? s : undefined;
    });
    expect(await find(client, cmPath('keep-2'))).toBeDefined();

    await applySync(client, ns(), 'optout', {
      source: { inline: [cm('optout-1', { annotations: { 'syncprims.dev/prune': 'disabled' } }), cm('optout-2')] },
    });
    await waitForReady(client, ns(), 'optout', 'True');
    await applySync(client, ns(), 'optout', { source: { inline: [] } });
    await eventually('optout-2 to be pruned', gone(cmPath('optout-2')));
    expect(await find(client, cmPath('optout-1'))).toBeDefined();
  });

  test('an object owned by another sync is left alone and reported; the rest is applied', async () => {
    await applySync(client, ns(), 'first', { source: { inline: [cm('shared', {}, { by: 'first' })] } });
    await waitForReady(client, ns(), 'first', 'True');
    await applySync(client, ns(), 'second', { source: { inline: [cm('shared', {}, { by: 'second' }), cm('second-own')] } });
    const conflict = await waitForReady(client, ns(), 'second', 'False', 'OwnershipConflict');
    expect(readyOf(conflict)?.message).toContain(`ConfigMap ${ns()}/shared is owned by Sync/${ns()}/first`);
    expect(await find(client, cmPath('shared'))).toMatchObject({ data: { by: 'first' } });
    expect(await find(client, cmPath('second-own'))).toBeDefined();
    // The owner deleted (its finalizer prunes the object): the waiting sync is woken by that deletion and
    // applies it, not at its retry (30 s after the conflict).
    const deleted = Date.now();
    await deleteSync('first');
    await waitForReady(client, ns(), 'second', 'True', 'Succeeded');
    expect(await find(client, cmPath('shared'))).toMatchObject({ data: { by: 'second' }, metadata: { labels: { 'syncprims.dev/owner-name': 'second' } } });
    // The reconcile's line trails the status it wrote: waited for.
    await op.waitForCause('Sync', ns(), 'second', `owned object released: ${ns()}_shared__ConfigMap`, deleted);
    // An object without owner labels is adopted.
    await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/configmaps`, body: cm('orphaned', {}, { v: 'old' }) });
    await applySync(client, ns(), 'adopter', { source: { inline: [cm('orphaned', {}, { v: 'new' })] } });
    await waitForReady(client, ns(), 'adopter', 'True');
    expect(await find<KubeObject>(client, cmPath('orphaned'))).toMatchObject({
      data: { v: 'new' },
      metadata: { labels: { 'syncprims.dev/owner-name': 'adopter' } },
    });
  });

  test('examples/sync-crd-and-its-objects.yaml: the Sync of a kind not served yet is applied the moment the other installs its CRD, not at its retry', async () => {
    // The example's group renamed into this run's (its CRD is cluster-scoped): no CRD of another run, or one left by a
    // run stopped midway, serves the kind already, and none is deleted from under another.
    const group = `${ns()}.shop.example.com`;
    const text = readFileSync(path.join(ROOT, 'examples', 'sync-crd-and-its-objects.yaml'), 'utf8').replaceAll('shop.example.com', group);
    const [api, widgets] = parseAllDocuments(text, { version: '1.1' }).map((d) => d.toJS() as SyncObject);
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`;
    expect(await find(client, crdPath)).toBeUndefined();
    // The example's objects into this test's namespace; the Sync of the Widget first.
    await applySync(client, ns(), widgets!.metadata.name!, { ...widgets!.spec, defaultNamespace: ns() });
    const waiting = await waitForReady(client, ns(), 'widgets', 'False', 'CRDNotInstalled');
    expect(readyOf(waiting)?.message).toContain('Widget');
    // No dependsOn between the two: the CRD's arrival is what wakes the waiting Sync.
    const installed = Date.now();
    await applySync(client, ns(), api!.metadata.name!, api!.spec);
    await waitForReady(client, ns(), 'widgets-api', 'True');
    await waitForReady(client, ns(), 'widgets', 'True', 'Succeeded');
    expect(await find(client, `/apis/${group}/v1/namespaces/${ns()}/widgets/front-door`)).toMatchObject({ spec: { size: 3 } });
    await op.waitForCause('Sync', ns(), 'widgets', `CRD established: widgets.${group}`, installed);
    // The CRD goes with the Sync that installed it; the Sync of its objects first.
    await deleteSync('widgets');
    await deleteSync('widgets-api');
    await eventually('the CRD to be pruned', gone(crdPath));
  });

  test('a Sync whose source kind is not served yet (its CRD, as Flux\'s, not installed) is woken the moment the CRD is Established', async () => {
    const group = `${ns()}.artifacts.example.com`;
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/bundles.${group}`;
    await applySync(client, ns(), 'bundle-user', { source: { artifact: { apiVersion: `${group}/v1`, kind: 'Bundle', name: 'b1' } } });
    const waiting = await waitForReady(client, ns(), 'bundle-user', 'False', 'SourceError');
    expect(readyOf(waiting)?.message).toContain(`does not serve Bundle in ${group}/v1`);
    const installed = Date.now();
    await client.request({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: schemalessCrd(group, 'Bundle', 'bundles') });
    try {
      // Served now, its object is missing: the Sync says so (and that object's arrival wakes it, as any source object's does).
      await eventually('the Sync to say the Bundle is missing', async () => (/not found/.test(readyOf(await getSync(client, ns(), 'bundle-user'))?.message ?? '') ? true : undefined));
      await op.waitForCause('Sync', ns(), 'bundle-user', `CRD established: bundles.${group}`, installed);
    } finally {
      await deleteSync('bundle-user');
      await client.request({ method: 'DELETE', path: crdPath });
    }
  });

  test('a Sync into a namespace that does not exist yet is applied the moment another Sync creates it, not at its retry', async () => {
    const later = `${ns()}-later`;
    await applySync(client, ns(), 'ns-user', { source: { inline: [{ ...cm('in-later', {}, { v: '1' }), metadata: { name: 'in-later', namespace: later } }] } });
    const waiting = await waitForReady(client, ns(), 'ns-user', 'False', 'ApplyFailed');
    expect(readyOf(waiting)?.message).toContain(`namespaces "${later}" not found`);
    const created = Date.now();
    await applySync(client, ns(), 'ns-maker', { source: { inline: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: later } }] } });
    await waitForReady(client, ns(), 'ns-user', 'True', 'Succeeded');
    expect(await find(client, `/api/v1/namespaces/${later}/configmaps/in-later`)).toMatchObject({ data: { v: '1' } });
    await op.waitForCause('Sync', ns(), 'ns-user', `namespace created: ${later}`, created);
    await deleteSync('ns-user');
    await deleteSync('ns-maker');
  });

  test('a deletion whose prune is refused says so on the Sync (PruneFailed, an Event) and finishes once allowed', async () => {
    await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/serviceaccounts`, body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'keeper' } } });
    const verbs = ['get', 'list', 'watch', 'create', 'patch', 'update'];
    await bindRole(client, ns(), 'keeper', [{ apiGroups: [''], resources: ['configmaps'], verbs }], { name: 'keeper', namespace: ns() });
    await applySync(client, ns(), 'kept', { serviceAccountName: 'keeper', source: { inline: [cm('kept-1')] } });
    await waitForReady(client, ns(), 'kept', 'True');
    await client.request({ method: 'DELETE', path: syncPath(ns(), 'kept') });
    const waiting = await waitForReady(client, ns(), 'kept', 'False', 'PruneFailed');
    expect(readyOf(waiting)?.message).toMatch(/^deletion waits: pruning on deletion failed: .*cannot delete resource "configmaps"/);
    await eventually('a PruneFailed Event', async () => (await eventsFor(client, ns(), 'kept')).find((e) => e.reason === 'PruneFailed' && e.message.startsWith('deletion waits: ')));
    expect(await find(client, cmPath('kept-1'))).toBeDefined();
    await client.request({
      method: 'PATCH',
      path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns()}/roles/keeper`,
      contentType: 'application/merge-patch+json',
      body: { rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: [...verbs, 'delete'] }] },
    });
    await eventually('the Sync gone once its prune is allowed', gone(syncPath(ns(), 'kept')));
    expect(await find(client, cmPath('kept-1'))).toBeUndefined();
  });

  test('with serviceAccountName, applying and pruning are done as that account and bounded by its RBAC', async () => {
    await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/serviceaccounts`, body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'tenant' } } });
    const rules = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'update'] }];
    await bindRole(client, ns(), 'tenant', rules, { name: 'tenant', namespace: ns() });
    await applySync(client, ns(), 'tenant', { serviceAccountName: 'tenant', source: { inline: [cm('tenant-1'), cm('tenant-2')] } });
    await waitForReady(client, ns(), 'tenant', 'True');
    // The role grants no delete: pruning is refused, reported, and nothing is deleted.
    await applySync(client, ns(), 'tenant', { serviceAccountName: 'tenant', source: { inline: [cm('tenant-1')] } });
    const refused = await waitForReady(client, ns(), 'tenant', 'False', 'PruneFailed');
    expect(readyOf(refused)?.message).toContain('system:serviceaccount');
    expect(readyOf(refused)?.message).toContain('cannot delete resource "configmaps"');
    expect(await find(client, cmPath('tenant-2'))).toBeDefined();
    // Nor can it create what its role does not allow.
    await applySync(client, ns(), 'tenant-secret', {
      serviceAccountName: 'tenant',
      source: { inline: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'nope', namespace: ns() } }] },
    });
    const forbidden = await waitForReady(client, ns(), 'tenant-secret', 'False', 'ApplyFailed');
    expect(readyOf(forbidden)?.message).toContain(`Secret ${ns()}/nope`);
    expect(readyOf(forbidden)?.message).toContain('forbidden');
    expect(await find(client, `/api/v1/namespaces/${ns()}/secrets/nope`)).toBeUndefined();
    // Granting delete lets the prune through.
    await client.request({
      method: 'PATCH',
      path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns()}/roles/tenant`,
      contentType: 'application/merge-patch+json',
      body: { rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'] }] },
    });
    await applySync(client, ns(), 'tenant', { serviceAccountName: 'tenant', source: { inline: [cm('tenant-1')] } }, {
      annotations: { 'syncprims.dev/reconcile-requested-at': 'granted' },
    });
    await eventually('tenant-2 to be pruned as the service account', gone(cmPath('tenant-2')));
    await eventually('a PruneFailed Event', async () =>
      (await eventsFor(client, ns(), 'tenant')).some((e) => e.reason === 'PruneFailed') || undefined,
    );
    // Deleting the Sync prunes what it owns, as the service account too.
    const since = new Date(Date.now() - 1000);
    await client.request({ method: 'DELETE', path: syncPath(ns(), 'tenant') });
    await eventually('tenant-1 to be pruned on deletion', gone(cmPath('tenant-1')));
    const deletes = (await writesSince(CLUSTER, since, 'syncprims-operator')).filter(
      (w) => w.verb === 'delete' && w.objectRef?.resource === 'configmaps' && w.objectRef.name === 'tenant-1',
    );
    expect(deletes.map((d) => d.impersonatedUser?.username)).toEqual([`system:serviceaccount:${ns()}:tenant`]);
  });
});
