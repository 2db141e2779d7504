import { describe, expect, test } from '@jest/globals';
import { HOOK_RUN_ANNOTATION } from '../../src/api/marks.js';
import type { HooksStatus } from '../../src/api/status.js';
import { hookGroups, hookStage, hookState } from '../../src/apply/hook-plan.js';
import type { ChartHook } from '../../src/apply/hooks.js';
import type { KubeObject } from '../../src/kube/resources.js';

const hook = (name: string, phase: 'pre' | 'post', weight: number, kind = 'Job'): ChartHook => ({
  object: { apiVersion: kind === 'Job' ? 'batch/v1' : 'v1', kind, metadata: { name, namespace: 'apps' } },
  phase,
  weight,
  deletePolicies: ['before-hook-creation'],
});
const names = (hooks: ChartHook[]): string[] => hooks.map((h) => h.object.metadata.name!);

describe('hookGroups', () => {
  const hooks = [hook('a', 'pre', 5), hook('b', 'pre', -1), hook('c', 'post', 0), hook('d', 'pre', 5), hook('e', 'pre', -1, 'ConfigMap'), hook('f', 'post', -3)];

  test('the hooks of one phase in groups of equal weight, lightest first, the render order kept within a group', () => {
    const pre = hookGroups(hooks, 'pre');
    expect(pre.map((g) => g.weight)).toEqual([-1, 5]);
    expect(pre.map((g) => names(g.hooks))).toEqual([['b', 'e'], ['a', 'd']]);
    expect(hookGroups(hooks, 'post').map((g) => [g.weight, names(g.hooks)])).toEqual([[-3, ['f']], [0, ['c']]]);
  });

  test('a phase with no hooks has no groups', () => {
    expect(hookGroups([hook('c', 'post', 0)], 'pre')).toEqual([]);
  });
});

describe('hookStage: when hooks run, from status and revision', () => {
  const hooks = [hook('migrate', 'pre', 0), hook('smoke', 'post', 0)];
  const attempt = { generation: 3 };
  const record = (r: Partial<HooksStatus>): HooksStatus => ({ revision: 'r2', phase: 'Pre', generation: 3, entries: [], ...r });

  test('a set without hooks: none, whatever the status says', () => {
    expect(hookStage({ hooks: [], revision: 'r2', attempt })).toEqual({ stage: 'none' });
    expect(hookStage({ hooks: [], revision: 'r2', record: record({ phase: 'Pre' }), attempt })).toEqual({ stage: 'none' });
  });

  test('a revision new to the sync starts at its pre hooks, keeping the hooks recorded before (deleted with the sync)', () => {
    const entries = [{ id: 'apps_migrate_batch_Job', v: 'v1' }];
    expect(hookStage({ hooks, revision: 'r2', lastAppliedRevision: 'r1', record: record({ revision: 'r1', phase: 'Done', entries }), attempt })).toEqual({
      stage: 'pre',
      record: { revision: 'r2', phase: 'Pre', generation: 3, entries },
    });
    expect(hookStage({ hooks, revision: 'r2', attempt })).toEqual({ stage: 'pre', record: { revision: 'r2', phase: 'Pre', generation: 3, entries: [] } });
  });

  test('a revision applied already runs no hooks (a restart, or a status from before hooks were recorded)', () => {
    expect(hookStage({ hooks, revision: 'r2', lastAppliedRevision: 'r2', attempt })).toEqual({ stage: 'none' });
    expect(hookStage({ hooks, revision: 'r2', lastAppliedRevision: 'r2', record: record({ revision: 'r1', phase: 'Done' }), attempt })).toEqual({ stage: 'none' });
  });

  test('the same revision carries on where its status says (a restart runs nothing again)', () => {
    const running = record({ phase: 'Pre', weight: 0, since: '2026-12-01T10:00:00.000Z' });
    expect(hookStage({ hooks, revision: 'r2', lastAppliedRevision: 'r1', record: running, attempt })).toEqual({ stage: 'pre', record: running });
    expect(hookStage({ hooks, revision: 'r2', record: record({ phase: 'Set' }), attempt }).stage).toBe('set');
    expect(hookStage({ hooks, revision: 'r2', lastAppliedRevision: 'r2', record: record({ phase: 'Post', weight: 0 }), attempt }).stage).toBe('post');
    expect(hookStage({ hooks, revision: 'r2', lastAppliedRevision: 'r2', record: record({ phase: 'Done' }), attempt })).toEqual({ stage: 'none' });
  });

  test('a failed hook stays failed for its attempt; a new generation or reconcile request tries the revision again from the start', () => {
    const failedPre = record({ phase: 'Pre', weight: 0, since: '2026-12-01T10:00:00.000Z', failed: 'pre-install/pre-upgrade hook Job apps/migrate failed: boom' });
    expect(hookStage({ hooks, revision: 'r2', record: failedPre, attempt })).toEqual({ stage: 'failed', record: failedPre, message: failedPre.failed });
    expect(hookStage({ hooks, revision: 'r2', record: failedPre, attempt: { generation: 4 } })).toEqual({ stage: 'pre', record: { revision: 'r2', phase: 'Pre', generation: 4, entries: [] } });
    expect(hookStage({ hooks, revision: 'r2', record: failedPre, attempt: { generation: 3, requestedAt: 'now' } })).toEqual({
      stage: 'pre',
      record: { revision: 'r2', phase: 'Pre', generation: 3, requestedAt: 'now', entries: [] },
    });
    // A new revision after a failure: its hooks run.
    expect(hookStage({ hooks, revision: 'r3', record: failedPre, attempt }).stage).toBe('pre');
  });
});

describe('hookState: what a hook object says of its run', () => {
  const RUN = '2026-12-01T10:00:00.000Z';
  const obj = (kind: string, status: unknown, run: string | null = RUN): KubeObject => ({
    apiVersion: kind === 'Job' ? 'batch/v1' : 'v1',
    kind,
    metadata: { name: 'h', namespace: 'apps', ...(run ? { annotations: { [HOOK_RUN_ANNOTATION]: run } } : {}) },
    ...(status ? { status } : {}),
  });

  test('not there, or not marked with this run: Missing', () => {
    expect(hookState(undefined, RUN).status).toBe('Missing');
    expect(hookState(obj('ConfigMap', undefined, null), RUN).status).toBe('Missing');
    expect(hookState(obj('ConfigMap', undefined, '2026-11-30T10:00:00.000Z'), RUN).status).toBe('Missing');
  });

  test('a Job until Complete; Failed is the hook failed, with the condition message', () => {
    expect(hookState(obj('Job', { startTime: RUN, active: 1 }), RUN).status).toBe('Running');
    expect(hookState(obj('Job', { conditions: [{ type: 'Complete', status: 'True' }], succeeded: 1 }), RUN).status).toBe('Succeeded');
    const failed = hookState(obj('Job', { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }], failed: 2 }), RUN);
    expect(failed).toEqual({ status: 'Failed', message: 'failed: Job has reached the specified backoff limit (2 pods failed)' });
  });

  test('a Pod until Succeeded (Running and Ready is not done); Failed is failed', () => {
    const ready = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
    expect(hookState(obj('Pod', ready), RUN).status).toBe('Running');
    expect(hookState(obj('Pod', { phase: 'Succeeded' }), RUN).status).toBe('Succeeded');
    expect(hookState(obj('Pod', { phase: 'Failed', message: 'exit 1' }), RUN)).toEqual({ status: 'Failed', message: 'failed: exit 1' });
  });

  test('anything else once Current', () => {
    expect(hookState(obj('ConfigMap', undefined), RUN).status).toBe('Succeeded');
  });
});
