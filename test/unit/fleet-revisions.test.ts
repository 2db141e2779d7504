// The operator's side of a FleetSync's revisions (controllers/fleet-revisions.ts)
// over a cache filled by hand (an informer never started) and a client that
// records what would be sent: only the FleetSync's own revisions are raised or
// deleted, the others are told once per version of them.
import { describe, expect, test } from '@jest/globals';
import { fleetSyncSpecSchema } from '../../src/api/fleet.js';
import { FleetRevisions, KEPT_REVISIONS } from '../../src/controllers/fleet-revisions.js';
import { templateRevision, type FleetOwner } from '../../src/fleet/children.js';
import { revisionName, type ControllerRevision } from '../../src/fleet/revisions.js';
import type { KubeClient, RequestOptions } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { Informer } from '../../src/runtime/informer.js';

const specOf = (value: string) =>
  fleetSyncSpecSchema.parse({ clusters: { selector: {} }, template: { spec: { source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { value } }] } } } });

function harness() {
  const sent: RequestOptions[] = [];
  const client = { name: 'unit', request: async (opts: RequestOptions) => (sent.push(opts), {}) } as unknown as KubeClient;
  const informer = new Informer<KubeObject>({ client, resource: { group: 'apps', version: 'v1', resource: 'controllerrevisions', kind: 'ControllerRevision', namespaced: true } });
  return { sent, informer, revisions: new FleetRevisions(client, informer) };
}

let uid = 0;
/** Revision `n` of value `value`, as the operator writes it (`owner`: another controller instead). */
function revision(value: string, n: number, owner?: { kind: string; name: string; uid: string }): ControllerRevision {
  const spec = specOf(value);
  const digest = templateRevision(spec);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: owner ? `${owner.name}-${n}` : revisionName('web', digest),
      namespace: 'fleet',
      uid: `r-${++uid}`,
      resourceVersion: '1',
      labels: { 'syncprims.dev/fleetsync': 'web' },
      annotations: { 'syncprims.dev/fleet-revision': digest },
      ownerReferences: [{ apiVersion: owner ? 'apps/v1' : 'syncprims.dev/v1alpha1', kind: owner?.kind ?? 'FleetSync', name: owner?.name ?? 'web', uid: owner?.uid ?? 'u-1', controller: true }],
    },
    data: { kind: spec.kind, template: spec.template },
    revision: n,
  };
}

const owner = (value: string, recorded?: string[]): FleetOwner => ({ namespace: 'fleet', name: 'web', uid: 'u-1', spec: specOf(value), recorded });

describe("the operator's revisions", () => {
  test("recording past the 10 kept deletes only the FleetSync's own oldest; a StatefulSet's of our label are neither counted nor touched", async () => {
    const { sent, informer, revisions } = harness();
    const own = Array.from({ length: KEPT_REVISIONS }, (_, i) => revision(`v${i + 1}`, i + 1));
    const statefulSet = Array.from({ length: 12 }, (_, i) => revision(`s${i}`, 100 + i, { kind: 'StatefulSet', name: 'db', uid: 's-1' }));
    for (const r of [...own, ...statefulSet]) informer.store.upsert(r);
    const next = owner('v11');
    await revisions.record(next, templateRevision(next.spec), { kind: next.spec.kind, template: next.spec.template }, new Set());
    // Numbered after its own newest (10), not after the StatefulSet's (111).
    expect(sent.map((r) => [r.method, (r.body as ControllerRevision).revision])).toEqual([['POST', 11]]);
    informer.store.upsert(revision('v11', 11));
    sent.length = 0;
    await revisions.record(next, templateRevision(next.spec), { kind: next.spec.kind, template: next.spec.template }, new Set());
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual([`DELETE /apis/apps/v1/namespaces/fleet/controllerrevisions/${own[0]!.metadata.name}`]);
    expect(sent[0]!.body).toMatchObject({ preconditions: { uid: own[0]!.metadata.uid, resourceVersion: '1' } });
  });

  test('what is not its own is told once per version of it, with why', () => {
    const { informer, revisions } = harness();
    const db = revision('s', 1, { kind: 'StatefulSet', name: 'db', uid: 's-1' });
    informer.store.upsert(revision('v1', 1));
    informer.store.upsert(db);
    const o = owner('v1');
    expect(revisions.untold(o)).toEqual([{ name: 'db-1', why: 'its controller is StatefulSet db (apps/v1), not this FleetSync' }]);
    expect(revisions.untold(o)).toEqual([]);
    informer.store.upsert({ ...db, metadata: { ...db.metadata, resourceVersion: '2' } });
    expect(revisions.untold(o).map((r) => r.name)).toEqual(['db-1']);
  });

  test('a held revision replaced, or one the status does not record, holds nothing for the clusters held at it', () => {
    const { informer, revisions } = harness();
    const good = revision('v1', 1);
    const digest = good.metadata.annotations!['syncprims.dev/fleet-revision']!;
    informer.store.upsert(good);
    expect(revisions.data(owner('v2'), digest)).toEqual(good.data);
    expect(revisions.data(owner('v2', ['0123456789abcdef']), digest)).toBeUndefined();
    const planted = structuredClone(good);
    (planted.data as { template: { spec: { source: { inline: { data: { value: string } }[] } } } }).template.spec.source.inline[0]!.data.value = 'planted';
    informer.store.upsert(planted);
    expect(revisions.data(owner('v2', [digest]), digest)).toBeUndefined();
    expect(revisions.recorded(owner('v2', [digest]), 'ffffffffffffffff')).toEqual(['ffffffffffffffff']);
  });
});
