// The RolloutApprovals of FleetSyncs' waves, read from the operator's watch
// (indexed by the FleetSync they name); one made, withdrawn or changed wakes
// that FleetSync. Which one approves what is the pure rule of
// fleet/approvals.ts; the WaveApproved Event is told here.
import type { FleetSyncStatus } from '../api/fleet.js';
import { newlyApproved, type ApprovalObject } from '../fleet/approvals.js';
import type { FleetOwner } from '../fleet/children.js';
import type { KubeObject } from '../kube/resources.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Informer } from '../runtime/informer.js';
import type { Logger } from '../runtime/logger.js';

const BY_FLEET = 'syncprims.dev/rolloutapprovals-by-fleetsync';
/** The Event reason of a wave found approved. */
export const WAVE_APPROVED = 'WaveApproved';

const fleetKeyOf = (obj: KubeObject): string | undefined => {
  const fleet = (obj as ApprovalObject).spec?.fleetSync;
  return typeof fleet === 'string' && fleet !== '' ? `${obj.metadata.namespace}/${fleet}` : undefined;
};

export class RolloutApprovals {
  constructor(private readonly informer: Informer<KubeObject>) {
    if (!informer.store.hasIndex(BY_FLEET)) {
      informer.store.addIndex(BY_FLEET, (obj) => {
        const key = fleetKeyOf(obj);
        return key ? [key] : [];
      });
    }
  }

  /** The approvals that name the FleetSync (of any revision or wave: the rule picks). */
  of(owner: Pick<FleetOwner, 'namespace' | 'name'>): ApprovalObject[] {
    return this.informer.store.byIndex(BY_FLEET, `${owner.namespace}/${owner.name}`) as ApprovalObject[];
  }

  /** Calls `wake(namespace/fleetsync)` when an approval naming it comes, changes or goes (withdrawn: the wave holds again). */
  follow(wake: (key: string) => void): void {
    this.informer.onEvent((e) => {
      for (const key of new Set([fleetKeyOf(e.object), e.old ? fleetKeyOf(e.old) : undefined])) if (key) wake(key);
    });
  }
}

/** A Normal Event (and a log line) per wave that `next` newly finds approved, naming who approved it and when. */
export async function reportApprovals(events: EventRecorder, obj: KubeObject, before: FleetSyncStatus, next: FleetSyncStatus, log: Logger): Promise<void> {
  for (const wave of newlyApproved(before, next)) {
    const message = `wave ${wave.name} approved for revision ${next.updateRevision} by ${wave.approvedBy} at ${wave.approvedAt}`;
    log.info({ wave: wave.name, revision: next.updateRevision, approvedBy: wave.approvedBy, approvedAt: wave.approvedAt }, 'wave approved');
    await events.record(obj, 'Normal', WAVE_APPROVED, message);
  }
}
