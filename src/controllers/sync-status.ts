import { ConditionType, Reason, STALLED_REASONS } from '../api/conditions.js';
import type { InventoryEntry, Summary } from '../api/status.js';
import { findCondition, removeCondition, setCondition, type Condition } from '../runtime/conditions.js';

/** The status of a Sync or RemoteSync as the pipeline builds it. */
export interface SyncStatusDraft {
  observedGeneration?: number;
  conditions?: Condition[];
  lastAttemptedRevision?: string;
  lastAppliedRevision?: string;
  inventory?: { entries: InventoryEntry[] };
  summary?: Summary;
  lastHandledReconcileAt?: string;
  [key: string]: unknown;
}

/** Applying a new revision: Reconciling=True, Ready=Unknown/Progressing. */
export function progressing(s: SyncStatusDraft, message: string, generation?: number): SyncStatusDraft {
  let conditions = setCondition(s.conditions, {
    type: ConditionType.Reconciling,
    status: 'True',
    reason: Reason.Progressing,
    message,
    observedGeneration: generation,
  });
  conditions = setCondition(conditions, {
    type: ConditionType.Ready,
    status: 'Unknown',
    reason: Reason.Progressing,
    message,
    observedGeneration: generation,
  });
  return { ...s, conditions: removeCondition(conditions, ConditionType.Stalled) };
}

/** Ready=True/Succeeded; Reconciling and Stalled removed. */
export function succeeded(s: SyncStatusDraft, message: string, generation?: number): SyncStatusDraft {
  let conditions = setCondition(s.conditions, {
    type: ConditionType.Ready,
    status: 'True',
    reason: Reason.Succeeded,
    message,
    observedGeneration: generation,
  });
  conditions = removeCondition(removeCondition(conditions, ConditionType.Reconciling), ConditionType.Stalled);
  return { ...s, conditions };
}

/**
 * Ready=False with a reason. Stalled=True for reasons that need a spec change;
 * Reconciling stays True for a wait (DependencyNotReady), is removed otherwise.
 */
export function failed(s: SyncStatusDraft, reason: Reason, message: string, generation?: number): SyncStatusDraft {
  const common = { reason, message, observedGeneration: generation };
  let conditions = setCondition(s.conditions, { type: ConditionType.Ready, status: 'False', ...common });
  conditions = STALLED_REASONS.includes(reason)
    ? setCondition(conditions, { type: ConditionType.Stalled, status: 'True', ...common })
    : removeCondition(conditions, ConditionType.Stalled);
  conditions =
    reason === Reason.DependencyNotReady
      ? setCondition(conditions, { type: ConditionType.Reconciling, status: 'True', ...common })
      : removeCondition(conditions, ConditionType.Reconciling);
  return { ...s, conditions };
}

/** Suspended: Ready keeps its status, its reason becomes Suspended. */
export function suspended(s: SyncStatusDraft, generation?: number): SyncStatusDraft {
  const ready = findCondition(s.conditions, ConditionType.Ready);
  const conditions = setCondition(removeCondition(s.conditions, ConditionType.Reconciling), {
    type: ConditionType.Ready,
    status: ready?.status ?? 'Unknown',
    reason: Reason.Suspended,
    message: 'suspended: not reconciling until spec.suspend is false',
    observedGeneration: generation,
  });
  return { ...s, conditions };
}

/**
 * SourceVerified (a source with `verify`): True with what verified it, False
 * when its signature did not hold; removed for a source that verifies nothing.
 * Kept as it is when the source could not be read for another reason.
 */
export function withVerification(s: SyncStatusDraft, read: { verified?: string } | { unverified?: boolean; message: string }, generation?: number): SyncStatusDraft {
  if ('verified' in read && read.verified !== undefined) {
    const message = `verified: ${read.verified}`;
    return { ...s, conditions: setCondition(s.conditions, { type: ConditionType.SourceVerified, status: 'True', reason: Reason.Succeeded, message, observedGeneration: generation }) };
  }
  if ('unverified' in read && read.unverified) {
    return { ...s, conditions: setCondition(s.conditions, { type: ConditionType.SourceVerified, status: 'False', reason: Reason.VerificationFailed, message: read.message, observedGeneration: generation }) };
  }
  if ('message' in read) return s;
  return { ...s, conditions: removeCondition(s.conditions, ConditionType.SourceVerified) };
}
