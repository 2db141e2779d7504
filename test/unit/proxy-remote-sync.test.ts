// What a ProxySync wants in its remote cluster and what it reads back: the
// remote Sync from the template, the mark for related objects, and when the
// remote status may speak for what we gave it.
import { describe, expect, test } from '@jest/globals';
import type { ProxySyncSpec } from '../../src/api/objects.js';
import {
  contains,
  copiesDigest,
  desiredRemoteSync,
  relatedCopy,
  remoteLocation,
  remoteMark,
  remoteSyncMatches,
} from '../../src/proxy/remote-sync.js';
import { mirroredStatus } from '../../src/controllers/proxysync-status.js';
import type { KubeObject } from '../../src/kube/resources.js';

const proxy: KubeObject = { apiVersion: 'syncprims.dev/v1alpha1', kind: 'ProxySync', metadata: { name: 'app', namespace: 'team' } };
const spec = (template: Partial<ProxySyncSpec['template']> = {}): ProxySyncSpec =>
  ({ clusterRef: { name: 'edge' }, template: { spec: { source: { configMap: { name: 'manifests' } } }, ...template } }) as ProxySyncSpec;
const marks = { 'syncprims.dev/owner-kind': 'ProxySync' };

describe('the remote Sync', () => {
  test('is named and placed after the ProxySync unless the template says otherwise', () => {
    expect(remoteLocation(proxy, spec())).toEqual({ namespace: 'team', name: 'app' });
    expect(remoteLocation(proxy, spec({ metadata: { name: 'x', namespace: 'y' } }))).toEqual({ namespace: 'y', name: 'x' });
  });

  test('carries the template, our marks and the mark to echo', () => {
    const s = desiredRemoteSync(proxy, spec({ metadata: { labels: { team: 'a' } } }), 'mgmt-id', 'syncprims:abc');
    expect(s.metadata).toEqual({
      name: 'app',
      namespace: 'team',
      labels: {
        team: 'a',
        'syncprims.dev/owner-kind': 'ProxySync',
        'syncprims.dev/owner-namespace': 'team',
        'syncprims.dev/owner-name': 'app',
        'syncprims.dev/origin': 'mgmt-id',
      },
      annotations: { 'syncprims.dev/reconcile-requested-at': 'syncprims:abc' },
    });
    expect(s.spec).toEqual({ source: { configMap: { name: 'manifests' } } });
  });

  test('matches a live one that has every field the template sets, whatever else it has', () => {
    const desired = desiredRemoteSync(proxy, spec(), 'id', undefined);
    const live = { ...desired, metadata: { ...desired.metadata, generation: 3 }, spec: { ...(desired.spec as Record<string, unknown>), prune: true, interval: '10m' } };
    expect(remoteSyncMatches(live, desired)).toBe(true);
    const edited = { ...live, spec: { ...live.spec, source: { configMap: { name: 'other' } } } } as KubeObject;
    expect(remoteSyncMatches(edited, desired)).toBe(false);
    expect(remoteSyncMatches(undefined, desired)).toBe(false);
  });

  test('contains compares arrays element by element and objects by the keys wanted', () => {
    expect(contains({ a: [{ x: 1, y: 2 }], b: 1 }, { a: [{ x: 1 }] })).toBe(true);
    expect(contains({ a: [{ x: 1 }, { x: 2 }] }, { a: [{ x: 1 }] })).toBe(false);
    expect(contains({ a: '1' }, { a: 1 })).toBe(false);
  });
});

describe('the mark of related objects', () => {
  test('changes with their content and with a reconcile request, and is absent with neither', () => {
    const copy = (value: string): KubeObject => relatedCopy({ kind: 'ConfigMap', name: 'manifests', data: { 'a.yaml': value } }, 'team', marks);
    expect(copiesDigest([])).toBeUndefined();
    expect(remoteMark(undefined, undefined)).toBeUndefined();
    const a = remoteMark(copiesDigest([copy('1')]), undefined);
    expect(a).toMatch(/^syncprims:[0-9a-f]{16}$/);
    expect(remoteMark(copiesDigest([copy('1')]), undefined)).toBe(a);
    expect(remoteMark(copiesDigest([copy('2')]), undefined)).not.toBe(a);
    expect(remoteMark(copiesDigest([copy('1')]), 'now')).not.toBe(a);
    expect(remoteMark(undefined, 'now')).toMatch(/^syncprims:/);
  });
});

describe('the mirrored status', () => {
  const live = (status: Record<string, unknown>, generation = 2, annotations?: Record<string, string>): KubeObject => ({
    apiVersion: 'syncprims.dev/v1alpha1',
    kind: 'Sync',
    metadata: { name: 'app', namespace: 'team', generation, annotations },
    status,
  });
  const readyTrue = { type: 'Ready', status: 'True', reason: 'Succeeded', message: 'applied', lastTransitionTime: '2026-01-01T00:00:00Z' };
  const remote = { cluster: 'edge', mark: undefined, inventory: [{ id: 'team_app_syncprims.dev_Sync', v: 'syncprims.dev/v1alpha1' }] };
  const now = new Date('2026-11-23T10:00:00Z');
  const ready = (s: { conditions?: { type: string; message?: string }[] }) => s.conditions?.find((c) => c.type === 'Ready');

  test('a remote Sync that has not observed its generation is not Ready, whatever its Ready says', () => {
    const s = mirroredStatus({}, live({ observedGeneration: 1, conditions: [readyTrue] }), remote, 5, now);
    expect(ready(s)).toMatchObject({ status: 'Unknown', reason: 'RemoteNotReady', observedGeneration: 5 });
    expect(ready(s)?.message).toContain('to observe generation 2 (observed: 1');
  });

  test('nor one that has not echoed the mark of the related objects', () => {
    const s = mirroredStatus({}, live({ observedGeneration: 2, conditions: [readyTrue], lastHandledReconcileAt: 'old' }), { ...remote, mark: 'new' }, 5, now);
    expect(ready(s)).toMatchObject({ status: 'Unknown', reason: 'RemoteNotReady' });
  });

  test('nor one changed by another manager whose correction is held back (a fight): its Ready speaks for their spec, and says who changed what', () => {
    const heldBack = { id: 'team_app_syncprims.dev_Sync', fields: ['.spec.interval', '.spec.suspend'], managers: ['fighter'] };
    const s = mirroredStatus({}, live({ observedGeneration: 2, conditions: [readyTrue] }), { ...remote, heldBack }, 5, now);
    expect(ready(s)).toMatchObject({ status: 'Unknown', reason: 'RemoteNotReady' });
    expect(ready(s)?.message).toBe(
      'the remote Sync team/app differs from the template, .spec.interval, .spec.suspend changed by fighter: it is put back when its correction, backed off while it keeps being changed (fighting), is due (see the Drifted Event)',
    );
  });

  test('once caught up, Ready, revisions and summary are mirrored, and the rest goes under remote', () => {
    const pending = [{ kind: 'Sync', name: 'db', reason: 'NotReady' }];
    const rs = { observedGeneration: 2, conditions: [readyTrue], lastAttemptedRevision: 'sha256:1', lastAppliedRevision: 'sha256:1', summary: { total: 1 }, pendingDependencies: pending };
    const s = mirroredStatus({ observedGeneration: 5 }, live(rs), remote, 5, now);
    expect(ready(s)).toMatchObject({ status: 'True', reason: 'Succeeded', message: 'applied', observedGeneration: 5 });
    expect(s).toMatchObject({ observedGeneration: 5, lastAttemptedRevision: 'sha256:1', lastAppliedRevision: 'sha256:1', summary: { total: 1 }, inventory: { entries: remote.inventory } });
    expect(s.remote).toEqual({ cluster: 'edge', namespace: 'team', name: 'app', observedGeneration: 2, pendingDependencies: pending, lastSeenAt: now.toISOString() });
    // Seen again unchanged: lastSeenAt stays, so nothing is written.
    const again = mirroredStatus(s, live(rs), remote, 5, new Date('2026-11-23T11:00:00Z'));
    expect(again.remote).toEqual(s.remote);
    expect(again.conditions).toEqual(s.conditions);
  });
});
