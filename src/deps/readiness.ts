import { ConditionType, type PendingReason } from '../api/conditions.js';
import type { RequiredStatus } from '../api/sync-spec.js';
import type { KubeObject } from '../kube/resources.js';
import { findCondition, type Condition } from '../runtime/conditions.js';

interface SyncStatusFields {
  observedGeneration?: number;
  lastAttemptedRevision?: string;
  lastAppliedRevision?: string;
  conditions?: Condition[];
}

/** A FleetSync says its revisions as the template it rolls out (updateRevision) and the one all its clusters are Ready with (currentRevision). */
interface FleetStatusFields {
  updateRevision?: string;
  currentRevision?: string;
}

/** The revision fields of any kind, as a sync says them. */
function revisionsOf(obj: KubeObject): SyncStatusFields {
  const status = (obj.status ?? {}) as SyncStatusFields & FleetStatusFields;
  return {
    ...status,
    lastAttemptedRevision: status.lastAttemptedRevision ?? status.updateRevision,
    lastAppliedRevision: status.lastAppliedRevision ?? status.currentRevision,
  };
}

/**
 * Why a dependency is not met, or undefined when it is (API.md): its
 * generation is observed, its attempted revision is its applied one, and it
 * is Ready (`Current`) or has merely applied that revision (`InProgress`). A
 * suspended dependency is judged by the status it kept.
 */
export function unmetReason(dep: KubeObject | undefined, required: RequiredStatus): PendingReason | undefined {
  if (!dep) return 'NotFound';
  if (dep.metadata.deletionTimestamp) return 'NotReady';
  const status = revisionsOf(dep);
  const generation = dep.metadata.generation;
  if (status.observedGeneration !== generation) return 'NotObserved';
  const ready = findCondition(status.conditions, ConditionType.Ready);
  if (ready?.observedGeneration !== undefined && ready.observedGeneration !== generation) return 'NotObserved';
  return revisionReason(status, ready) ?? (required === 'InProgress' ? undefined : readyReason(ready));
}

/** Unmet while a new revision is being applied (or was tried and failed): its old Ready does not count. */
function revisionReason(status: SyncStatusFields, ready: Condition | undefined): PendingReason | undefined {
  const applied = status.lastAppliedRevision;
  if (applied !== undefined && status.lastAttemptedRevision === applied) return undefined;
  // Nothing attempted and nothing to say: not started (e.g. a kind whose pipeline is not there).
  if (status.lastAttemptedRevision === undefined && ready === undefined) return 'NotReady';
  return ready?.status === 'False' ? 'NotReady' : 'Progressing';
}

function readyReason(ready: Condition | undefined): PendingReason | undefined {
  if (ready?.status === 'True') return undefined;
  return ready?.status === 'Unknown' ? 'Progressing' : 'NotReady';
}

/**
 * The parts of a sync object that dependency rules read. Its dependents are
 * woken when this changes, and not for other writes (a health message, the
 * summary), so a waiting dependent is reconciled a handful of times, not once
 * per status write.
 */
export function readinessFingerprint(obj: KubeObject): string {
  const status = revisionsOf(obj);
  const ready = findCondition(status.conditions, ConditionType.Ready);
  return JSON.stringify([
    obj.metadata.generation,
    obj.metadata.deletionTimestamp ?? null,
    status.observedGeneration ?? null,
    status.lastAttemptedRevision ?? null,
    status.lastAppliedRevision ?? null,
    ready?.status ?? null,
    ready?.reason ?? null,
    ready?.observedGeneration ?? null,
  ]);
}
