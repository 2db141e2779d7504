// Which RolloutApproval approves a wave of a FleetSync's rollout, and which
// waves a reconcile newly found approved (for the WaveApproved Event). Pure:
// the controller gives it the approvals of the namespace, from its watch.
import type { RolloutApprovalSpec } from '../api/approval.js';
import type { FleetSyncStatus, WaveStatus } from '../api/fleet.js';
import { boundedName } from './children.js';

/** A RolloutApproval as the rule reads it. */
export interface ApprovalObject {
  metadata: { name?: string; creationTimestamp?: string; deletionTimestamp?: string };
  spec?: Partial<RolloutApprovalSpec>;
}

/** Who approved a wave, and when: both recorded by the API server (the creator, as admission checked it; the creation time). */
export interface WaveApproval {
  approvedBy: string;
  approvedAt: string;
  /** The RolloutApproval's name. */
  approval: string;
}

/**
 * The approval of `wave` of FleetSync `fleet` for `revision`: among the
 * approvals of its namespace, those naming exactly that FleetSync, revision
 * and wave, not being deleted; the first made (then by name) when several
 * are. An approval of another revision or wave approves nothing.
 */
export function approvalOf(approvals: readonly ApprovalObject[], fleet: string, revision: string, wave: string): WaveApproval | undefined {
  const first = approvals
    .filter((a) => !a.metadata.deletionTimestamp && a.spec?.fleetSync === fleet && a.spec.revision === revision && a.spec.wave === wave && a.spec.approver)
    .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))[0];
  if (!first) return undefined;
  return { approvedBy: first.spec!.approver!, approvedAt: first.metadata.creationTimestamp ?? '', approval: first.metadata.name ?? '' };
}

/**
 * The waves `next` has approved that `before` did not (for the same update
 * revision; a new revision's approvals are all new), or approved by
 * someone else: each is told once, in a WaveApproved Event.
 */
export function newlyApproved(before: FleetSyncStatus, next: FleetSyncStatus): WaveStatus[] {
  const same = before.updateRevision === next.updateRevision;
  return (next.waves ?? []).filter((w) => {
    if (!w.approvedBy) return false;
    const was = same ? before.waves?.find((b) => b.name === w.name) : undefined;
    return was?.approvedBy !== w.approvedBy || was.approvedAt !== w.approvedAt;
  });
}

/**
 * The name `syncprims rollout approve` gives its RolloutApproval:
 * `<fleetsync>-<wave>-<revision>`, bounded as a child's name is. One per wave and revision: a second approve finds the first.
 */
export function approvalName(fleet: string, wave: string, revision: string): string {
  return boundedName(`${fleet}-${wave}-${revision}`);
}
