import { describe, expect, test } from '@jest/globals';
import { fleetSyncSpecSchema, inlineSecrets, type FleetSyncSpec } from '../../src/api/fleet.js';
import { selectClusters, troubledClusters, type InventoryCluster } from '../../src/clusters/inventory.js';
import { withConflicts } from '../../src/clusters/inventory-sources.js';
import { childDependencies, childName, desiredChild, ownedByFleet, templateRevision, type FleetOwner } from '../../src/fleet/children.js';
import { clusterState, fleetStatus, troubledState, type ClusterState } from '../../src/fleet/fleet-status.js';
import { DEFAULT_FLEET_QUOTA, footprintBytes, quotaExceeded } from '../../src/fleet/quota.js';
import { revisionName, revisionTrust, type ControllerRevision } from '../../src/fleet/revisions.js';
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
    const child = desiredChild(owner(s), east, { revision: 'r1', dependsOn: [] });
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
    const child = desiredChild(owner(s), { name: 'capi', ref: { clusterRef: { name: 'capi' } } }, { revision: 'r1', dependsOn: deps });
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
    ['its pull cluster offline', child({ ready: ['False', 'ClusterOffline'] }), 'unreachable', true],
    ['its pull cluster revoked', child({ ready: ['False', 'ClusterRevoked'] }), 'failed', true],
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

describe('revision trust', () => {
  const s = spec();
  const fleet = { name: 'web', uid: 'u-1' };
  /** A revision as the operator writes it (controllers/fleet-revisions.ts create). */
  const written = (over: (r: ControllerRevision) => void = () => undefined): ControllerRevision => {
    const digest = templateRevision(s);
    const r: ControllerRevision = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name: revisionName('web', digest),
        namespace: 'fleet',
        labels: { 'syncprims.dev/fleetsync': 'web' },
        annotations: { 'syncprims.dev/fleet-revision': digest },
        ownerReferences: [{ apiVersion: 'syncprims.dev/v1alpha1', kind: 'FleetSync', name: 'web', uid: 'u-1', controller: true }],
      },
      // As read back from the API server: JSON, its keys in another order.
      data: JSON.parse(JSON.stringify({ template: s.template, kind: s.kind })),
      revision: 1,
    };
    over(r);
    return r;
  };

  test("one the operator wrote is trusted, read back as JSON: its digest recomputed from exactly what it holds", () => {
    expect(revisionTrust(written(), fleet)).toEqual({ trusted: true, digest: templateRevision(s), data: { kind: s.kind, template: s.template } });
  });

  test('planted content under our name is not: the data no longer hashes to the name', () => {
    const planted = written((r) => ((r.data as { template: { spec: { source: unknown } } }).template.spec.source = { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'evil' } }] }));
    const trust = revisionTrust(planted, fleet);
    expect(trust).toEqual({ trusted: false, why: expect.stringContaining(`not to ${templateRevision(s)} as its name says: it was changed after the operator wrote it`) });
    // Anything beside kind and template is not ours either.
    expect(revisionTrust(written((r) => ((r.data as Record<string, unknown>).extra = 1)), fleet)).toMatchObject({ trusted: false, why: expect.stringContaining('not exactly a kind') });
  });

  test('not controlled by this FleetSync (by uid) is not, whatever its label: a StatefulSet\'s history, another FleetSync of the name, none', () => {
    const statefulSet = written((r) => (r.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 's-1', controller: true }]));
    expect(revisionTrust(statefulSet, fleet)).toEqual({ trusted: false, why: 'its controller is StatefulSet db (apps/v1), not this FleetSync' });
    const older = written((r) => ((r.metadata.ownerReferences as Record<string, unknown>[])[0]!.uid = 'u-0'));
    expect(revisionTrust(older, fleet)).toEqual({ trusted: false, why: 'its controller is another FleetSync of this name (uid u-0, not u-1)' });
    const notController = written((r) => ((r.metadata.ownerReferences as Record<string, unknown>[])[0]!.controller = false));
    expect(revisionTrust(notController, fleet)).toEqual({ trusted: false, why: 'it has no controller ownerReference' });
    const otherGroup = written((r) => ((r.metadata.ownerReferences as Record<string, unknown>[])[0]!.apiVersion = 'evil.example/v1'));
    expect(revisionTrust(otherGroup, fleet).trusted).toBe(false);
  });

  test('one planted with an honest hash and our uid is not, once the status records which digests the operator wrote', () => {
    const digest = templateRevision(s);
    expect(revisionTrust(written(), { ...fleet, recorded: ['0123456789abcdef', digest] }).trusted).toBe(true);
    expect(revisionTrust(written(), { ...fleet, recorded: ['0123456789abcdef'] })).toEqual({
      trusted: false,
      why: `its digest ${digest} is not one the operator recorded (the FleetSync's status.revisions): the operator did not write it`,
    });
  });

  test("a name or annotation that does not carry the data's digest is not", () => {
    const renamed = written((r) => (r.metadata.name = 'web-0000000000000000'));
    expect(revisionTrust(renamed, fleet)).toEqual({ trusted: false, why: `its name is not ${revisionName('web', templateRevision(s))}, as its annotation says` });
    const unmarked = written((r) => (r.metadata.annotations = {}));
    expect(revisionTrust(unmarked, fleet)).toMatchObject({ trusted: false, why: expect.stringContaining('is not a revision (16 hex digits)') });
  });
});

describe('inline Secrets in a template', () => {
  const withInline = (inline: unknown[]) => fleetSyncSpecSchema.safeParse({ clusters: { selector: {} }, template: { spec: { source: { inline } } } });

  test('are refused, in Lists too, with a message that points at a Secret reference', () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, stringData: { password: 'x' } };
    const result = withInline([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }, secret]);
    expect(result.success).toBe(false);
    const message = result.error!.issues[0]!.message;
    expect(result.error!.issues[0]!.path).toEqual(['template', 'spec', 'source', 'inline']);
    expect(message).toContain('may not hold Secrets inline (inline[1] Secret creds)');
    expect(message).toContain('source.secret');
    expect(inlineSecrets([{ apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'List', items: [secret] }] }])).toEqual(['inline[0].items[0].items[0] Secret creds']);
    expect(inlineSecrets([{ apiVersion: 'v1', kind: 'SecretList', items: [{ metadata: { name: 'bare' } }] }])).toEqual(['inline[0].items[0] Secret bare']);
  });

  test('other objects, and Secrets named by reference, are not', () => {
    expect(withInline([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }, { apiVersion: 'v1', kind: 'List', items: [] }]).success).toBe(true);
    expect(fleetSyncSpecSchema.safeParse({ clusters: { selector: {} }, template: { spec: { source: { secret: { name: 'manifests' } } } } }).success).toBe(true);
  });
});

describe('the quota on fan-out', () => {
  const quota = { maxClusters: 3, maxBytes: 10_000 };

  test('bytes: the template in each child and in its own revision, and the other revisions kept', () => {
    expect(footprintBytes({ children: 3, templateBytes: 1000, otherRevisionBytes: [500, 700] })).toBe(5200);
    expect(quotaExceeded(quota, { children: 3, templateBytes: 1000, otherRevisionBytes: [500, 700] })).toBeUndefined();
    expect(quotaExceeded(quota, { children: 3, templateBytes: 2500, otherRevisionBytes: [] })).toBeUndefined();
  });

  test('past either limit: refused with the figures and the flag to raise', () => {
    expect(quotaExceeded(quota, { children: 4, templateBytes: 10, otherRevisionBytes: [] })).toBe(
      '4 clusters selected, more than the 3 children a FleetSync may have (--fleet-max-clusters of syncprims run): select fewer clusters, or split the fleet',
    );
    const bytes = quotaExceeded(quota, { children: 3, templateBytes: 2200, otherRevisionBytes: [1500] });
    expect(bytes).toContain('would take 10.1 KiB in the managing cluster (a template of 2.1 KiB in 3 children and 2 revisions)');
    expect(bytes).toContain('more than the 9.8 KiB a FleetSync may take (--fleet-max-size of syncprims run)');
  });

  test('the defaults: 1000 children, 64 MiB', () => {
    expect(DEFAULT_FLEET_QUOTA).toEqual({ maxClusters: 1000, maxBytes: 64 * 1024 * 1024 });
  });
});

describe('clusters with an inventory problem', () => {
  const cluster = (name: string, origin: string, labels: Record<string, string>, problem?: string): InventoryCluster => ({
    name,
    namespace: 'fleet',
    labels,
    values: { cluster_name: name },
    source: 'Secret',
    definedBy: origin,
    ref: { kubeConfig: { secretRef: { name: origin, key: 'value' } } },
    ...(problem !== undefined && { problem }),
  });

  test('are not selected, but listed as troubled once per name when the selection matches them', () => {
    const listed = withConflicts([
      cluster('east', 'Secret fleet/east-kubeconfig', { env: 'prod' }),
      cluster('east', 'Secret fleet/east-again', { env: 'prod' }),
      cluster('west', 'Secret fleet/west-kubeconfig', { env: 'prod' }),
      cluster('dev', 'Secret fleet/dev-kubeconfig', { env: 'dev' }, 'broken'),
    ]);
    const sel = { selector: { matchLabels: { env: 'prod' } } };
    expect(selectClusters(listed, sel).map((c) => c.name)).toEqual(['west']);
    const troubled = troubledClusters(listed, sel);
    expect(troubled.map((c) => [c.name, c.problem])).toEqual([['east', 'the name east is claimed by Secret fleet/east-kubeconfig too: remove or rename one of them']]);
    expect(troubledClusters(listed, { names: ['dev', 'west'] }).map((c) => c.name)).toEqual(['dev']);
  });

  test('fail, their child kept as it is, saying why and until when', () => {
    const child: KubeObject = { apiVersion: 'syncprims.dev/v1alpha1', kind: 'RemoteSync', metadata: { name: 'web-east', annotations: { 'syncprims.dev/fleet-revision': 'r1' } } };
    const state = troubledState({ definedBy: 'Secret fleet/east-again', problem: 'the name east is claimed twice' }, child, 'RemoteSync', 'r1');
    expect(state).toEqual({
      state: 'failed',
      updated: true,
      reason: 'InventoryProblem',
      message: 'Secret fleet/east-again: the name east is claimed twice; its child RemoteSync web-east is kept as it is (not written, not deleted) until the problem is fixed or the cluster leaves the inventory',
    });
    expect(troubledState({ definedBy: 'ClusterProfile fleet/p', problem: 'no credentials' }, undefined, undefined, 'r1')).toMatchObject({ updated: false, message: expect.stringContaining('it gets no child') });
    const status = fleetStatus({}, new Map<string, ClusterState>([['east', state], ['west', { state: 'ready' }]]), 'r1', 1);
    expect(status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'ClustersFailing', message: '1/2 clusters Ready; 1 failing: east (InventoryProblem)' });
  });
});
