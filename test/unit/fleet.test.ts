import { describe, expect, test } from '@jest/globals';
import { fleetSyncSpecSchema, type FleetSyncSpec } from '../../src/api/fleet.js';
import { childDependencies, childName, desiredChild, ownedByFleet, templateRevision, type FleetOwner } from '../../src/fleet/children.js';
import { clusterState, fleetStatus, type ClusterState } from '../../src/fleet/fleet-status.js';
import type { KubeObject } from '../../src/kube/resources.js';

const spec = (over: Record<string, unknown> = {}): FleetSyncSpec =>
  fleetSyncSpecSchema.parse({
    clusters: { selector: {} },
    template: { spec: { source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }] } } },
    ...over,
  });
const owner = (s: FleetSyncSpec): FleetOwner => ({ namespace: 'fleet', name: 'web', uid: 'u-1', spec: s });
const east = { name: 'east', ref: { kubeConfig: { secretRef: { name: 'east-kubeconfig', key: 'value' } } } };

describe('children', () => {
  test('are named <fleetsync>-<cluster>, shortened with a hash past 63 characters, never alike', () => {
    expect(childName('web', 'east')).toBe('web-east');
    const long = 'c'.repeat(60);
    const a = childName('web', `${long}-1`);
    const b = childName('web', `${long}-2`);
    expect(a.length).toBeLessThanOrEqual(63);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^web-c+-[0-9a-f]{10}$/);
  });

  test('a ProxySync child: labelled, owned, the cluster named, the remote Sync named after the FleetSync, its revision marked', () => {
    const s = spec({ suspend: true, deletionPolicy: 'Orphan' });
    const child = desiredChild(owner(s), east, 'r1', []);
    expect(child).toMatchObject({
      kind: 'ProxySync',
      metadata: {
        name: 'web-east',
        namespace: 'fleet',
        labels: { 'syncprims.dev/fleetsync': 'web', 'syncprims.dev/cluster': 'east' },
        annotations: { 'syncprims.dev/fleet-revision': 'r1' },
        ownerReferences: [{ kind: 'FleetSync', name: 'web', uid: 'u-1', controller: true }],
      },
      spec: { kubeConfig: east.ref.kubeConfig, suspend: true, deletionPolicy: 'Orphan', template: { metadata: { name: 'web' } } },
    });
    expect(child.spec).not.toHaveProperty('dependsOn');
    expect(ownedByFleet(child, 'u-1')).toBe(true);
    expect(ownedByFleet(child, 'u-2')).toBe(false);
  });

  test("a RemoteSync child: the template's spec beside the cluster, its own dependsOn kept and the fleet's per-cluster entries added", () => {
    const s = spec({
      kind: 'RemoteSync',
      dependsOn: [{ kind: 'FleetSync', name: 'install' }, { kind: 'Sync', name: 'gate' }],
      template: { metadata: { labels: { team: 'web' } }, spec: { source: { inline: [] }, dependsOn: [{ name: 'local' }] } },
    });
    const deps = childDependencies(s, 'east', () => 'RemoteSync');
    expect(deps).toEqual([{ kind: 'RemoteSync', name: 'install-east', requiredStatus: 'Current' }]);
    const child = desiredChild(owner(s), { name: 'capi', ref: { clusterRef: { name: 'capi' } } }, 'r1', deps);
    expect(child.kind).toBe('RemoteSync');
    expect(child.metadata.labels).toEqual({ team: 'web', 'syncprims.dev/fleetsync': 'web', 'syncprims.dev/cluster': 'capi' });
    expect(child.spec).toMatchObject({
      clusterRef: { name: 'capi' },
      prune: true,
      dependsOn: [
        { kind: 'Sync', name: 'local', requiredStatus: 'Current' },
        { kind: 'RemoteSync', name: 'install-east', requiredStatus: 'Current' },
      ],
    });
  });

  test('the revision is the kind and template: dependsOn, suspend and the selection change nothing', () => {
    const base = templateRevision(spec());
    expect(templateRevision(spec({ suspend: true, dependsOn: [{ name: 'x' }], clusters: { names: ['a'] } }))).toBe(base);
    expect(templateRevision(spec({ kind: 'RemoteSync' }))).not.toBe(base);
    expect(templateRevision(spec({ template: { spec: { source: { inline: [] } } } }))).not.toBe(base);
  });

  test('the schema refuses an artifact for ProxySync children, a remote name for RemoteSync children, and no selection', () => {
    const artifact = { source: { artifact: { apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'GitRepository', name: 'repo' } } };
    expect(fleetSyncSpecSchema.safeParse({ clusters: { names: ['a'] }, template: { spec: artifact } }).success).toBe(false);
    expect(fleetSyncSpecSchema.safeParse({ kind: 'RemoteSync', clusters: { names: ['a'] }, template: { spec: artifact } }).success).toBe(true);
    expect(fleetSyncSpecSchema.safeParse({ kind: 'RemoteSync', clusters: { names: ['a'] }, template: { metadata: { name: 'x' }, spec: { source: { inline: [] } } } }).success).toBe(false);
    expect(fleetSyncSpecSchema.safeParse({ clusters: {}, template: { spec: { source: { inline: [] } } } }).success).toBe(false);
  });
});

const child = (over: { revision?: string; generation?: number; observed?: number; ready?: [string, string]; stalled?: string } = {}): KubeObject => {
  const conditions = [];
  if (over.ready) conditions.push({ type: 'Ready', status: over.ready[0], reason: over.ready[1], message: `${over.ready[1]} here`, lastTransitionTime: '' });
  if (over.stalled) conditions.push({ type: 'Stalled', status: 'True', reason: over.stalled, message: 'stuck', lastTransitionTime: '' });
  return {
    apiVersion: 'syncprims.dev/v1alpha1',
    kind: 'RemoteSync',
    metadata: { name: 'c', generation: over.generation ?? 2, annotations: { 'syncprims.dev/fleet-revision': over.revision ?? 'r1' } },
    status: { observedGeneration: over.observed ?? over.generation ?? 2, conditions },
  };
};

describe("a cluster's state from its child", () => {
  test.each<[string, KubeObject | undefined, ClusterState['state'], boolean]>([
    ['not made yet', undefined, 'progressing', false],
    ['Ready with the revision', child({ ready: ['True', 'Succeeded'] }), 'ready', true],
    ['Ready with another revision', child({ revision: 'r0', ready: ['True', 'Succeeded'] }), 'progressing', false],
    ['Ready, its generation not observed', child({ observed: 1, ready: ['True', 'Succeeded'] }), 'progressing', true],
    ['waiting for a dependency', child({ ready: ['False', 'DependencyNotReady'] }), 'progressing', true],
    ['applying', child({ ready: ['Unknown', 'Progressing'] }), 'progressing', true],
    ['its cluster unreachable', child({ ready: ['False', 'ClusterUnreachable'] }), 'unreachable', true],
    ['failed to apply', child({ ready: ['False', 'ApplyFailed'] }), 'failed', true],
    ['remote Sync suspended by hand', child({ ready: ['False', 'RemoteSuspended'] }), 'failed', true],
    ['stalled', child({ ready: ['False', 'InvalidSpec'], stalled: 'InvalidSpec' }), 'failed', true],
  ])('%s', (_what, obj, state, updated) => {
    const s = clusterState(obj, 'r1');
    expect(s.state).toBe(state);
    if (s.state !== 'ready') expect(s.updated).toBe(updated);
  });

  test('a name another object holds is a failure naming it', () => {
    expect(clusterState(child({ ready: ['True', 'Succeeded'] }), 'r1', 'RemoteSync fleet/web-east is not ours')).toEqual({
      state: 'failed',
      updated: false,
      reason: 'OwnershipConflict',
      message: 'RemoteSync fleet/web-east is not ours',
    });
  });
});

describe('the status', () => {
  const states = (entries: [string, ClusterState][]) => new Map(entries);
  const ready = (status: ReturnType<typeof fleetStatus>) => status.conditions?.find((c) => c.type === 'Ready');

  test('Ready once every selected cluster is Ready with the revision; currentRevision becomes it', () => {
    const s = fleetStatus({}, states([['a', { state: 'ready' }], ['b', { state: 'ready' }]]), 'r1', 3);
    expect(s).toMatchObject({ observedGeneration: 3, phase: 'Complete', currentRevision: 'r1', updateRevision: 'r1', readyClusters: '2/2' });
    expect(ready(s)).toMatchObject({ status: 'True', reason: 'Succeeded', message: '2/2 clusters Ready at revision r1', observedGeneration: 3 });
    expect(s.conditions?.some((c) => c.type === 'Reconciling')).toBe(false);
  });

  test('progressing: Ready=Unknown and Reconciling; the last complete revision stays current', () => {
    const s = fleetStatus({ currentRevision: 'r0' }, states([['a', { state: 'ready' }], ['b', { state: 'progressing', updated: false }]]), 'r1', 3);
    expect(s).toMatchObject({ phase: 'Progressing', currentRevision: 'r0', updateRevision: 'r1', clusters: { selected: 2, updated: 1, ready: 1, progressing: 1 } });
    expect(ready(s)).toMatchObject({ status: 'Unknown', reason: 'Progressing' });
    expect(s.conditions?.find((c) => c.type === 'Reconciling')?.status).toBe('True');
  });

  test('failing clusters: Ready=False ClustersFailing naming them, at most 20 listed; unreachable is not failure', () => {
    const many = Array.from({ length: 25 }, (_, i): [string, ClusterState] => [`c${String(i).padStart(2, '0')}`, { state: 'failed', updated: true, reason: 'ApplyFailed', message: 'no' }]);
    const s = fleetStatus({}, states([...many, ['z', { state: 'unreachable', updated: true, message: 'down' }]]), 'r1', 1);
    expect(ready(s)).toMatchObject({ status: 'False', reason: 'ClustersFailing' });
    expect(ready(s)?.message).toBe('0/26 clusters Ready; 25 failing: c00 (ApplyFailed), c01 (ApplyFailed), c02 (ApplyFailed) and 22 more');
    expect(s.failures).toHaveLength(20);
    expect(s.clusters).toMatchObject({ failed: 25, unreachable: 1 });
    const down = fleetStatus({}, states([['a', { state: 'ready' }], ['z', { state: 'unreachable', updated: false, message: 'down' }]]), 'r1', 1);
    expect(ready(down)).toMatchObject({ status: 'False', reason: 'ClusterUnreachable', message: '1/2 clusters Ready; unreachable: z' });
    expect(down.failures).toBeUndefined();
  });

  test('no cluster selected is Ready, and says so', () => {
    expect(ready(fleetStatus({}, new Map(), 'r1', 1))).toMatchObject({ status: 'True', message: 'no cluster is selected' });
  });
});
