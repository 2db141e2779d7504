// What went wrong in a sync's reconcile, as the condition it reports and
// when it goes again: the errors of a source, a render, an apply and prune
// and a watch, mapped to a reason and a message a person can act on, and
// the retry each calls for. Pure; sync-pipeline.ts writes them.
import { Reason } from '../api/conditions.js';
import { ARRIVED_RETRY_MS } from '../apply/arrivals.js';
import { CRD_DELETION_RECHECK_MS } from '../apply/crd-deletion.js';
import { errorText, UNREACHABLE, type ObjectResult } from '../apply/engine.js';
import type { KindKey } from '../apply/render.js';
import { UnknownKindError } from '../kube/discovery.js';
import { ApiError, NotKubernetesError, ResponseLimitError, TransportError } from '../kube/errors.js';
import type { ReconcileResult } from '../runtime/controller.js';
import { listProblems } from '../runtime/messages.js';
import { notKubernetesMessage, unreachableMessage, type Outage } from './cluster-access.js';
import { VerificationError } from '../source/index.js';

/** The longest wait before a failed sync is tried again, unless a watch wakes it first (min(interval, this)). */
export const RETRY_SOURCE_MS = 30_000;

/** The least wait before a transient failure is tried again (a whole reconcile goes again, not one request). */
export const RETRY_TRANSIENT_MIN_MS = 1_000;

/** A condition to report, and the backoff it asks for when it is transient. */
export interface Problem {
  reason: Reason;
  message: string;
  retry?: { minDelayMs: number };
}

/**
 * Why a source did not render: `unknownKinds` are the kinds of the set the
 * target does not serve (CRDNotInstalled); `sourceKinds`, the kind of its
 * source object the home cluster does not serve (Flux not installed yet).
 */
export interface RenderProblem {
  reason: Reason;
  message: string;
  unknownKinds?: KindKey[];
  sourceKinds?: KindKey[];
  /** The source's signature did not hold (SourceVerified=False). */
  unverified?: boolean;
}


/** What a render that threw says: the cluster, when discovery got no answer (or not a Kubernetes one); else the source. */
export function renderFailure(err: unknown, cluster: string, outage?: Outage): RenderProblem {
  if (err instanceof NotKubernetesError) return { reason: Reason.ClusterUnreachable, message: notKubernetesMessage(cluster, err.message) };
  if (err instanceof TransportError) return { reason: Reason.ClusterUnreachable, message: unreachableMessage(cluster, err.message, outage) };
  const unserved = err instanceof Error && err.cause instanceof UnknownKindError ? [{ apiVersion: err.cause.apiVersion, kind: err.cause.kind }] : undefined;
  const unverified = err instanceof VerificationError ? { unverified: true } : {};
  return { reason: Reason.SourceError, message: err instanceof Error ? err.message : String(err), sourceKinds: unserved, ...unverified };
}

/** What a render's errors say: kinds the target does not serve, else the source's errors; undefined when there are none. */
export function renderErrors(rendered: { errors: string[]; unknownKinds: KindKey[] }): RenderProblem | undefined {
  if (rendered.unknownKinds.length > 0) return { reason: Reason.CRDNotInstalled, message: listProblems(rendered.errors), unknownKinds: rendered.unknownKinds };
  if (rendered.errors.length > 0) return { reason: Reason.SourceError, message: listProblems(rendered.errors) };
  return undefined;
}

/**
 * The problem of a cluster that refuses to let the operator list or watch
 * what a sync applied (RBAC of its identity there), or whose watch of it
 * passed a bound of its answers (an event too large or too slow: not a
 * Kubernetes API server's answer): the watches are what health, drift and
 * no-op applies are read from. Other errors are thrown.
 */
export function watchRefusal(err: unknown, cluster: string, outage?: Outage): Problem {
  if (err instanceof ResponseLimitError) return { reason: Reason.ClusterUnreachable, message: unreachableMessage(cluster, err.message, outage) };
  if (!(err instanceof ApiError) || (err.status !== 403 && err.status !== 401)) throw err;
  return {
    reason: Reason.ApplyFailed,
    message: `cluster ${cluster} refused to let the operator watch what it applied (${errorText(err)}): health, drift and unchanged objects are read from watches; grant get, list and watch on the kinds the set applies`,
  };
}

/** The condition reason and message of what went wrong in an apply and prune, if anything. */
export function problemOf(applied: ObjectResult[], pruned: ObjectResult[], cluster: string, outage?: Outage): Problem | undefined {
  const failures = applied.filter((r) => r.action === 'failed');
  const conflicts = applied.filter((r) => r.action === 'conflict');
  const pruneFailures = pruned.filter((p) => p.action === 'failed');
  const problems = [...conflicts, ...failures, ...pruneFailures];
  if (problems.length === 0) return undefined;
  let reason: Reason = Reason.PruneFailed;
  const unanswered = [...failures, ...pruneFailures].filter((f) => f.reason === UNREACHABLE);
  if (unanswered.length > 0) {
    // The cluster stopped answering mid-way: that is the news, not each object's error.
    return { reason: Reason.ClusterUnreachable, message: unreachableMessage(cluster, unanswered[0]!.message ?? '', outage) };
  }
  if (failures.length > 0) {
    reason = failures.every((f) => f.reason === 'CRDNotInstalled') ? Reason.CRDNotInstalled : Reason.ApplyFailed;
  } else if (conflicts.length > 0) {
    reason = Reason.OwnershipConflict;
  }
  return { reason, message: listProblems(problems.map((p) => p.message ?? '')), ...retryOf(problems) };
}

/** Every problem transient (429, 5xx): a retry with backoff, at least the longest Retry-After (and a second). */
export function retryOf(problems: ObjectResult[]): { retry?: { minDelayMs: number } } {
  if (!problems.every((p) => p.transient)) return {};
  return { retry: { minDelayMs: Math.max(RETRY_TRANSIENT_MIN_MS, ...problems.map((p) => p.transient!.retryAfterMs)) } };
}

/**
 * When a failed reconcile goes again: a transient failure with backoff (the
 * server's Retry-After at least); one whose wait ended meanwhile (`arrived`)
 * soon; others after min(interval, 30 s), unless a watch wakes them first.
 */
export function afterProblem(problem: { retry?: { minDelayMs: number } }, arrived: boolean, interval: number): ReconcileResult {
  if (problem.retry) return { retry: problem.retry };
  if (arrived) return { retry: { minDelayMs: ARRIVED_RETRY_MS } };
  return failureRetry(interval);
}

/**
 * When an apply and prune that went wrong goes again: as afterProblem, except
 * that one which nudged a CRD being deleted that it waits for (and is not
 * transient) looks again within min(interval, 5 s), whether it is gone.
 */
export function afterApplyProblem(problem: { retry?: { minDelayMs: number } }, waits: { arrived: boolean; nudged: boolean }, interval: number): ReconcileResult {
  if (waits.nudged && !problem.retry) return { requeueAfterMs: Math.min(interval, CRD_DELETION_RECHECK_MS) };
  return afterProblem(problem, waits.arrived, interval);
}

/** A failure that nothing wakes: tried again after min(interval, 30 s). */
export function failureRetry(interval: number): ReconcileResult {
  return { requeueAfterMs: Math.min(interval, RETRY_SOURCE_MS) };
}
