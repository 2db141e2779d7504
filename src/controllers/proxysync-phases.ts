// The decisions of ProxySync's phases, as pure functions: a step that cannot
// go on (Halt, Conflict), which of the remote cluster's answers are such a
// step, when a halted ProxySync goes again and what its status says, whether
// the remote Sync is created, adopted or a conflict, whether it is applied or
// left as it is, what a suspended ProxySync says, and whether a deleted one's
// remote Sync is gone; a spec the operator's mode refuses, a namespace an
// impersonated write did not find. proxysync.ts does the I/O around them.
import { Reason } from '../api/conditions.js';
import { RECONCILE_REQUESTED_AT_ANNOTATION } from '../api/marks.js';
import type { ProxySyncSpec } from '../api/objects.js';
import type { InventoryEntry } from '../api/status.js';
import type { Drift } from '../apply/drift.js';
import { missingNamespaceOf, UNREACHABLE, type ObjectResult } from '../apply/engine.js';
import { objectId } from '../apply/inventory.js';
import { holderText, ownedByOther, unowned, type Owner } from '../apply/owner.js';
import { ApiError, NotKubernetesError, ResponseLimitError } from '../kube/errors.js';
import type { KubeObject } from '../kube/resources.js';
import { carriesAll } from '../proxy/remote-sync.js';
import type { ReconcileResult } from '../runtime/controller.js';
import { listProblems } from '../runtime/messages.js';
import { notKubernetesMessage, unreachableMessage } from './cluster-access.js';
import { mirroredStatus } from './proxysync-status.js';
import { failed, progressing, suspended, type SyncStatusDraft } from './sync-status.js';

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
 * `cluster`: its name, and the name of its client (what an ApiError's cluster says).
 */
export function refusal(err: unknown, cluster: { name: string; client: { name: string } }): Halt | undefined {
  // Its server answers, so its reachability stays; but not as a Kubernetes API server does: said, and tried again later.
  if (err instanceof NotKubernetesError) return new Halt(Reason.ClusterUnreachable, notKubernetesMessage(cluster.name, err.message));
  // An answer past a bound (too large, too slow: a watch of the remote Sync too): said as a RemoteSync says it.
  if (err instanceof ResponseLimitError) return new Halt(Reason.ClusterUnreachable, unreachableMessage(cluster.name, err.message));
  // Only the remote cluster's answers: a write of the ProxySync itself (its finalizer, its status) refused in the managing cluster is not.
  if (!(err instanceof ApiError) || err.cluster !== cluster.client.name) return undefined;
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

/** Where the remote Sync lives: its namespace and name, and the name of its cluster. */
export interface RemotePlace {
  namespace: string;
  name: string;
  cluster: string;
}

/**
 * The claim on an object the ProxySync writes in the remote cluster (the
 * remote Sync in phase 3, a copy in phase 5; `what`: it and its cluster, as
 * messages name it): none there (`create`; for the remote Sync, its namespace
 * first), one without owner labels taken over only with `adopt`
 * (`spec.adopt`: the apply labels it), or ours. One that another owner's
 * labels name, or that carries none without `adopt`, is a Conflict, thrown:
 * nothing is written to it, and it is never deleted by us (our prune deletes
 * only what carries our marks).
 */
export function claimOf(existing: KubeObject | undefined, owner: Owner, what: string, adopt: boolean): 'create' | 'adopt' | 'ours' {
  if (!existing) return 'create';
  if (ownedByOther(existing, owner)) throw new Conflict(`${what} is owned by ${holderText(existing, owner)}: left alone`, objectId(existing));
  if (!unowned(existing)) return 'ours';
  if (adopt) return 'adopt';
  throw new Conflict(
    `${what} carries no syncprims owner labels (made by someone else, or by hand): left alone, neither changed nor deleted; delete it there, or set spec.adopt: true to take it over (refused when the operator impersonates)`,
    objectId(existing),
  );
}

/** The remote Sync, as claimOf and messages name it. */
export function remoteSyncText(place: RemotePlace): string {
  return `the Sync ${place.namespace}/${place.name} in cluster ${place.cluster}`;
}

/** The remote namespace is missing and the identity may not create it (`err`, the 403): ApplyFailed, saying what to do. */
export function namespaceRefused(err: ApiError, place: Pick<RemotePlace, 'namespace' | 'cluster'>): Halt {
  return new Halt(Reason.ApplyFailed, `cannot create namespace ${place.namespace} in cluster ${place.cluster}: ${err.message}; create it, or grant the kubeconfig's identity create on namespaces`);
}

/**
 * A write as the ProxySync's account (see remoteWriter) met a missing
 * namespace (`err`, the 404 that names it): ApplyFailed, saying what to do,
 * since that account creates no namespaces (and we create none for it).
 * Undefined for any other error.
 */
export function namespaceMissing(err: unknown, place: Pick<RemotePlace, 'namespace' | 'cluster'>, account: string): Halt | undefined {
  const missing = missingNamespaceOf(err).missingNamespace;
  if (missing === undefined) return undefined;
  return new Halt(
    Reason.ApplyFailed,
    `namespace ${missing} does not exist in cluster ${place.cluster}: the ProxySync writes there as the service account ${place.namespace}/${account} (the operator impersonates), and no namespace is created for it; create the namespace there, and grant that account get, create, patch and delete on syncs.syncprims.dev, configmaps and secrets in it`,
  );
}

/** A spec the operator's mode refuses (see tenancyProblem): InvalidSpec (Stalled), not tried again until the spec changes. */
export function invalidSpec(message: string): Halt {
  return new Halt(Reason.InvalidSpec, message, {});
}

/**
 * The status of a suspended ProxySync: nothing is written in the remote
 * cluster, but the remote Sync's status (`live`, when it is there and the
 * cluster could be read) is still mirrored; Ready keeps that status, its
 * reason Suspended.
 */
export function suspendedStatus(
  status: SyncStatusDraft,
  live: KubeObject | undefined,
  remote: { cluster: string; inventory: InventoryEntry[] },
  generation: number | undefined,
  now: Date,
): SyncStatusDraft {
  const mark = live?.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
  const mirrored = live ? mirroredStatus(status, live, { ...remote, mark }, generation, now) : status;
  return suspended(mirrored, generation);
}

/**
 * Where the deletion of a ProxySync stands, from the prune of its remote
 * Syncs (phase 2): refused by the remote cluster (a CleanUpFailed message);
 * still going (a delete was sent, or the cluster did not answer: its
 * deletion event, or the backstop, brings it back); or gone, when the
 * copies are removed.
 */
export function remoteDeletion(results: ObjectResult[]): { refused: string } | { waitingFor: string[] } | { gone: true } {
  const refused = results.filter((r) => r.action === 'failed' && r.reason !== UNREACHABLE);
  if (refused.length > 0) return { refused: `deleting the remote Sync failed: ${listProblems(refused.map((f) => f.message ?? ''))}` };
  const deleting = results.filter((r) => r.action === 'deleted' || r.action === 'failed');
  if (deleting.length > 0) return { waitingFor: deleting.map((r) => r.id) };
  return { gone: true };
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
  const matches = carriesAll(live, desired);
  return { apply: !matches && !heldBack, heldBack: matches ? undefined : heldBack };
}

/** The name of the kubeconfig Secret or of the Cluster (API.md: `status.remote.cluster`). */
export function clusterName(spec: ProxySyncSpec): string {
  return spec.kubeConfig?.secretRef.name ?? spec.clusterRef?.name ?? '';
}
