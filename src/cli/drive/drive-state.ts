import { ConditionType, Reason } from '../../api/conditions.js';
import { RECONCILE_REQUESTED_AT_ANNOTATION } from '../../api/marks.js';
import type { PendingDependency } from '../../api/status.js';
import { unmetReason } from '../../deps/readiness.js';
import { displayNode } from '../../deps/refs.js';
import type { KubeObject } from '../../kube/resources.js';
import { findCondition, type Condition } from '../../runtime/conditions.js';
import { shortRevision } from '../format.js';

/**
 * Where a sync is after `reconcile`, `suspend` or `resume`, read from its
 * status as the operator writes it (API.md "Status"): still at work (and
 * doing what), or settled (Ready, not Ready, suspended).
 */

/** What the command waits for. */
export type Goal =
  /** The request (the annotation's value) handled, and the sync settled after it (also `resume`, which makes a request too). */
  | { kind: 'reconciled'; mark: string }
  /** The operator shows the sync suspended: Ready's reason `Suspended` for the current generation. */
  | { kind: 'suspended' };

export type Verdict =
  | { state: 'working'; doing: string }
  | { state: 'ready'; message: string }
  | { state: 'failed'; reason: string; message: string }
  | { state: 'suspended'; ready: string };

/** Said while the operator has not yet written a status for the request (or the generation). */
export const NOT_TAKEN = 'waiting for the operator to take the request';

interface SyncStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  pendingDependencies?: PendingDependency[];
  lastHandledReconcileAt?: string;
  remote?: { namespace?: string; name?: string; cluster?: string; pendingDependencies?: PendingDependency[] };
}

export function verdictOf(obj: KubeObject, goal: Goal): Verdict {
  const status = (obj.status ?? {}) as SyncStatus;
  const ready = findCondition(status.conditions, ConditionType.Ready);
  const observed = isObserved(obj.metadata.generation, status, ready);
  if (goal.kind === 'suspended') return suspendVerdict(observed, ready);
  if (!observed || status.lastHandledReconcileAt !== goal.mark || !ready) return { state: 'working', doing: NOT_TAKEN };
  // Resumed, but not yet reconciled since: the condition still speaks for the suspension.
  if (ready.reason === Reason.Suspended) return { state: 'working', doing: 'waiting for the operator to resume it' };
  const reconciling = findCondition(status.conditions, ConditionType.Reconciling)?.status === 'True';
  if (ready.status === 'True' && !reconciling && unmetReason(obj, 'Current') === undefined) return { state: 'ready', message: ready.message };
  if (ready.status === 'False' && ready.reason !== Reason.DependencyNotReady && !reconciling) return failedOf(ready);
  return { state: 'working', doing: doingOf(obj, status, ready) };
}

/** The operator has written a status for the current generation (the Ready condition too, when it says which). */
function isObserved(generation: number | undefined, status: SyncStatus, ready: Condition | undefined): boolean {
  return status.observedGeneration === generation && (ready?.observedGeneration === undefined || ready.observedGeneration === generation);
}

function suspendVerdict(observed: boolean, ready: Condition | undefined): Verdict {
  if (observed && ready?.reason === Reason.Suspended) return { state: 'suspended', ready: ready.status };
  // An invalid spec is reported before suspension is looked at: nothing reconciles it anyway.
  if (observed && ready?.reason === Reason.InvalidSpec) return failedOf(ready);
  return { state: 'working', doing: 'waiting for the operator to mark it suspended' };
}

function failedOf(ready: Condition): Verdict {
  return { state: 'failed', reason: ready.reason, message: ready.message };
}

/** What a sync at work is doing, in a few words: dependencies pending (by name), applying, waiting for health, the remote Sync. */
function doingOf(obj: KubeObject, status: SyncStatus, ready: Condition): string {
  const namespace = obj.metadata.namespace ?? '';
  if (ready.reason === Reason.DependencyNotReady && status.pendingDependencies?.length) {
    return `dependencies pending: ${pendingText(status.pendingDependencies, namespace)}`;
  }
  const remote = status.remote;
  if (ready.reason === Reason.RemoteNotReady && remote?.pendingDependencies?.length) {
    return `the remote Sync ${remoteOf(obj)} has dependencies pending: ${pendingText(remote.pendingDependencies, remote.namespace ?? namespace)}`;
  }
  const message = ready.message ? shortRevision(ready.message) : '';
  if (!message) return ready.reason;
  return ready.reason === Reason.Progressing || ready.reason === Reason.RemoteNotReady ? message : `${ready.reason}: ${message}`;
}

/** `Sync/base (NotReady), RemoteSync/other/edge (NotFound)`. */
export function pendingText(pending: PendingDependency[], namespace: string): string {
  return pending.map((p) => `${displayNode({ kind: p.kind, name: p.name, namespace: p.namespace ?? namespace }, namespace)} (${p.reason})`).join(', ');
}

/** Whether `spec.suspend` is set. */
export function isSuspended(obj: KubeObject): boolean {
  return (obj.spec as { suspend?: unknown } | undefined)?.suspend === true;
}

/** The reconcile request the sync carries, if any. */
export function requestOf(obj: KubeObject): string | undefined {
  return obj.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
}

/** For a ProxySync: where its remote Sync is (from its status), e.g. `fleet/app in cluster edge-1`. */
export function remoteOf(obj: KubeObject): string | undefined {
  const remote = (obj.status as SyncStatus | undefined)?.remote;
  if (!remote?.name) return undefined;
  return `${remote.namespace}/${remote.name}${remote.cluster ? ` in cluster ${remote.cluster}` : ''}`;
}
