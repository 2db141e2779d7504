// The decisions of ProxySync's phases, as pure functions: a step that cannot
// go on (Halt, Conflict), which of the remote cluster's answers are such a
// step, when a halted ProxySync goes again and what its status says, and
// whether the remote Sync is applied or left as it is. proxysync.ts does
// the I/O around them.
import { Reason } from '../api/conditions.js';
import type { ProxySyncSpec } from '../api/objects.js';
import type { Drift } from '../apply/drift.js';
import { ApiError, NotKubernetesError } from '../kube/errors.js';
import type { KubeObject } from '../kube/resources.js';
import { remoteSyncMatches } from '../proxy/remote-sync.js';
import type { ReconcileResult } from '../runtime/controller.js';
import { notKubernetesMessage } from './cluster-access.js';
import { failed, progressing, type SyncStatusDraft } from './sync-status.js';

/** The longest wait before a ProxySync that failed is tried again (as a Sync's failures: min(interval, this)). */
export const FAILURE_RETRY_MS = 30_000;

/** A step cannot go on: report it (status, and an Event when `event`) and come back as `result` says. */
export class Halt extends Error {
  constructor(
    readonly reason: Reason,
    message: string,
    readonly result: ReconcileResult | undefined = undefined,
    /** A wait (Ready=Unknown, Reconciling=True), not a failure. */
    readonly wait = false,
  ) {
    super(message);
  }
}

/**
 * What the ProxySync would write in the remote cluster (the remote Sync, a
 * copy) carries another owner's labels: OwnershipConflict, taken up again the
 * moment the remote cluster's watch sees that object deleted or given other
 * owner labels (another ProxySync of this operator letting it go), else at
 * the failure retry (the watch follows only this operator's objects).
 */
export class Conflict extends Halt {
  constructor(
    message: string,
    /** The object's id. */
    readonly id: string,
  ) {
    super(Reason.OwnershipConflict, message);
  }
}

/**
 * A request the remote cluster refused for good (RBAC, validation, a namespace
 * that is not there): a failure the status and an Event name, tried again as
 * failures are. Others (no answer, 429 and 5xx, conflicts, and any answer of
 * the managing cluster) are the controller's to retry with backoff.
 * `cluster`: its name, and the name of its client (what an ApiError's origin says).
 */
export function refusal(err: unknown, cluster: { name: string; client: { name: string } }): Halt | undefined {
  // Its server answers, so its reachability stays; but not as a Kubernetes API server does: said, and tried again later.
  if (err instanceof NotKubernetesError) return new Halt(Reason.ClusterUnreachable, notKubernetesMessage(cluster.name, err.message));
  // Only the remote cluster's answers: a write of the ProxySync itself (its finalizer, its status) refused in the managing cluster is not.
  if (!(err instanceof ApiError) || err.origin !== cluster.client.name) return undefined;
  if (err.transient || err.conflict || err.status < 400) return undefined;
  return new Halt(Reason.ApplyFailed, `cluster ${cluster.name} refused ${err.message}`);
}

/** When a halted ProxySync is looked at again: a wait when what it waits for wakes it (or as the halt says), a failure after min(interval, 30 s). */
export function haltRetry(err: Halt, intervalMs: number): ReconcileResult | undefined {
  if (err.result || err.wait) return err.result;
  return { requeueAfterMs: Math.min(intervalMs, FAILURE_RETRY_MS) };
}

/** The status a halt writes: Reconciling for a wait, Ready=False with its reason for a failure. */
export function haltStatus(err: Halt, status: SyncStatusDraft, generation: number | undefined): SyncStatusDraft {
  return err.wait ? progressing(status, err.message, generation) : failed(status, err.reason, err.message, generation);
}

/** What the remote Sync phase does: apply the desired Sync, or leave it; and the drift that holds it back, for the mirrored status. */
export interface RemoteSyncStep {
  apply: boolean;
  /** Changed by someone else and its correction backed off: the status does not speak for the ProxySync. */
  heldBack?: Drift;
}

/**
 * Whether to apply the remote Sync: not when `live` already carries what
 * `desired` sets, nor when it was changed by someone else while its
 * correction is backed off (`waiting`) and we have nothing new to give it
 * (`applying`, what it is made of now, is what we `lastApplied`); a missing
 * one is applied at once.
 */
export function remoteSyncStep(
  live: KubeObject | undefined,
  desired: KubeObject,
  made: { applying: string; lastApplied: string | undefined },
  waiting: () => Drift | undefined,
): RemoteSyncStep {
  const heldBack = live !== undefined && made.lastApplied === made.applying ? waiting() : undefined;
  const matches = remoteSyncMatches(live, desired);
  return { apply: !matches && !heldBack, heldBack: matches ? undefined : heldBack };
}

/** The name of the kubeconfig Secret or of the Cluster (API.md: `status.remote.cluster`). */
export function clusterName(spec: ProxySyncSpec): string {
  return spec.kubeConfig?.secretRef.name ?? spec.clusterRef?.name ?? '';
}
