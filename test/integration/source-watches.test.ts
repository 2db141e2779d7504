// SourceWatches on the real API server: one watch by name per object that
// sources read, shared by the syncs reading it, and stopped once none does.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import { ClusterCache } from '../../src/runtime/cache.js';
import { SourceWatches } from '../../src/controllers/source-watches.js';
import { clusterApi, closeClients } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';

const CLUSTER = 'mgmt';
let client: KubeClient;
let cache: ClusterCache;
const ns = useTestNamespace(CLUSTER, 'srcwatch');

beforeAll(async () => {
  const api = await clusterApi(CLUSTER);
  client = api.client;
  cache = new ClusterCache(api.client, api.discovery);
});
afterAll(async () => {
  await cache.stop();
  await closeClients();
});

const ref = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns(), name });

async function writeConfigMap(name: string, v: string): Promise<void> {
  await client.request({
    method: 'PATCH',
    path: `/api/v1/namespaces/${ns()}/configmaps/${name}`,
    query: { fieldManager: 'test', force: true },
    contentType: 'application/apply-patch+yaml',
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns() }, data: { v } },
  });
}

describe('SourceWatches', () => {
  test('a watch is shared by its readers, follows a change of source, and stops when nobody reads', async () => {
    const woken: string[] = [];
    const watches = new SourceWatches(cache, (key) => woken.push(key));
    // Watched before the ConfigMap exists: its creation wakes the reader.
    await watches.watch('s/one', ref('a'));
    await watches.watch('s/two', ref('a'));
    expect(watches.size).toBe(1);
    expect(cache.size).toBe(1);
    await writeConfigMap('a', '1');
    await eventually('both readers woken by the creation', async () => (woken.includes('s/one') && woken.includes('s/two') ? true : undefined));

    // s/two moves to another ConfigMap; s/one still reads a.
    await watches.watch('s/two', ref('b'));
    expect(watches.size).toBe(2);
    woken.length = 0;
    await writeConfigMap('a', '2');
    await eventually('s/one woken by a', async () => (woken.includes('s/one') ? true : undefined));
    expect(woken).not.toContain('s/two');

    // Nobody reads a: its watch ends (and with it, its informer in the cache).
    await watches.forget('s/one');
    expect(watches.size).toBe(1);
    expect(cache.size).toBe(1);
    // s/two reads an inline source now: nothing is watched.
    await watches.watch('s/two', undefined);
    expect(watches.size).toBe(0);
    expect(cache.size).toBe(0);
    woken.length = 0;
    await writeConfigMap('a', '3');
    await writeConfigMap('b', '1');
    // A later event of ours, through a fresh watch, shows the old ones would have been delivered by now.
    await watches.watch('s/three', ref('c'));
    await writeConfigMap('c', '1');
    await eventually('s/three woken', async () => (woken.includes('s/three') ? true : undefined));
    expect(woken.filter((k) => k !== 's/three')).toEqual([]);
  });
});
