// A sync's reconcile, when something went wrong: the condition it reports
// (reason and message) and when it goes again, for each mix of results.
import { describe, expect, test } from '@jest/globals';
import { Reason } from '../../src/api/conditions.js';
import { ARRIVED_RETRY_MS } from '../../src/apply/arrivals.js';
import { CRD_DELETION_RECHECK_MS } from '../../src/apply/crd-deletion.js';
import { UNREACHABLE, type ObjectResult } from '../../src/apply/engine.js';
import { Reachability } from '../../src/clusters/reachability.js';
import { unreachableMessage } from '../../src/controllers/cluster-access.js';
import { UnknownKindError } from '../../src/kube/discovery.js';
import { ApiError, NotKubernetesError, ResponseLimitError, TransportError } from '../../src/kube/errors.js';
import {
  afterApplyProblem,
  afterProblem,
  failureRetry,
  problemOf,
  renderErrors,
  renderFailure,
  retryOf,
  RETRY_SOURCE_MS,
  RETRY_TRANSIENT_MIN_MS,
  watchRefusal,
} from '../../src/controllers/sync-problems.js';

const ok = (id: string): ObjectResult => ({ id, action: 'configured' });
const failedWith = (id: string, reason: string, extra: Partial<ObjectResult> = {}): ObjectResult => ({ id, action: 'failed', reason, message: `${id}: ${reason}`, ...extra });
const conflict = (id: string): ObjectResult => ({ id, action: 'conflict', reason: 'OwnershipConflict', message: `${id} is owned by Sync/x/y` });
const transient = (id: string, retryAfterMs: number): ObjectResult => failedWith(id, 'ServiceUnavailable', { transient: { retryAfterMs } });

describe('problemOf: apply and prune results to a condition', () => {
  test('all well (created, configured, unchanged, skipped, deleted): no problem', () => {
    expect(problemOf([ok('a'), { id: 'b', action: 'unchanged' }, { id: 'c', action: 'created' }], [{ id: 'd', action: 'deleted' }, { id: 'e', action: 'skipped' }], 'edge')).toBeUndefined();
    expect(problemOf([], [], 'edge')).toBeUndefined();
  });

  test('a failed apply: ApplyFailed, the objects listed conflicts first, then failures, then prunes; no retry', () => {
    const p = problemOf([ok('a'), failedWith('b', 'Invalid'), conflict('c')], [failedWith('d', 'Forbidden')], 'edge');
    expect(p).toEqual({ reason: Reason.ApplyFailed, message: 'c is owned by Sync/x/y; b: Invalid; d: Forbidden' });
  });

  test('only kinds not installed: CRDNotInstalled; mixed with another failure: ApplyFailed', () => {
    expect(problemOf([failedWith('a', 'CRDNotInstalled'), failedWith('b', 'CRDNotInstalled')], [], 'edge')?.reason).toBe(Reason.CRDNotInstalled);
    expect(problemOf([failedWith('a', 'CRDNotInstalled'), failedWith('b', 'Invalid')], [], 'edge')?.reason).toBe(Reason.ApplyFailed);
  });

  test('conflicts alone: OwnershipConflict; a prune that failed alone: PruneFailed', () => {
    expect(problemOf([ok('a'), conflict('b')], [], 'edge')).toEqual({ reason: Reason.OwnershipConflict, message: 'b is owned by Sync/x/y' });
    expect(problemOf([conflict('b')], [failedWith('d', 'Forbidden')], 'edge')?.reason).toBe(Reason.OwnershipConflict);
    expect(problemOf([ok('a')], [failedWith('d', 'PruneFailed')], 'edge')).toEqual({ reason: Reason.PruneFailed, message: 'd: PruneFailed' });
  });

  test('the cluster stopped answering: ClusterUnreachable naming the cluster and the first unanswered error, whatever else failed', () => {
    const p = problemOf([conflict('a'), failedWith('b', 'Invalid'), { id: 'c', action: 'failed', reason: UNREACHABLE, message: 'connect ECONNREFUSED' }], [], 'edge-1');
    expect(p).toEqual({ reason: Reason.ClusterUnreachable, message: 'cluster edge-1 is unreachable: no answer (connect ECONNREFUSED)' });
    expect(problemOf([], [{ id: 'd', action: 'failed', reason: UNREACHABLE, message: 'timeout' }], 'edge-1')?.reason).toBe(Reason.ClusterUnreachable);
  });

  test('a remote cluster in an outage: one message for it, whether met mid-apply, in discovery, or turned away at the door', () => {
    const outage = new Reachability({ now: () => Date.parse('2026-11-28T10:00:00Z') });
    outage.answered();
    outage.failed('no answer from https://127.0.0.1:6443: ECONNREFUSED');
    outage.failed('no answer from https://127.0.0.1:6443: ECONNRESET');
    const said = 'cluster edge-2 is unreachable: no answer from https://127.0.0.1:6443: ECONNREFUSED (last reached 2026-11-28T10:00:00.000Z)';
    const midApply = problemOf([{ id: 'c', action: 'failed', reason: UNREACHABLE, message: 'read ECONNRESET' }], [], 'edge-2', outage);
    expect(midApply).toEqual({ reason: Reason.ClusterUnreachable, message: said });
    expect(renderFailure(new TransportError('socket hang up'), 'edge-2', outage).message).toBe(said);
    const turnedAway = outage.admit();
    expect(turnedAway.go).toBe(false);
    expect(unreachableMessage('edge-2', turnedAway.go ? '' : turnedAway.message, outage)).toBe(said);
    // Reachable again (the failure was the request's own, not the cluster's): the request's error is told.
    outage.answered();
    expect(problemOf([{ id: 'c', action: 'failed', reason: UNREACHABLE, message: 'read ECONNRESET' }], [], 'edge-2', outage)?.message).toBe('cluster edge-2 is unreachable: no answer (read ECONNRESET)');
  });

  test('every problem transient: a retry after the longest Retry-After, at least a second', () => {
    expect(problemOf([transient('a', 0), transient('b', 0)], [], 'edge')).toMatchObject({ reason: Reason.ApplyFailed, retry: { minDelayMs: RETRY_TRANSIENT_MIN_MS } });
    expect(problemOf([transient('a', 5_000)], [transient('d', 2_000)], 'edge')?.retry).toEqual({ minDelayMs: 5_000 });
    // One that is not transient: no backoff retry (the interval's, or a watch, brings it back).
    expect(problemOf([transient('a', 5_000), failedWith('b', 'Invalid')], [], 'edge')?.retry).toBeUndefined();
    expect(problemOf([transient('a', 5_000), conflict('b')], [], 'edge')?.retry).toBeUndefined();
  });
});

describe('retryOf', () => {
  test('none transient, some, all', () => {
    expect(retryOf([failedWith('a', 'Invalid')])).toEqual({});
    expect(retryOf([transient('a', 3_000), failedWith('b', 'Invalid')])).toEqual({});
    expect(retryOf([transient('a', 3_000), transient('b', 500)])).toEqual({ retry: { minDelayMs: 3_000 } });
    expect(retryOf([transient('a', 500)])).toEqual({ retry: { minDelayMs: RETRY_TRANSIENT_MIN_MS } });
  });
});

describe('afterProblem: when a failed reconcile goes again', () => {
  test('a transient problem: its backoff retry, even when what it waited for arrived', () => {
    expect(afterProblem({ retry: { minDelayMs: 4_000 } }, true, 60_000)).toEqual({ retry: { minDelayMs: 4_000 } });
  });

  test('what it waited for arrived meanwhile: soon', () => {
    expect(afterProblem({}, true, 600_000)).toEqual({ retry: { minDelayMs: ARRIVED_RETRY_MS } });
  });

  test('else after min(interval, 30 s)', () => {
    expect(afterProblem({}, false, 600_000)).toEqual({ requeueAfterMs: RETRY_SOURCE_MS });
    expect(afterProblem({}, false, 5_000)).toEqual({ requeueAfterMs: 5_000 });
    expect(failureRetry(600_000)).toEqual({ requeueAfterMs: RETRY_SOURCE_MS });
  });
});

describe('afterApplyProblem: when an apply and prune that went wrong goes again', () => {
  test('it nudged a CRD being deleted that it waits for: within min(interval, 5 s), whether or not a namespace arrived', () => {
    expect(afterApplyProblem({}, { arrived: false, nudged: true }, 600_000)).toEqual({ requeueAfterMs: CRD_DELETION_RECHECK_MS });
    expect(afterApplyProblem({}, { arrived: true, nudged: true }, 600_000)).toEqual({ requeueAfterMs: CRD_DELETION_RECHECK_MS });
    expect(afterApplyProblem({}, { arrived: false, nudged: true }, 2_000)).toEqual({ requeueAfterMs: 2_000 });
  });

  test('a transient problem keeps its backoff, nudge or not; without a nudge, as afterProblem', () => {
    expect(afterApplyProblem({ retry: { minDelayMs: 4_000 } }, { arrived: false, nudged: true }, 600_000)).toEqual({ retry: { minDelayMs: 4_000 } });
    expect(afterApplyProblem({}, { arrived: true, nudged: false }, 600_000)).toEqual({ retry: { minDelayMs: ARRIVED_RETRY_MS } });
    expect(afterApplyProblem({}, { arrived: false, nudged: false }, 600_000)).toEqual({ requeueAfterMs: RETRY_SOURCE_MS });
  });
});

describe('a render that did not give a set', () => {
  test('its errors: kinds not served first (CRDNotInstalled, with the kinds to wait for), else SourceError; none: undefined', () => {
    const kinds = [{ apiVersion: 'example.com/v1', kind: 'Widget' }];
    expect(renderErrors({ errors: ['a.yaml: Widget not served', 'b.yaml: bad'], unknownKinds: kinds })).toEqual({
      reason: Reason.CRDNotInstalled,
      message: 'a.yaml: Widget not served; b.yaml: bad',
      unknownKinds: kinds,
    });
    expect(renderErrors({ errors: ['b.yaml: bad'], unknownKinds: [] })).toEqual({ reason: Reason.SourceError, message: 'b.yaml: bad' });
    expect(renderErrors({ errors: [], unknownKinds: [] })).toBeUndefined();
  });

  test('what it threw: the cluster when it did not answer (or not as Kubernetes), else the source, with a source kind not served', () => {
    expect(renderFailure(new TransportError('connect ECONNREFUSED'), 'edge-1')).toEqual({ reason: Reason.ClusterUnreachable, message: 'cluster edge-1 is unreachable: no answer (connect ECONNREFUSED)' });
    const notKube = renderFailure(new NotKubernetesError('GET /api/v1', 'https://127.0.0.1:1', 'an HTML page'), 'edge-1');
    expect(notKube.reason).toBe(Reason.ClusterUnreachable);
    expect(notKube.message).toMatch(/^cluster edge-1 is not usable: GET \/api\/v1: https:\/\/127\.0\.0\.1:1 answered an HTML page/);
    expect(renderFailure(new Error('fetch failed: 404'), 'edge-1')).toEqual({ reason: Reason.SourceError, message: 'fetch failed: 404', sourceKinds: undefined });
    const unserved = new Error('cannot read the GitRepository', { cause: new UnknownKindError('source.toolkit.fluxcd.io/v1', 'GitRepository') });
    expect(renderFailure(unserved, 'edge-1')).toEqual({
      reason: Reason.SourceError,
      message: 'cannot read the GitRepository',
      sourceKinds: [{ apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'GitRepository' }],
    });
    expect(renderFailure('a string', 'edge-1')).toEqual({ reason: Reason.SourceError, message: 'a string', sourceKinds: undefined });
  });
});

describe('watchRefusal', () => {
  test('401 and 403: a message naming the cluster, what the server said and the verbs to grant', () => {
    for (const status of [401, 403]) {
      const err = new ApiError(status, 'Forbidden', 'GET /api/v1/configmaps: configmaps is forbidden: User "x" cannot list resource "configmaps"');
      expect(watchRefusal(err, 'edge-2')).toEqual({
        reason: Reason.ApplyFailed,
        message:
          'cluster edge-2 refused to let the operator watch what it applied (configmaps is forbidden: User "x" cannot list resource "configmaps"): health, drift and unchanged objects are read from watches; grant get, list and watch on the kinds the set applies',
      });
    }
  });

  test('a watch that passed a bound of its answers: the cluster unusable, the bound named', () => {
    const err = new ResponseLimitError('GET /api/v1/configmaps', 'tenant/x (https://127.0.0.1:1)', 'bytes', 'one watch event of more than 16 MiB, the limit of an event');
    expect(watchRefusal(err, 'tenant/x')).toEqual({ reason: Reason.ClusterUnreachable, message: unreachableMessage('tenant/x', err.message) });
    expect(watchRefusal(err, 'tenant/x').message).toContain('one watch event of more than 16 MiB, the limit of an event');
  });

  test('any other error is thrown as it is', () => {
    const gone = new ApiError(500, 'InternalError', 'boom');
    expect(() => watchRefusal(gone, 'edge-2')).toThrow(gone);
    const transport = new TransportError('timeout');
    expect(() => watchRefusal(transport, 'edge-2')).toThrow(transport);
  });
});
