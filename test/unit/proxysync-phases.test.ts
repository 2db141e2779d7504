// ProxySync's phase decisions: which remote answers halt it, when a halted
// ProxySync goes again and what its status says, whether its remote Sync is
// created, adopted or a conflict, applied or left as it is (held back),
// suspended by hand there, what a suspended ProxySync says (mirror only), and
// whether a deleted one's remote Sync is gone.
import { describe, expect, test } from '@jest/globals';
import { ConditionType, Reason } from '../../src/api/conditions.js';
import type { ProxySyncSpec } from '../../src/api/objects.js';
import type { Drift } from '../../src/apply/drift.js';
import type { ObjectResult } from '../../src/apply/engine.js';
import {
  claimOf,
  clusterName,
  Conflict,
  FAILURE_RETRY_MS,
  Halt,
  haltRetry,
  haltStatus,
  invalidSpec,
  namespaceMissing,
  namespaceRefused,
  refusal,
  remoteDeletion,
  remoteSyncStep,
  remoteSyncText,
  suspendedStatus,
} from '../../src/controllers/proxysync-phases.js';
import { handSuspenders, mirroredStatus } from '../../src/controllers/proxysync-status.js';
import type { SyncStatusDraft } from '../../src/controllers/sync-status.js';
import { ApiError, NotKubernetesError, ResponseLimitError, TransportError } from '../../src/kube/errors.js';
import type { KubeObject } from '../../src/kube/resources.js';

const cluster = { name: 'edge-1', client: { name: 'edge-1-client' } };
const fromEdge = (status: number, message = 'no'): ApiError => new ApiError(status, 'X', message, undefined, undefined, 'edge-1-client');

describe('refusal: which errors of the remote cluster halt the ProxySync', () => {
  test('a lasting refusal of the remote cluster: ApplyFailed naming the cluster', () => {
    for (const status of [400, 403, 404, 422]) {
      const halt = refusal(fromEdge(status, 'PATCH /apis/x: forbidden'), cluster);
      expect(halt).toBeInstanceOf(Halt);
      expect(halt?.reason).toBe(Reason.ApplyFailed);
      expect(halt?.message).toBe('cluster edge-1 refused PATCH /apis/x: forbidden');
      expect(halt?.wait).toBe(false);
    }
  });

  test("transient answers, conflicts, the managing cluster's answers and no answer are left to the controller's backoff", () => {
    for (const status of [409, 429, 500, 503]) expect(refusal(fromEdge(status), cluster)).toBeUndefined();
    expect(refusal(new ApiError(403, 'Forbidden', 'no', undefined, undefined, 'mgmt'), cluster)).toBeUndefined();
    expect(refusal(new TransportError('timeout'), cluster)).toBeUndefined();
    expect(refusal(new Error('bug'), cluster)).toBeUndefined();
  });

  test('an answer that is not Kubernetes: ClusterUnreachable', () => {
    const halt = refusal(new NotKubernetesError('GET /api', 'https://127.0.0.1:1', 'an HTML page'), cluster);
    expect(halt?.reason).toBe(Reason.ClusterUnreachable);
    expect(halt?.message).toMatch(/^cluster edge-1 is not usable: GET \/api: /);
  });

  test('an answer past a bound (the remote Sync watched with an event of 100 MiB): ClusterUnreachable naming the bound', () => {
    const err = new ResponseLimitError('GET /apis/syncprims.dev/v1alpha1/syncs', 'edge-1 (https://127.0.0.1:1)', 'bytes', 'one watch event of more than 16 MiB, the limit of an event');
    const halt = refusal(err, cluster);
    expect(halt?.reason).toBe(Reason.ClusterUnreachable);
    expect(halt?.message).toContain('cluster edge-1 is unreachable');
    expect(halt?.message).toContain('one watch event of more than 16 MiB, the limit of an event');
  });
});

describe('after a halt', () => {
  test('a failure goes again after min(interval, 30 s); a wait or a halt with its own result as it says', () => {
    expect(haltRetry(new Halt(Reason.ApplyFailed, 'x'), 600_000)).toEqual({ requeueAfterMs: FAILURE_RETRY_MS });
    expect(haltRetry(new Halt(Reason.ApplyFailed, 'x'), 5_000)).toEqual({ requeueAfterMs: 5_000 });
    expect(haltRetry(new Conflict('owned by another', 'id'), 600_000)).toEqual({ requeueAfterMs: FAILURE_RETRY_MS });
    expect(haltRetry(new Halt(Reason.Progressing, 'waiting', undefined, true), 600_000)).toBeUndefined();
    expect(haltRetry(new Halt(Reason.CRDNotInstalled, 'x', { requeueAfterMs: 10_000 }), 600_000)).toEqual({ requeueAfterMs: 10_000 });
  });

  test('the status: a wait is Reconciling (Ready Unknown), a failure Ready=False with its reason', () => {
    const waiting = haltStatus(new Halt(Reason.Progressing, 'waiting for ConfigMap team/a', undefined, true), {}, 3);
    expect(waiting.conditions?.find((c) => c.type === ConditionType.Reconciling)).toMatchObject({ status: 'True', message: 'waiting for ConfigMap team/a' });
    expect(waiting.conditions?.find((c) => c.type === ConditionType.Ready)?.status).not.toBe('False');
    const failing = haltStatus(new Conflict('the Sync team/app in cluster edge-1 is owned by ProxySync/team/other', 'id'), {}, 3);
    expect(failing.conditions?.find((c) => c.type === ConditionType.Ready)).toMatchObject({
      status: 'False',
      reason: Reason.OwnershipConflict,
      message: 'the Sync team/app in cluster edge-1 is owned by ProxySync/team/other',
      observedGeneration: 3,
    });
  });
});

describe('remoteSyncStep: apply the remote Sync, or leave it', () => {
  const desired: KubeObject = { apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'app', namespace: 'team', labels: { a: '1' } }, spec: { interval: '5m' } };
  const changed: KubeObject = { ...desired, spec: { interval: '1h' } };
  const drift: Drift = { id: 'syncprims.dev_Sync_team_app', fields: ['spec.interval'], managers: ['kubectl'] } as unknown as Drift;
  const same = { applying: '2|m', lastApplied: '2|m' };
  let asked = 0;
  const waiting = (d: Drift | undefined) => () => (asked++, d);

  test('missing: applied at once, whatever waits', () => {
    expect(remoteSyncStep(undefined, desired, same, waiting(drift))).toEqual({ apply: true, heldBack: undefined });
  });

  test('it carries what the template sets: left alone, held back by nothing', () => {
    expect(remoteSyncStep({ ...desired, status: { x: 1 } }, desired, same, waiting(drift))).toEqual({ apply: false, heldBack: undefined });
  });

  test('changed by someone else, its correction backed off, nothing new to give it: left, and held back', () => {
    expect(remoteSyncStep(changed, desired, same, waiting(drift))).toEqual({ apply: false, heldBack: drift });
  });

  test('changed, and no correction waits: applied', () => {
    expect(remoteSyncStep(changed, desired, same, waiting(undefined))).toEqual({ apply: true, heldBack: undefined });
  });

  test('something new to give it (another generation or mark): applied, without asking what waits', () => {
    asked = 0;
    expect(remoteSyncStep(changed, desired, { applying: '3|m', lastApplied: '2|m' }, waiting(drift))).toEqual({ apply: true, heldBack: undefined });
    expect(remoteSyncStep(changed, desired, { applying: '2|m', lastApplied: undefined }, waiting(drift))).toEqual({ apply: true, heldBack: undefined });
    expect(asked).toBe(0);
  });
});

test('clusterName: the kubeconfig Secret, else the Cluster', () => {
  const spec = (s: Partial<ProxySyncSpec>): ProxySyncSpec => ({ template: { spec: { source: {} } }, ...s }) as ProxySyncSpec;
  expect(clusterName(spec({ kubeConfig: { secretRef: { name: 'edge-kc' } } } as Partial<ProxySyncSpec>))).toBe('edge-kc');
  expect(clusterName(spec({ clusterRef: { name: 'edge-1' } } as Partial<ProxySyncSpec>))).toBe('edge-1');
});

describe('claimOf: the remote Sync is created, adopted (only with spec.adopt), ours, or a conflict', () => {
  const owner = { kind: 'ProxySync' as const, namespace: 'home', name: 'app', origin: 'mgmt' };
  const what = remoteSyncText({ namespace: 'team', name: 'app', cluster: 'edge-1' });
  const sync = (labels?: Record<string, string>): KubeObject => ({ apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'app', namespace: 'team', labels } });
  const ownerLabels = (name: string, origin = 'mgmt') => ({
    'syncprims.dev/owner-kind': 'ProxySync',
    'syncprims.dev/owner-namespace': 'home',
    'syncprims.dev/owner-name': name,
    'syncprims.dev/origin': origin,
  });
  const conflictOf = (existing: KubeObject, adopt: boolean): Conflict => {
    try {
      claimOf(existing, owner, what, adopt);
    } catch (err) {
      if (err instanceof Conflict) return err;
      throw err;
    }
    throw new Error('no Conflict');
  };

  test('none there: created (its namespace first); one with our marks: ours, with or without adopt', () => {
    expect(claimOf(undefined, owner, what, false)).toBe('create');
    expect(claimOf(sync(ownerLabels('app')), owner, what, false)).toBe('ours');
    expect(claimOf(sync(ownerLabels('app')), owner, what, true)).toBe('ours');
  });

  test('one without owner labels: adopted only with spec.adopt, else a Conflict that says it is left alone and how to take it over', () => {
    expect(claimOf(sync(), owner, what, true)).toBe('adopt');
    expect(claimOf(sync({ app: 'x' }), owner, what, true)).toBe('adopt');
    for (const existing of [sync(), sync({ app: 'x' })]) {
      const conflict = conflictOf(existing, false);
      expect(conflict.message).toBe(
        'the Sync team/app in cluster edge-1 carries no syncprims owner labels (made by someone else, or by hand): left alone, neither changed nor deleted; delete it there, or set spec.adopt: true to take it over (refused when the operator impersonates)',
      );
      expect(conflict.id).toBe('team_app_syncprims.dev_Sync');
      expect(conflict.reason).toBe(Reason.OwnershipConflict);
    }
  });

  test("another owner's, or ours from another managing cluster: a Conflict naming it, even with adopt", () => {
    for (const adopt of [false, true]) {
      const conflict = conflictOf(sync(ownerLabels('other')), adopt);
      expect(conflict.message).toBe('the Sync team/app in cluster edge-1 is owned by ProxySync/home/other: left alone');
      expect(conflict.id).toBe('team_app_syncprims.dev_Sync');
      expect(conflict.reason).toBe(Reason.OwnershipConflict);
      expect(conflictOf(sync(ownerLabels('app', 'elsewhere')), adopt).message).toBe(
        'the Sync team/app in cluster edge-1 is owned by ProxySync/home/app (applied from managing cluster elsewhere): left alone',
      );
    }
  });

  test('its namespace missing and not creatable (refused): ApplyFailed, saying what to do', () => {
    const halt = namespaceRefused(fromEdge(403, 'namespaces is forbidden'), { namespace: 'team', cluster: 'edge-1' });
    expect(halt.reason).toBe(Reason.ApplyFailed);
    expect(halt.message).toBe("cannot create namespace team in cluster edge-1: namespaces is forbidden; create it, or grant the kubeconfig's identity create on namespaces");
    expect(haltRetry(halt, 600_000)).toEqual({ requeueAfterMs: FAILURE_RETRY_MS });
  });
});

describe('impersonated writes: a missing namespace, a refused spec', () => {
  test("a 404 naming the namespace: ApplyFailed, saying that none is created for the account, and what to grant; any other error: not this", () => {
    const missing = new ApiError(404, 'NotFound', 'namespaces "team" not found', undefined, { name: 'team', kind: 'namespaces' }, 'edge-1-client');
    const halt = namespaceMissing(missing, { namespace: 'team', cluster: 'edge-1' }, 'deployer');
    expect(halt?.reason).toBe(Reason.ApplyFailed);
    expect(halt?.message).toBe(
      'namespace team does not exist in cluster edge-1: the ProxySync writes there as the service account team/deployer (the operator impersonates), and no namespace is created for it; create the namespace there, and grant that account get, create, patch and delete on syncs.syncprims.dev, configmaps and secrets in it',
    );
    expect(haltRetry(halt!, 600_000)).toEqual({ requeueAfterMs: FAILURE_RETRY_MS });
    const otherNotFound = new ApiError(404, 'NotFound', 'syncs "app" not found', undefined, { name: 'app', kind: 'syncs' }, 'edge-1-client');
    expect(namespaceMissing(otherNotFound, { namespace: 'team', cluster: 'edge-1' }, 'deployer')).toBeUndefined();
    expect(namespaceMissing(fromEdge(403), { namespace: 'team', cluster: 'edge-1' }, 'deployer')).toBeUndefined();
  });

  test('a spec the mode refuses: InvalidSpec and Stalled, not tried again until the spec changes', () => {
    const halt = invalidSpec('spec.adopt: true is refused');
    const s = haltStatus(halt, {}, 3);
    expect(s.conditions?.find((c) => c.type === ConditionType.Ready)).toMatchObject({ status: 'False', reason: Reason.InvalidSpec, message: 'spec.adopt: true is refused', observedGeneration: 3 });
    expect(s.conditions?.find((c) => c.type === ConditionType.Stalled)).toMatchObject({ status: 'True', reason: Reason.InvalidSpec });
    expect(haltRetry(halt, 600_000)).toEqual({});
  });
});

describe('suspended (the ProxySync): mirror only', () => {
  const readyTrue = { type: 'Ready', status: 'True', reason: 'Succeeded', message: 'applied', observedGeneration: 2, lastTransitionTime: '2026-01-01T00:00:00Z' };
  const live: KubeObject = {
    apiVersion: 'syncprims.dev/v1alpha1',
    kind: 'Sync',
    metadata: { name: 'app', namespace: 'team', generation: 2 },
    status: { observedGeneration: 2, conditions: [readyTrue], lastAttemptedRevision: 'sha256:2', lastAppliedRevision: 'sha256:2' },
  };
  const remote = { cluster: 'edge-1', inventory: [] };
  const now = new Date('2026-11-23T10:00:00Z');

  test("the remote Sync's status is mirrored; Ready keeps it, its reason Suspended", () => {
    const s = suspendedStatus({}, live, remote, 4, now);
    expect(s.lastAppliedRevision).toBe('sha256:2');
    expect(s.conditions?.find((c) => c.type === ConditionType.Ready)).toMatchObject({ status: 'True', reason: Reason.Suspended, observedGeneration: 4 });
    expect(s.conditions?.find((c) => c.type === ConditionType.Reconciling)).toBeUndefined();
  });

  test('no remote Sync to read (none there, or its cluster not usable): the status it has, suspended', () => {
    const base: SyncStatusDraft = { lastAppliedRevision: 'sha256:1', conditions: [{ ...readyTrue, status: 'False', reason: 'ClusterUnreachable' }] };
    const s = suspendedStatus(base, undefined, remote, 4, now);
    expect(s.lastAppliedRevision).toBe('sha256:1');
    expect(s.conditions?.find((c) => c.type === ConditionType.Ready)).toMatchObject({ status: 'False', reason: Reason.Suspended });
  });
});

describe('the remote Sync suspended by hand', () => {
  const readyTrue = { type: 'Ready', status: 'True', reason: 'Suspended', message: 'suspended: not reconciling until spec.suspend is false', observedGeneration: 3, lastTransitionTime: '2026-01-01T00:00:00Z' };
  const entry = (manager: string, fields: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ manager, operation: 'Update', fieldsV1: { 'f:spec': fields }, ...extra });
  const live = (suspend: boolean | undefined, managedFields: unknown[] = []): KubeObject => ({
    apiVersion: 'syncprims.dev/v1alpha1',
    kind: 'Sync',
    metadata: { name: 'app', namespace: 'team', generation: 3, managedFields },
    spec: { interval: '5m', ...(suspend === undefined ? {} : { suspend }) },
    status: { observedGeneration: 3, conditions: [readyTrue], lastAttemptedRevision: 'sha256:old', lastAppliedRevision: 'sha256:old' },
  });
  const remote = { cluster: 'edge-1', mark: undefined, inventory: [] };
  const now = new Date('2026-11-23T10:00:00Z');

  test('who: the field managers that own spec.suspend (not status writers); none when not suspended, or when the template suspends it', () => {
    const fields = [
      { manager: 'syncprims', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:interval': {} } } },
      entry('ops-oncall', { 'f:suspend': {} }),
      entry('kubectl-edit', { 'f:interval': {} }),
      entry('status-writer', { 'f:suspend': {} }, { subresource: 'status' }),
    ];
    expect(handSuspenders(live(true, fields), false)).toEqual(['ops-oncall']);
    expect(handSuspenders(live(true, [...fields, entry('argocd', { 'f:suspend': {} })]), false)).toEqual(['argocd', 'ops-oncall']);
    expect(handSuspenders(live(true, []), false)).toEqual([]);
    expect(handSuspenders(live(true, fields), true)).toBeUndefined();
    expect(handSuspenders(live(false, fields), false)).toBeUndefined();
    expect(handSuspenders(live(undefined, fields), false)).toBeUndefined();
  });

  test("Ready=False, RemoteSuspended, naming who, though its own Ready says True: it applies nothing we give it", () => {
    const s = mirroredStatus({}, live(true), { ...remote, suspendedBy: ['ops-oncall'] }, 5, now);
    expect(s.conditions?.find((c) => c.type === ConditionType.Ready)).toMatchObject({ status: 'False', reason: Reason.RemoteSuspended, observedGeneration: 5 });
    expect(s.conditions?.find((c) => c.type === ConditionType.Ready)?.message).toBe(
      'the remote Sync team/app in cluster edge-1 was suspended by hand, by field manager ops-oncall (spec.suspend: true, which the template does not set): it applies nothing the ProxySync gives it until it is resumed there (syncprims resume sync/app -n team, or remove spec.suspend)',
    );
    expect(s.conditions?.find((c) => c.type === ConditionType.Reconciling)).toBeUndefined();
    expect(s.lastAppliedRevision).toBe('sha256:old');
    const unnamed = mirroredStatus({}, live(true), { ...remote, suspendedBy: [] }, 5, now);
    expect(unnamed.conditions?.find((c) => c.type === ConditionType.Ready)?.message).toContain('by a field manager other than syncprims (not named in its managedFields)');
  });

  test('suspended by the template (no suspendedBy): mirrored as it is, Ready=True reason Suspended', () => {
    const s = mirroredStatus({}, live(true), remote, 5, now);
    expect(s.conditions?.find((c) => c.type === ConditionType.Ready)).toMatchObject({ status: 'True', reason: Reason.Suspended });
  });
});

describe('remoteDeletion: a deleted ProxySync waits until its remote Sync is gone', () => {
  const r = (action: ObjectResult['action'], extra: Partial<ObjectResult> = {}): ObjectResult => ({ id: 'team_app_syncprims.dev_Sync', action, ...extra });

  test('a delete sent, or no answer from the cluster: waiting for it to go', () => {
    expect(remoteDeletion([r('deleted')])).toEqual({ waitingFor: ['team_app_syncprims.dev_Sync'] });
    expect(remoteDeletion([r('failed', { reason: 'Unreachable', message: 'timeout' })])).toEqual({ waitingFor: ['team_app_syncprims.dev_Sync'] });
  });

  test('refused by the remote cluster: a clean-up failure naming why', () => {
    expect(remoteDeletion([r('deleted'), r('failed', { reason: 'Forbidden', message: 'syncs is forbidden' })])).toEqual({ refused: 'deleting the remote Sync failed: syncs is forbidden' });
  });

  test('nothing left to delete (gone, or not ours): gone, the copies go next', () => {
    expect(remoteDeletion([])).toEqual({ gone: true });
    expect(remoteDeletion([r('skipped')])).toEqual({ gone: true });
  });
});
