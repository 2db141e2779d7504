// When reconcile, suspend and resume are done, read from a sync's status as the operator writes it.
import { describe, expect, test } from '@jest/globals';
import { NOT_TAKEN, pendingText, remoteOf, verdictOf, type Goal } from '../../src/cli/drive/drive-state.js';
import type { KubeObject } from '../../src/kube/resources.js';

const MARK = '2030-01-01T00:00:00.000Z';
const reconciled: Goal = { kind: 'reconciled', mark: MARK };
const REV = `sha256:${'ab'.repeat(32)}`;

type Cond = { type: string; status: 'True' | 'False' | 'Unknown'; reason: string; message?: string; observedGeneration?: number };

function sync(status: Record<string, unknown>, opts: { generation?: number; conditions?: Cond[]; kind?: string } = {}): KubeObject {
  const generation = opts.generation ?? 2;
  const conditions = (opts.conditions ?? []).map((c) => ({ message: '', lastTransitionTime: '2030-01-01T00:00:00Z', ...c }));
  return {
    apiVersion: 'syncprims.dev/v1alpha1',
    kind: opts.kind ?? 'Sync',
    metadata: { name: 'app', namespace: 'fleet', generation },
    status: { observedGeneration: generation, lastHandledReconcileAt: MARK, lastAttemptedRevision: REV, lastAppliedRevision: REV, conditions, ...status },
  };
}

const ready = (status: Cond['status'], reason: string, message = '', extra: Partial<Cond> = {}): Cond => ({ type: 'Ready', status, reason, message, ...extra });
const reconciling: Cond = { type: 'Reconciling', status: 'True', reason: 'Progressing', message: '' };

describe('verdictOf, reconciled', () => {
  test('Ready for the request and the generation: done', () => {
    expect(verdictOf(sync({}, { conditions: [ready('True', 'Succeeded', `applied revision ${REV}`)] }), reconciled)).toEqual({
      state: 'ready',
      message: `applied revision ${REV}`,
    });
  });

  test('the request not yet echoed, or an old generation: not taken yet', () => {
    const done = [ready('True', 'Succeeded')];
    expect(verdictOf(sync({ lastHandledReconcileAt: 'before' }, { conditions: done }), reconciled)).toEqual({ state: 'working', doing: NOT_TAKEN });
    expect(verdictOf(sync({ observedGeneration: 1 }, { conditions: done }), reconciled)).toEqual({ state: 'working', doing: NOT_TAKEN });
    expect(verdictOf(sync({}, { conditions: [ready('True', 'Succeeded', '', { observedGeneration: 1 })] }), reconciled).state).toBe('working');
    expect(verdictOf(sync({ conditions: undefined }), reconciled)).toEqual({ state: 'working', doing: NOT_TAKEN });
  });

  test('Ready but a new revision not yet applied (the readiness rule of dependencies): still at work', () => {
    const v = verdictOf(sync({ lastAttemptedRevision: 'sha256:ff' }, { conditions: [ready('True', 'Succeeded')] }), reconciled);
    expect(v.state).toBe('working');
  });

  test('waiting for dependencies is work in progress, named', () => {
    const pending = [
      { kind: 'Sync', name: 'base', reason: 'NotReady' },
      { kind: 'RemoteSync', name: 'edge', namespace: 'other', reason: 'NotFound' },
    ];
    const v = verdictOf(sync({ pendingDependencies: pending }, { conditions: [ready('False', 'DependencyNotReady', 'waiting for ...'), reconciling] }), reconciled);
    expect(v).toEqual({ state: 'working', doing: 'dependencies pending: Sync/base (NotReady), RemoteSync/other/edge (NotFound)' });
  });

  test('applying and waiting for health: the message, revisions shortened', () => {
    const applying = verdictOf(sync({}, { conditions: [ready('Unknown', 'Progressing', `applying revision ${REV}`), reconciling] }), reconciled);
    expect(applying).toEqual({ state: 'working', doing: 'applying revision sha256:abababababab' });
    const health = verdictOf(sync({}, { conditions: [ready('Unknown', 'Progressing', 'waiting for 1 of 2 objects: Deployment fleet/web (InProgress)'), reconciling] }), reconciled);
    expect(health).toEqual({ state: 'working', doing: 'waiting for 1 of 2 objects: Deployment fleet/web (InProgress)' });
  });

  test('Ready=False other than a dependency wait: failed, with reason and message', () => {
    expect(verdictOf(sync({}, { conditions: [ready('False', 'SourceError', 'ConfigMap fleet/x not found')] }), reconciled)).toEqual({
      state: 'failed',
      reason: 'SourceError',
      message: 'ConfigMap fleet/x not found',
    });
    expect(verdictOf(sync({}, { conditions: [ready('False', 'DependencyCycle', 'a -> b -> a'), { ...reconciling, status: 'False' }] }), reconciled).state).toBe('failed');
  });

  test('a ProxySync waiting for its remote Sync: the remote, and its own pending dependencies', () => {
    const remote = { cluster: 'edge-1', namespace: 'fleet', name: 'app', pendingDependencies: [{ kind: 'Sync', name: 'db', reason: 'NotReady' }] };
    const obj = sync({ remote }, { kind: 'ProxySync', conditions: [ready('Unknown', 'RemoteNotReady', 'waiting for the remote Sync fleet/app to report Ready'), reconciling] });
    expect(verdictOf(obj, reconciled)).toEqual({ state: 'working', doing: 'the remote Sync fleet/app in cluster edge-1 has dependencies pending: Sync/db (NotReady)' });
    const plain = sync({ remote: { ...remote, pendingDependencies: undefined } }, { kind: 'ProxySync', conditions: [ready('Unknown', 'RemoteNotReady', 'waiting for the remote Sync fleet/app to report Ready')] });
    expect(verdictOf(plain, reconciled)).toEqual({ state: 'working', doing: 'waiting for the remote Sync fleet/app to report Ready' });
    expect(remoteOf(obj)).toBe('fleet/app in cluster edge-1');
  });

  test('resumed but still marked Suspended: not done, whatever Ready says', () => {
    expect(verdictOf(sync({}, { conditions: [ready('True', 'Suspended')] }), reconciled)).toEqual({ state: 'working', doing: 'waiting for the operator to resume it' });
  });
});

describe('verdictOf, suspended', () => {
  const goal: Goal = { kind: 'suspended' };

  test('Ready keeps its status, its reason Suspended, for the current generation', () => {
    expect(verdictOf(sync({}, { conditions: [ready('False', 'Suspended')] }), goal)).toEqual({ state: 'suspended', ready: 'False' });
    expect(verdictOf(sync({ observedGeneration: 1 }, { conditions: [ready('True', 'Suspended')] }), goal).state).toBe('working');
    expect(verdictOf(sync({}, { conditions: [ready('True', 'Succeeded')] }), goal).state).toBe('working');
  });

  test('an invalid spec is never marked suspended: said as a failure', () => {
    expect(verdictOf(sync({}, { conditions: [ready('False', 'InvalidSpec', 'bad')] }), goal)).toEqual({ state: 'failed', reason: 'InvalidSpec', message: 'bad' });
  });
});

test('pendingText names dependencies as the operator does, the namespace only when another', () => {
  expect(pendingText([{ kind: 'ProxySync', name: 'p', namespace: 'fleet', reason: 'Progressing' }], 'fleet')).toBe('ProxySync/p (Progressing)');
});
