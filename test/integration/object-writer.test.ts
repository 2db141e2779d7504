// ObjectWriter on the real API server: status written only when it changed,
// compared with our own last write while the cache lags behind it, and
// finalizers patched with optimistic concurrency.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { API_VERSION, KIND_NAMES } from '../../src/api/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject, ResourceInfo } from '../../src/kube/resources.js';
import { ObjectWriter } from '../../src/runtime/object-writer.js';
import { clusterClient, closeClients } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { useTestNamespace } from '../support/namespace.js';
import { syncPath } from '../support/syncs.js';

const CLUSTER = 'mgmt';
const SYNCS: ResourceInfo = { group: 'syncprims.dev', version: 'v1alpha1', kind: 'Sync', resource: KIND_NAMES.Sync.plural, namespaced: true };
let client: KubeClient;
const ns = useTestNamespace(CLUSTER, 'writer');

beforeAll(async () => {
  client = await clusterClient(CLUSTER);
  await installCrds(CLUSTER);
});
afterAll(closeClients);

async function createSync(name: string): Promise<KubeObject> {
  return client.request<KubeObject>({
    method: 'POST',
    path: syncPath(ns()),
    body: { apiVersion: API_VERSION, kind: 'Sync', metadata: { name }, spec: { source: { inline: [] } } },
  });
}

const status = (message: string) => ({ observedGeneration: 1, conditions: [{ type: 'Ready', status: 'Unknown', reason: 'Progressing', message, lastTransitionTime: '2026-01-01T00:00:00Z' }] });

describe('ObjectWriter', () => {
  test('writes a status only when it differs from the current one', async () => {
    const writes: KubeObject[] = [];
    const writer = new ObjectWriter(client, SYNCS, (w) => writes.push(w));
    const obj = await createSync('same');
    expect(await writer.updateStatus(obj, status('a'))).toBe(true);
    const fresh = await client.request<KubeObject>({ path: syncPath(ns(), 'same') });
    expect(await writer.updateStatus(fresh, status('a'))).toBe(false);
    expect(writes).toHaveLength(1);
    expect(writes[0]!.metadata.resourceVersion).toBe(fresh.metadata.resourceVersion);
  });

  test('its writes are answered with metadata only, and a status write replaces the whole status', async () => {
    const writes: KubeObject[] = [];
    const writer = new ObjectWriter(client, SYNCS, (w) => writes.push(w));
    const obj = await createSync('small-answers');
    expect(await writer.ensureFinalizer(obj, 'syncprims.dev/finalizer')).toBe(true);
    const withHandled = { ...status('a'), lastHandledReconcileAt: '2026-01-01T00:00:00Z' };
    expect(await writer.updateStatus(obj, withHandled)).toBe(true);
    // Neither answer carries the spec: for a sync with its objects inline, that is most of it.
    expect(writes.map((w) => [w.kind, w.spec, w.status])).toEqual([
      ['PartialObjectMetadata', undefined, undefined],
      ['PartialObjectMetadata', undefined, undefined],
    ]);
    const cached = await client.request<KubeObject>({ path: syncPath(ns(), 'small-answers') });
    expect(cached.status).toEqual(withHandled);
    expect(await writer.updateStatus(cached, status('b'))).toBe(true);
    const live = await client.request<KubeObject>({ path: syncPath(ns(), 'small-answers') });
    expect(live.status).toEqual(status('b'));
    expect(live.metadata.finalizers).toEqual(['syncprims.dev/finalizer']);
    expect(await writer.removeFinalizer(live, 'syncprims.dev/finalizer')).toBe(true);
  });

  test('while the cache lags behind its own writes, it compares with what it wrote last', async () => {
    const writer = new ObjectWriter(client, SYNCS);
    await writer.updateStatus(await createSync('lag'), status('result'));
    // The cache holds the result; a reconcile writes progress, then the same result again.
    const cached = await client.request<KubeObject>({ path: syncPath(ns(), 'lag') });
    expect(await writer.updateStatus(cached, status('progress'))).toBe(true);
    expect(await writer.updateStatus(cached, status('result'))).toBe(true);
    expect(await writer.updateStatus(cached, status('result'))).toBe(false);
    const live = await client.request<KubeObject>({ path: syncPath(ns(), 'lag') });
    expect(live.status).toMatchObject(status('result'));
  });

  test('a second finalizer add from a stale copy is not sent (it would only meet a 409)', async () => {
    const writes: KubeObject[] = [];
    const writer = new ObjectWriter(client, SYNCS, (w) => writes.push(w));
    const stale = await createSync('fin');
    expect(await writer.ensureFinalizer(stale, 'syncprims.dev/finalizer')).toBe(true);
    expect(await writer.ensureFinalizer(stale, 'syncprims.dev/finalizer')).toBe(true);
    expect(writes).toHaveLength(1);
    const live = await client.request<KubeObject>({ path: syncPath(ns(), 'fin') });
    expect(live.metadata.finalizers).toEqual(['syncprims.dev/finalizer']);
    expect(await writer.ensureFinalizer(live, 'syncprims.dev/finalizer')).toBe(false);
    expect(await writer.removeFinalizer(live, 'syncprims.dev/finalizer')).toBe(true);
    expect((await client.request<KubeObject>({ path: syncPath(ns(), 'fin') })).metadata.finalizers).toBeUndefined();
  });

  test('a finalizer patch from a copy someone else has moved past is refused with 409, not applied', async () => {
    const writer = new ObjectWriter(client, SYNCS);
    const old = await createSync('moved');
    await client.request({
      method: 'PATCH',
      path: syncPath(ns(), 'moved'),
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { touched: 'yes' } } },
    });
    await expect(writer.ensureFinalizer(old, 'syncprims.dev/finalizer')).rejects.toMatchObject({ status: 409 });
  });
});
