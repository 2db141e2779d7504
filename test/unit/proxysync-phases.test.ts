// ProxySync's phase decisions: which remote answers halt it, when a halted
// ProxySync goes again and what its status says, and whether its remote Sync
// is applied or left as it is.
import { describe, expect, test } from '@jest/globals';
import { ConditionType, Reason } from '../../src/api/conditions.js';
import type { ProxySyncSpec } from '../../src/api/objects.js';
import type { Drift } from '../../src/apply/drift.js';
import { clusterName, Conflict, FAILURE_RETRY_MS, Halt, haltRetry, haltStatus, refusal, remoteSyncStep } from '../../src/controllers/proxysync-phases.js';
import { ApiError, NotKubernetesError, TransportError } from '../../src/kube/errors.js';
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
