// The RolloutApprovals of FleetSyncs' waves, read from the operator's watch
// (indexed by the FleetSync they name), and the admission policy that makes
// their approver their creator (watched by name: without it no approver is
// believed); one made, withdrawn or changed wakes that FleetSync. Which one
// approves what is the pure rule of fleet/approvals.ts; the WaveApproved
// Event is told here.
import type { FleetSyncStatus } from '../api/fleet.js';
import { approverTrust, newlyApproved, type ApprovalObject, type ApproverTrust, type PolicyObject } from '../fleet/approvals.js';
import type { FleetOwner } from '../fleet/children.js';
import type { KubeObject } from '../kube/resources.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Informer } from '../runtime/informer.js';
import type { Logger } from '../runtime/logger.js';

const BY_FLEET = 'syncprims.dev/rolloutapprovals-by-fleetsync';
/** The Event reason of a wave found approved. */
const WAVE_APPROVED = 'WaveApproved';
/** The Event reason of approvals that do not count (see fleet/approvals.ts approverTrust). */
const APPROVALS_NOT_COUNTED = 'ApprovalsNotCounted';

const fleetKeyOf = (obj: KubeObject): string | undefined => {
  const fleet = (obj as ApprovalObject).spec?.fleetSync;
  return typeof fleet === 'string' && fleet !== '' ? `${obj.metadata.namespace}/${fleet}` : undefined;
};

/** The approvals naming one FleetSync, and whether their approvers can be believed. */
export interface FleetApprovals {
  objects: ApprovalObject[];
  trust: ApproverTrust;
}

export class RolloutApprovals {
  /**
   * `informer`: the RolloutApprovals; `policy`, `binding`: the approver
   * policy and its binding (watched by name), without which no approver is believed.
   */
  constructor(
    private readonly informer: Informer<KubeObject>,
    private readonly policy: Informer<KubeObject>,
    private readonly binding: Informer<KubeObject>,
  ) {
    if (!informer.store.hasIndex(BY_FLEET)) {
      informer.store.addIndex(BY_FLEET, (obj) => {
        const key = fleetKeyOf(obj);
        return key ? [key] : [];
      });
    }
  }

  /** The approvals that name the FleetSync (of any revision or wave: the rule picks), and the trust in their approvers. */
  of(owner: Pick<FleetOwner, 'namespace' | 'name'>): FleetApprovals {
    const objects = this.informer.store.byIndex(BY_FLEET, `${owner.namespace}/${owner.name}`) as ApprovalObject[];
    return { objects, trust: approverTrust(this.policy.store.list()[0] as PolicyObject | undefined, this.binding.store.list()[0] as PolicyObject | undefined) };
  }

  /**
   * Calls `wake(namespace/fleetsync)` when an approval naming it comes,
   * changes or goes (withdrawn: the wave holds again); every FleetSync an
   * approval names when the policy or its binding changes.
   */
  follow(wake: (key: string) => void): void {
    this.informer.onEvent((e) => {
      for (const key of new Set([fleetKeyOf(e.object), e.old ? fleetKeyOf(e.old) : undefined])) if (key) wake(key);
    });
    const all = (): void => {
      for (const key of new Set(this.informer.store.list().map(fleetKeyOf))) if (key) wake(key);
    };
    this.policy.onEvent(all);
    this.binding.onEvent(all);
  }
}

/**
 * A Normal Event (and a log line) per wave that `next` newly finds
 * approved, naming who approved it and when; a Warning one when approvals
 * that name the wave the rollout waits at do not count (`approvalProblem`),
 * once per message.
 */
export async function reportApprovals(
  events: EventRecorder,
  obj: KubeObject,
  before: FleetSyncStatus,
  next: FleetSyncStatus,
  log: Logger,
  approvalProblem?: string,
): Promise<void> {
  if (approvalProblem !== undefined && before.message !== next.message) {
    log.warn({ revision: next.updateRevision, problem: approvalProblem }, 'approvals not counted');
    await events.record(obj, 'Warning', APPROVALS_NOT_COUNTED, approvalProblem);
  }
  for (const wave of newlyApproved(before, next)) {
    const message = `wave ${wave.name} approved for revision ${next.updateRevision} by ${wave.approvedBy} at ${wave.approvedAt}`;
    log.info({ wave: wave.name, revision: next.updateRevision, approvedBy: wave.approvedBy, approvedAt: wave.approvedAt }, 'wave approved');
    await events.record(obj, 'Normal', WAVE_APPROVED, message);
  }
}
