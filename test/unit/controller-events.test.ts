// Which informer events of a sync object queue a reconcile (runtime/controller.ts needsReconcile).
import { describe, expect, test } from '@jest/globals';
import type { KubeObject } from '../../src/kube/resources.js';
import { needsReconcile } from '../../src/runtime/controller.js';
import type { InformerEvent } from '../../src/runtime/informer.js';

const FINALIZER = 'syncprims.dev/finalizer';

function sync(meta: Partial<KubeObject['metadata']> = {}, status?: unknown): KubeObject {
  return { apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 's', namespace: 'n', generation: 1, ...meta }, status } as KubeObject;
}

const updated = (old: KubeObject, object: KubeObject): InformerEvent<KubeObject> => ({ type: 'updated', old, object });

describe('needsReconcile', () => {
  test('additions and deletions always; a status change alone never', () => {
    expect(needsReconcile({ type: 'added', object: sync() }, FINALIZER)).toBe(true);
    expect(needsReconcile({ type: 'deleted', object: sync() }, FINALIZER)).toBe(true);
    expect(needsReconcile(updated(sync({}, { a: 1 }), sync({}, { a: 2 })), FINALIZER)).toBe(false);
  });

  test('spec, labels, annotations and deletion changes do', () => {
    expect(needsReconcile(updated(sync(), sync({ generation: 2 })), FINALIZER)).toBe(true);
    expect(needsReconcile(updated(sync(), sync({ labels: { a: 'b' } })), FINALIZER)).toBe(true);
    expect(needsReconcile(updated(sync(), sync({ annotations: { a: 'b' } })), FINALIZER)).toBe(true);
    expect(needsReconcile(updated(sync(), sync({ deletionTimestamp: '2026-11-26T00:00:00Z' })), FINALIZER)).toBe(true);
  });

  test('our finalizer added (our own patch coming back) does not; taken away (to be put back) does', () => {
    expect(needsReconcile(updated(sync(), sync({ finalizers: [FINALIZER] })), FINALIZER)).toBe(false);
    expect(needsReconcile(updated(sync({ finalizers: [FINALIZER] }), sync({ finalizers: [] })), FINALIZER)).toBe(true);
    expect(needsReconcile(updated(sync({ finalizers: [FINALIZER] }), sync({ finalizers: [FINALIZER, 'other'] })), FINALIZER)).toBe(false);
  });

  test('without a finalizer of its own, any change of the list does', () => {
    expect(needsReconcile(updated(sync(), sync({ finalizers: ['other'] })))).toBe(true);
    expect(needsReconcile(updated(sync({ finalizers: ['other'] }), sync({ finalizers: ['other'] })))).toBe(false);
  });
});
