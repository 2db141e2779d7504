import { describe, expect, it } from '@jest/globals';
import { inventoryOf } from '../../src/apply/inventory.js';
import { MAX_STORED_BYTES, oversized, storedBytes } from '../../src/controllers/stored-size.js';
import type { KubeObject } from '../../src/kube/resources.js';

const configMap = (i: number, bytes: number): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'app' }, data: { a: 'x'.repeat(bytes) } });
const sync = (objects: KubeObject[], status: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'syncprims.dev/v1alpha1',
  kind: 'Sync',
  metadata: { name: 'big', namespace: 'app' },
  spec: { source: { inline: objects } },
  status,
});

describe('storedBytes', () => {
  it('counts the object but its status, and each inventory entry', () => {
    const objects = [configMap(1, 10), configMap(2, 10)];
    const entries = inventoryOf(objects);
    const without = storedBytes(sync(objects), []);
    expect(storedBytes(sync(objects), entries) - without).toBe(entries.reduce((n, e) => n + e.id.length + e.v.length + 17, 0));
    // The status it has now is replaced by the one to be written: not counted.
    expect(storedBytes(sync(objects, { inventory: { entries: Array.from({ length: 1000 }, () => entries[0]) } }), [])).toBe(without);
    expect(without).toBeGreaterThan(Buffer.byteLength(JSON.stringify({ ...sync(objects), status: undefined })));
  });
});

describe('oversized', () => {
  it('lets a sync that fits go on', () => {
    const objects = Array.from({ length: 1000 }, (_, i) => configMap(i, 200));
    expect(oversized(sync(objects), inventoryOf(objects))).toBeUndefined();
  });

  it('stops one whose inventory would not fit, saying what to do', () => {
    const objects = Array.from({ length: 4000 }, (_, i) => configMap(i, 250));
    const alone = storedBytes(sync(objects), []);
    expect(alone).toBeLessThan(MAX_STORED_BYTES); // the object itself was stored
    expect(oversized(sync(objects), inventoryOf(objects))).toMatch(
      /^with the inventory of its 4000 objects this Sync would take about 1\.\d\d MiB, past the 1\.50 MiB .*; move the objects out of spec\.source\.inline/,
    );
  });

  it('advises several syncs where the objects are not inline', () => {
    const http: KubeObject = { apiVersion: 'syncprims.dev/v1alpha1', kind: 'RemoteSync', metadata: { name: 'wide' }, spec: { source: { http: { url: 'https://example.com/x.yaml' } } } };
    const entries = Array.from({ length: 10_000 }, (_, i) => ({ id: `app_${'n'.repeat(200)}-${i}__ConfigMap`, v: 'v1' }));
    expect(oversized(http, entries)).toMatch(/this RemoteSync would take .*; split the objects into several syncs$/);
  });
});
