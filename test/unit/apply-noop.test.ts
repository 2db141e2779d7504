import { describe, expect, test } from '@jest/globals';
import { DriftLedger, backoffMs, driftOf } from '../../src/apply/drift.js';
import { backedOffNote } from '../../src/controllers/sync-drift.js';
import { changersOf, displayPath, lostFields, type FieldSet } from '../../src/apply/managed-fields.js';
import { decideNoop } from '../../src/apply/noop.js';
import type { KubeObject } from '../../src/kube/resources.js';

// Field sets as the API server wrote them for these objects (kube-apiserver 1.36, checked by hand).
const cmFields: FieldSet = { 'f:data': { 'f:a': {}, 'f:b': {} }, 'f:metadata': { 'f:annotations': { 'f:x': {} }, 'f:labels': { 'f:a': {} } } };

function entry(fieldsV1: FieldSet, extra: Record<string, unknown> = {}) {
  return { manager: 'syncprims', operation: 'Apply', apiVersion: 'v1', time: '2026-11-23T17:20:16Z', fieldsV1, ...extra };
}

function cm(data: Record<string, string>, managedFields?: unknown[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'probe', namespace: 'ns', labels: { a: 'b' }, annotations: { x: 'z' }, ...(managedFields ? { managedFields } : {}) },
    data,
  };
}

const rendered = cm({ a: '1', b: '2' });

describe('decideNoop', () => {
  test('our fields, our values: a no-op', () => {
    expect(decideNoop(rendered, cm({ a: '1', b: '2' }, [entry(cmFields)]))).toEqual({ noop: true });
  });

  test('fields others added that we do not set do not matter', () => {
    const live = cm({ a: '1', b: '2', c: 'theirs' }, [entry(cmFields), { manager: 'kubectl-patch', operation: 'Update', fieldsV1: { 'f:data': { 'f:c': {} } } }]);
    live.metadata.labels = { a: 'b', other: 'x' };
    expect(decideNoop(rendered, live).noop).toBe(true);
  });

  test('a value taken by another manager is drift, named by path', () => {
    const live = cm({ a: '9', b: '2' }, [entry({ ...cmFields, 'f:data': { 'f:b': {} } })]);
    const d = decideNoop(rendered, live);
    expect(d.noop).toBe(false);
    expect(d.noop ? [] : d.differs.map(displayPath)).toEqual(['.data.a']);
  });

  test('a value that differs while still ours (the server normalised it, or we changed it) is not a no-op', () => {
    expect(decideNoop(rendered, cm({ a: '1', b: '3' }, [entry(cmFields)])).noop).toBe(false);
  });

  test('a field we own but no longer set: not a no-op, and certainly a change (the apply removes it, or our ownership)', () => {
    const d = decideNoop(cm({ a: '1' }), cm({ a: '1', b: '2' }, [entry(cmFields)]));
    expect(d.noop ? [] : d.differs.map(displayPath)).toEqual(['.data.b']);
  });

  test('what cannot be told is unsure, not a change: no entry of ours, a value where we own an object', () => {
    const none = decideNoop(rendered, cm({ a: '1', b: '2' }));
    expect(none).toMatchObject({ noop: false, differs: [] });
    const shape = decideNoop(rendered, cm({ a: '1', b: '2' }, [entry({ ...cmFields, 'f:data': { 'f:a': { 'f:x': {} }, 'f:b': {} } })]));
    expect(shape).toMatchObject({ noop: false, differs: [] });
  });

  test('no entry of ours, another apiVersion, or an entry of another operation: not a no-op', () => {
    expect(decideNoop(rendered, cm({ a: '1', b: '2' })).noop).toBe(false);
    expect(decideNoop(rendered, cm({ a: '1', b: '2' }, [entry(cmFields, { apiVersion: 'v2' })])).noop).toBe(false);
    expect(decideNoop(rendered, cm({ a: '1', b: '2' }, [entry(cmFields, { operation: 'Update' })])).noop).toBe(false);
  });

  const deployment = (ports: unknown[], args: unknown[]): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'ns' },
    spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx', args, ports }] } } },
  });
  const deploymentFields = (portKey: string): FieldSet => ({
    'f:spec': {
      'f:template': {
        'f:spec': {
          'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:name': {}, 'f:image': {}, 'f:args': {}, 'f:ports': { [portKey]: { '.': {}, 'f:containerPort': {}, 'f:protocol': {} } } } },
        },
      },
    },
  });
  const withFields = (obj: KubeObject, fields: FieldSet): KubeObject => ({ ...obj, metadata: { ...obj.metadata, managedFields: [entry(fields, { apiVersion: 'apps/v1' })] } });

  test('associative lists are matched by key; atomic lists by value', () => {
    const ours = deployment([{ containerPort: 80, protocol: 'TCP' }], ['a', 'b']);
    const fields = deploymentFields('k:{"containerPort":80,"protocol":"TCP"}');
    expect(decideNoop(ours, withFields(deployment([{ containerPort: 80, protocol: 'TCP' }], ['a', 'b']), fields)).noop).toBe(true);
    expect(decideNoop(ours, withFields(deployment([{ containerPort: 80, protocol: 'TCP' }], ['b', 'a']), fields)).noop).toBe(false);
    expect(decideNoop(ours, withFields(deployment([{ containerPort: 80, protocol: 'UDP' }], ['a', 'b']), fields)).noop).toBe(false);
  });

  test('an item key the server defaulted (protocol) is not matched: unsure, not a no-op', () => {
    const ours = deployment([{ containerPort: 80 }], ['a']);
    const live = withFields(deployment([{ containerPort: 80, protocol: 'TCP' }], ['a']), deploymentFields('k:{"containerPort":80,"protocol":"TCP"}'));
    expect(decideNoop(ours, live).noop).toBe(false);
  });

  test('sets compare items and order', () => {
    const role = (finalizers: string[], fields: string[]): KubeObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x', finalizers, managedFields: [entry({ 'f:metadata': { 'f:finalizers': Object.fromEntries(fields.map((f) => [`v:"${f}"`, {}])) } })] },
    });
    const ours: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', finalizers: ['a', 'b'] } };
    expect(decideNoop(ours, role(['a', 'b'], ['a', 'b'])).noop).toBe(true);
    expect(decideNoop(ours, role(['a', 'b', 'c'], ['a', 'b'])).noop).toBe(true);
    expect(decideNoop(ours, role(['a'], ['a'])).noop).toBe(false);
  });

  test('an empty object or list we set and own (the server keeps none): a no-op; null never is', () => {
    const live = cm({}, [entry({ 'f:data': {}, 'f:metadata': cmFields['f:metadata']! })]);
    delete live.data;
    expect(decideNoop({ ...rendered, data: {} }, live).noop).toBe(true);
    expect(decideNoop({ ...rendered, data: {} }, { ...live, data: { theirs: 'x' } }).noop).toBe(true);
    const emptied = decideNoop({ ...rendered, data: {} }, cm({ a: '1' }, [entry({ 'f:data': { 'f:a': {} }, 'f:metadata': cmFields['f:metadata']! })]));
    expect(emptied.noop ? [] : emptied.differs.map(displayPath)).toEqual(['.data']);
    expect(decideNoop({ ...rendered, data: {} }, cm({}, [entry({ 'f:metadata': cmFields['f:metadata']! })])).noop).toBe(false);
    expect(decideNoop({ ...rendered, data: { a: null } as unknown as Record<string, string> }, cm({}, [entry(cmFields)])).noop).toBe(false);
  });
});

describe('drift from managedFields', () => {
  const before = cm({ a: '1', b: '2' }, [entry(cmFields)]);

  test('fields our entry lost while its time stayed: drift, with the managers that own them now', () => {
    const after = cm({ a: '9', b: '2' }, [
      entry({ ...cmFields, 'f:data': { 'f:b': {} } }),
      { manager: 'kubectl-patch', operation: 'Update', apiVersion: 'v1', time: '2026-11-23T17:21:00Z', fieldsV1: { 'f:data': { 'f:a': {} } } },
    ]);
    expect(driftOf(before, after)).toEqual({ id: 'ns_probe__ConfigMap', fields: ['.data.a'], managers: ['kubectl-patch'] });
  });

  test('a field removed (nobody owns it): the managers that wrote last are named', () => {
    const after = cm({ a: '1', b: '2' }, [
      entry({ ...cmFields, 'f:metadata': { 'f:annotations': { 'f:x': {} } } }),
      { manager: 'old', operation: 'Update', time: '2026-11-23T17:20:59Z', fieldsV1: {} },
      { manager: 'kubectl-label', operation: 'Update', time: '2026-11-23T17:21:00Z', fieldsV1: {} },
    ]);
    expect(driftOf(before, after)?.fields).toEqual(['.metadata.labels.a']);
    expect(driftOf(before, after)?.managers).toEqual(['kubectl-label']);
  });

  test('our own apply (our entry moved in time) is not drift; nor is an entry that did not shrink', () => {
    expect(driftOf(before, cm({ a: '1' }, [entry({ 'f:data': { 'f:a': {} } }, { time: '2026-11-23T17:30:00Z' })]))).toBeUndefined();
    expect(driftOf(before, cm({ a: '1', b: '2' }, [entry(cmFields)]))).toBeUndefined();
    expect(driftOf(cm({ a: '1' }), cm({ a: '2' }))).toBeUndefined();
  });

  test('our entry gone entirely (all fields taken): drift of every field', () => {
    const after = cm({ a: '1', b: '2' }, [{ manager: 'other', operation: 'Apply', time: '2026-11-23T17:21:00Z', fieldsV1: cmFields }]);
    expect(driftOf(before, after)?.fields).toEqual(['.data.a', '.data.b', '.metadata.annotations.x', '.metadata.labels.a']);
    expect(driftOf(before, after)?.managers).toEqual(['other']);
  });

  test('lostFields, changersOf and paths', () => {
    expect(lostFields({ 'f:a': { 'f:b': {}, 'f:c': {} } }, { 'f:a': { 'f:c': {} } })).toEqual([['f:a', 'f:b']]);
    expect(changersOf(cm({}, [{ manager: 'x', fieldsV1: { 'f:a': {} } }]), [['f:a']])).toEqual(['x']);
    // An HPA changes replicas through the scale subresource: its entry names it.
    expect(changersOf(cm({}, [{ manager: 'hpa', operation: 'Update', subresource: 'scale', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }]), [['f:spec', 'f:replicas']])).toEqual(['hpa']);
    expect(displayPath(['f:spec', 'f:containers', 'k:{"name":"web"}', 'f:image'])).toBe('.spec.containers[name=web].image');
    expect(displayPath(['f:metadata', 'f:labels', 'f:app.kubernetes.io/name'])).toBe('.metadata.labels["app.kubernetes.io/name"]');
  });
});

describe('DriftLedger', () => {
  const drift = { id: 'ns_a__ConfigMap', fields: ['.data.a'], managers: ['fighter'] };

  test('the first correction is at once; repeated ones back off exponentially up to the interval', () => {
    const ledger = new DriftLedger();
    let now = 0;
    const times: number[] = [];
    // A fighter re-sets the field every 100 ms for 60 s.
    for (; now < 60_000; now += 100) {
      ledger.flag('Sync/ns/s', drift);
      const { due } = ledger.take('Sync/ns/s', 20_000, now);
      for (const d of due) {
        ledger.corrected(d.id, 20_000, now);
        times.push(now);
      }
    }
    expect(times).toEqual([0, 1000, 3000, 7000, 15_000, 31_000, 51_000]);
    expect(backoffMs(10, 20_000)).toBe(20_000);
  });

  test('what is not due stays, with the wait until it is; a quiet object starts again at once', () => {
    const ledger = new DriftLedger();
    ledger.corrected(drift.id, 60_000, 0);
    ledger.flag('Sync/ns/s', drift);
    expect(ledger.take('Sync/ns/s', 60_000, 400)).toEqual({ due: [], waitMs: 600 });
    expect(ledger.waiting('Sync/ns/s', drift.id)).toEqual(drift);
    expect(ledger.waiting('Sync/ns/other', drift.id)).toBeUndefined();
    expect(ledger.waitingOf('Sync/ns/s')).toEqual([drift]);
    expect(ledger.waitingOf('Sync/ns/other')).toEqual([]);
    expect(ledger.take('Sync/ns/s', 60_000, 1000).due).toEqual([drift]);
    expect(ledger.waiting('Sync/ns/s', drift.id)).toBeUndefined();
    expect(ledger.waitingOf('Sync/ns/s')).toEqual([]);
    expect(ledger.corrected(drift.id, 60_000, 1000).count).toBe(2);
    expect(ledger.corrected(drift.id, 60_000, 100_000)).toEqual({ count: 1, nextMs: 1000 });
  });

  test('a deletion replaces the changes flagged before it; a gone owner leaves nothing pending', () => {
    const ledger = new DriftLedger();
    const deleted = { id: drift.id, fields: [], managers: [], deleted: true as const };
    ledger.flag('Sync/ns/s', drift);
    ledger.flag('Sync/ns/s', deleted);
    expect(ledger.take('Sync/ns/s', 60_000, 0).due).toEqual([deleted]);
    ledger.flag('Sync/ns/s', deleted);
    ledger.forgetOwner('Sync/ns/s');
    expect(ledger.take('Sync/ns/s', 60_000, 0)).toEqual({ due: [] });
  });
});

describe('backedOffNote', () => {
  const changed = (name: string, managers: string[]) => ({ id: `ns_${name}__ConfigMap`, fields: ['.data.a', '.data.b'], managers });

  test('nothing waiting: nothing added', () => {
    expect(backedOffNote([])).toBe('');
  });

  test('names each object waiting, its fields and who changed them; no count or time, so the message stays while the fight goes on', () => {
    expect(backedOffNote([changed('a', ['hpa-controller'])])).toBe(
      '; 1 object differs until its correction, backed off (fighting): ConfigMap/ns/a .data.a, .data.b changed by hpa-controller',
    );
    const deleted = { id: 'ns_b__ConfigMap', fields: [], managers: [], deleted: true as const };
    expect(backedOffNote([changed('a', []), deleted])).toBe(
      '; 2 objects differ until their corrections, backed off (fighting): ConfigMap/ns/a .data.a, .data.b changed by an unknown field manager; ConfigMap/ns/b deleted',
    );
  });

  test('many: five named, the rest counted', () => {
    const note = backedOffNote(Array.from({ length: 40 }, (_, i) => changed(`o${i}`, ['m'])));
    expect(note.startsWith('; 40 objects differ until their corrections, backed off (fighting): ConfigMap/ns/o0 ')).toBe(true);
    expect(note.endsWith('ConfigMap/ns/o4 .data.a, .data.b changed by m; and 35 more')).toBe(true);
  });
});
