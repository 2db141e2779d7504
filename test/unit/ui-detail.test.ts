// The web view's detail of a selected sync, read from the operator's caches
// (given here as stores), and where the view listens.
import { describe, expect, test } from '@jest/globals';
import type { KubeObject } from '../../src/kube/resources.js';
import { ObjectStore } from '../../src/runtime/store.js';
import { syncDetail, type DetailSources } from '../../src/ui/detail.js';
import { uiListenAddr } from '../../src/ui/server.js';

const deployment = (available: boolean): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'apps', generation: 1 },
  spec: { replicas: 1 },
  status: available
    ? { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1, conditions: [{ type: 'Available', status: 'True' }] }
    : { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 0, availableReplicas: 0 },
});

function sources(objects: KubeObject[], events: KubeObject[] | Error = []): DetailSources & { peeked: string[] } {
  const store = new ObjectStore();
  for (const o of objects) store.upsert(o);
  const peeked: string[] = [];
  return {
    peeked,
    peek: async (apiVersion, kind, selector) => {
      peeked.push(`${apiVersion}|${kind}|${selector.labelSelector}|${selector.allNamespaces}`);
      return apiVersion === 'apps/v1' && kind === 'Deployment' ? { store } : undefined;
    },
    events: async () => {
      if (events instanceof Error) throw events;
      return events;
    },
  };
}

const sync = (kind: string, status: Record<string, unknown>, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'syncprims.dev/v1alpha1',
  kind,
  metadata: { name: 'app', namespace: 'apps', generation: 2 },
  spec,
  status: { observedGeneration: 2, ...status },
});

const inventory = { entries: [{ id: 'apps_web_apps_Deployment', v: 'v1' }, { id: 'apps_gone_apps_Deployment', v: 'v1' }, { id: 'apps_cm__ConfigMap', v: 'v1' }] };

describe('syncDetail', () => {
  test("a Sync's objects with their kstatus from the owned-object cache (the operator's selector); kinds not cached say so", async () => {
    const src = sources([deployment(false)]);
    const d = await syncDetail(sync('Sync', { inventory }), src);
    expect(d.inventory.map((i) => [i.apiVersion, i.kind, i.name, i.status])).toEqual([
      ['apps/v1', 'Deployment', 'web', 'InProgress'],
      ['apps/v1', 'Deployment', 'gone', 'NotFound'],
      ['v1', 'ConfigMap', 'cm', 'NotCached'],
    ]);
    expect(src.peeked).toEqual(['apps/v1|Deployment|syncprims.dev/owner-kind|true', 'v1|ConfigMap|syncprims.dev/owner-kind|true']);
    const ready = await syncDetail(sync('Sync', { inventory }), sources([deployment(true)]));
    expect(ready.inventory[0]!.status).toBe('Current');
    expect(ready).toMatchObject({ key: 'Sync/apps/app', generation: 2, observedGeneration: 2, inventoryTotal: 3 });
  });

  test("a RemoteSync's objects are in its cluster, a ProxySync's in its remote Sync: never looked up here", async () => {
    const src = sources([deployment(true)]);
    const remote = await syncDetail(sync('RemoteSync', { inventory }, { kubeConfig: { secretRef: { name: 'edge' } } }), src);
    expect(remote.inventory.every((i) => i.status === 'NotCached')).toBe(true);
    expect(remote).toMatchObject({ cluster: 'edge', inventoryNote: expect.stringContaining('remote cluster') });
    const summary = { total: 3, current: 3, inProgress: 0, failed: 0, terminating: 0, notFound: 0, unknown: 0 };
    const proxy = await syncDetail(sync('ProxySync', { summary, remote: { cluster: 'edge-2', namespace: 'app', name: 'app' } }, { clusterRef: { name: 'edge-2' } }), src);
    expect(proxy).toMatchObject({ summary, remote: { cluster: 'edge-2' }, inventory: [], inventoryNote: expect.stringContaining('mirrored') });
    expect(src.peeked).toEqual([]);
  });

  test('the recent Events, newest first; an Event list that cannot be read is said, not thrown', async () => {
    const ev = (reason: string, at: string): KubeObject => ({ apiVersion: 'v1', kind: 'Event', metadata: { name: reason }, reason, type: 'Normal', message: reason, lastTimestamp: at } as KubeObject);
    const d = await syncDetail(sync('Sync', {}), sources([], [ev('Old', '2030-01-01T00:00:00Z'), ev('New', '2030-01-02T00:00:00Z')]));
    expect(d.events.map((e) => e.reason)).toEqual(['New', 'Old']);
    const failed = await syncDetail(sync('Sync', {}), sources([], new Error('forbidden')));
    expect(failed).toMatchObject({ events: [], eventsError: 'forbidden' });
  });
});

describe('uiListenAddr', () => {
  test('a port alone, or with an empty host, is loopback; a host named is kept', () => {
    expect(uiListenAddr('8082')).toEqual({ host: '127.0.0.1', port: 8082 });
    expect(uiListenAddr(':8082')).toEqual({ host: '127.0.0.1', port: 8082 });
    expect(uiListenAddr('0.0.0.0:9000')).toEqual({ host: '0.0.0.0', port: 9000 });
    expect(() => uiListenAddr('x:y')).toThrow('bad port');
  });
});
