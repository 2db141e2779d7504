// The status a ProxySync mirrors from its remote Sync: Ready once the remote
// Sync speaks for what it was last given (and is not suspended by hand), its
// revisions and summary, and where it is. What is read of the remote status is
// checked, stripped and bounded first (proxy/remote-status.ts), and it counts
// only when it holds together for the spec we gave. Pure; proxysync.ts reads
// the remote Sync and writes it.
import { ConditionType, Reason } from '../api/conditions.js';
import type { InventoryEntry } from '../api/status.js';
import type { Drift } from '../apply/drift.js';
import { holds, type ManagedFieldsEntry } from '../apply/managed-fields.js';
import type { KubeObject } from '../kube/resources.js';
import { equalJson } from '../proxy/remote-sync.js';
import { remoteStatusOf, type RemoteCondition, type RemoteStatus } from '../proxy/remote-status.js';
import { removeCondition, setCondition, type Condition } from '../runtime/conditions.js';
import { driftChange } from './sync-drift.js';
import type { SyncStatusDraft } from './sync-status.js';

/**
 * Why the remote Sync's status does not yet speak for what we gave it;
 * undefined when it does. It does when it has observed the generation we
 * applied (its spec is what we gave: see remoteSyncStep) and handled our
 * mark, and its Ready condition holds together with that: written for the
 * same generation, and, when True, for the revision it last attempted (as a
 * dependency's is judged: API.md). A condition written alone (a forged Ready,
 * one left from an older spec) counts for nothing.
 */
export function remoteLag(live: KubeObject, mark: string | undefined, status: RemoteStatus = remoteStatusOf(live)): string | undefined {
  const where = `${live.metadata.namespace}/${live.metadata.name}`;
  const generation = live.metadata.generation;
  if (generation !== undefined && status.observedGeneration !== generation) {
    return `waiting for the remote Sync ${where} to observe generation ${generation} (observed: ${status.observedGeneration ?? 'none'}; is the syncprims operator running in that cluster?)`;
  }
  if (mark !== undefined && status.lastHandledReconcileAt !== mark) {
    return `waiting for the remote Sync ${where} to handle the latest reconcile request or content of its related objects`;
  }
  return readyLag(where, status, generation);
}

/** Why the remote Sync's Ready condition does not hold together with the rest of its status (see remoteLag); undefined when it does. */
function readyLag(where: string, status: RemoteStatus, generation: number | undefined): string | undefined {
  const ready = status.conditions.find((c) => c.type === ConditionType.Ready);
  if (!ready) return undefined;
  if (generation !== undefined && ready.observedGeneration !== generation) {
    return `waiting for the remote Sync ${where} to report Ready for generation ${generation}: its Ready condition is of generation ${ready.observedGeneration ?? 'none'} (not counted)`;
  }
  const { lastAppliedRevision: applied, lastAttemptedRevision: attempted } = status;
  if (ready.status === 'True' && (applied === undefined || applied !== attempted)) {
    return `waiting for the remote Sync ${where} to apply the revision it attempted: it says Ready with lastAppliedRevision ${applied ?? 'none'} and lastAttemptedRevision ${attempted ?? 'none'} (not counted: a Ready that does not hold together with its revisions; is anything but its syncprims operator writing its status?)`;
  }
  return undefined;
}

/** The managedFields path of `spec.suspend`. */
const SUSPEND_FIELD = ['f:spec', 'f:suspend'];

/**
 * Who suspended the remote Sync by hand: undefined when it is not suspended,
 * or when the template suspends it (then it is ours, and mirrored as it is);
 * else the field managers that own its `spec.suspend` (from managedFields,
 * sorted; none when its entry is not among those read: see proxysync.ts).
 */
export function handSuspenders(live: KubeObject, templateSuspends: boolean): string[] | undefined {
  if (templateSuspends || (live.spec as { suspend?: unknown } | undefined)?.suspend !== true) return undefined;
  const entries = (Array.isArray(live.metadata.managedFields) ? live.metadata.managedFields : []) as ManagedFieldsEntry[];
  const owners = entries.filter((e) => e?.manager && !e.subresource && holds(e.fieldsV1, SUSPEND_FIELD)).map((e) => e.manager!);
  return [...new Set(owners)].sort();
}

/**
 * The remote Sync was suspended by hand (`by`: the field managers that set
 * `spec.suspend`): it applies nothing we give it until resumed there. One
 * message for the whole suspension (nothing in it changes while it lasts).
 */
function handSuspendedMessage(live: KubeObject, cluster: string, by: string[]): string {
  const where = `${live.metadata.namespace}/${live.metadata.name}`;
  const who = by.length > 0 ? `field manager ${by.join(', ')}` : 'a field manager other than syncprims (not named in its managedFields)';
  return `the remote Sync ${where} in cluster ${cluster} was suspended by hand, by ${who} (spec.suspend: true, which the template does not set): it applies nothing the ProxySync gives it until it is resumed there (syncprims resume sync/${live.metadata.name} -n ${live.metadata.namespace}, or remove spec.suspend)`;
}

/**
 * The remote Sync was changed by someone else (`drift`: which fields, by
 * whom) and its correction waits (backed off, as a fight is). No countdown:
 * the message stays the same while it waits, so a fight does not rewrite
 * the ProxySync's status.
 */
function heldBackMessage(live: KubeObject, drift: Drift): string {
  const where = `${live.metadata.namespace}/${live.metadata.name}`;
  return `the remote Sync ${where} differs from the template, ${driftChange(drift)}: it is put back when its correction, backed off while it keeps being changed (fighting), is due (see the Drifted Event)`;
}

/**
 * The ProxySync's status from its remote Sync: Ready and Stalled mirrored
 * (Ready only once the remote Sync speaks for what we last gave it, and is
 * not held back changed by someone else (`heldBack`, that drift): else Ready=Unknown,
 * reason RemoteNotReady; and not when it was suspended by hand (`suspendedBy`,
 * see handSuspenders): then Ready=False, reason RemoteSuspended, naming who),
 * revisions, summary, and under `remote` its location, observedGeneration and
 * pending dependencies.
 */
export function mirroredStatus(
  base: SyncStatusDraft,
  live: KubeObject,
  remote: { cluster: string; mark: string | undefined; inventory: InventoryEntry[]; heldBack?: Drift; suspendedBy?: string[] },
  generation: number | undefined,
  now: Date,
): SyncStatusDraft {
  const rs = remoteStatusOf(live);
  const lag = remote.heldBack ? heldBackMessage(live, remote.heldBack) : remoteLag(live, remote.mark, rs);
  const ready = rs.conditions.find((c) => c.type === ConditionType.Ready);
  let conditions = base.conditions ?? [];
  if (remote.suspendedBy) {
    const message = handSuspendedMessage(live, remote.cluster, remote.suspendedBy);
    conditions = setCondition(conditions, { type: ConditionType.Ready, status: 'False', reason: Reason.RemoteSuspended, message, observedGeneration: generation }, now);
    conditions = removeCondition(removeCondition(conditions, ConditionType.Reconciling), ConditionType.Stalled);
  } else if (lag !== undefined || !ready) {
    const message = lag ?? `waiting for the remote Sync ${live.metadata.namespace}/${live.metadata.name} to report Ready`;
    conditions = setCondition(conditions, { type: ConditionType.Ready, status: 'Unknown', reason: Reason.RemoteNotReady, message, observedGeneration: generation }, now);
    conditions = setCondition(conditions, { type: ConditionType.Reconciling, status: 'True', reason: Reason.RemoteNotReady, message, observedGeneration: generation }, now);
    conditions = removeCondition(conditions, ConditionType.Stalled);
  } else {
    conditions = mirrorCondition(conditions, rs.conditions, ConditionType.Ready, generation, now);
    conditions = mirrorCondition(conditions, rs.conditions, ConditionType.Reconciling, generation, now);
    conditions = mirrorCondition(conditions, rs.conditions, ConditionType.Stalled, generation, now);
  }
  const previous = base.remote as Record<string, unknown> | undefined;
  const seen = {
    cluster: remote.cluster,
    namespace: live.metadata.namespace ?? '',
    name: live.metadata.name ?? '',
    observedGeneration: rs.observedGeneration,
    pendingDependencies: rs.pendingDependencies?.length ? rs.pendingDependencies : undefined,
  };
  const unchanged = previous !== undefined && equalJson({ ...previous, lastSeenAt: undefined }, { ...seen, lastSeenAt: undefined });
  const lastSeenAt = unchanged ? (previous.lastSeenAt as string | undefined) : now.toISOString();
  return {
    ...base,
    conditions,
    lastAttemptedRevision: rs.lastAttemptedRevision,
    lastAppliedRevision: rs.lastAppliedRevision,
    summary: rs.summary,
    inventory: { entries: remote.inventory },
    remote: dropUndefined({ ...seen, lastSeenAt }),
  };
}

/** The remote condition of `type` as ours (its observedGeneration: ours), or ours removed when the remote has none. */
function mirrorCondition(ours: Condition[], theirs: RemoteCondition[], type: string, generation: number | undefined, now: Date): Condition[] {
  const c = theirs.find((t) => t.type === type);
  if (!c) return removeCondition(ours, type);
  return setCondition(ours, { type, status: c.status, reason: c.reason, message: c.message, observedGeneration: generation }, now);
}

function dropUndefined<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
