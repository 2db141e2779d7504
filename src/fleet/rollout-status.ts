// A rollout's plan (rollout.ts) written onto the FleetSync's status (from
// fleet-status.ts): its phase, waves and message; a halted, paused or held
// rollout says so in Ready. Pure.
import { ConditionType, Reason } from '../api/conditions.js';
import type { FleetPhase, FleetSyncStatus } from '../api/fleet.js';
import { setCondition, type Condition } from '../runtime/conditions.js';
import type { RolloutPlan } from './rollout.js';

const HELD: Partial<Record<FleetPhase, [Condition['status'], string]>> = {
  Halted: ['False', Reason.RolloutHalted],
  Paused: ['Unknown', Reason.Progressing],
  AwaitingApproval: ['Unknown', Reason.Progressing],
  Soaking: ['Unknown', Reason.Progressing],
};

/**
 * The status with the rollout's plan. Every cluster Ready with the update
 * revision (`status.phase` Complete) is Complete whatever the plan waits for
 * (a soak, after an undo to the revision the rest already run): nothing is
 * left to roll, so the plan's message goes too.
 */
export function withRollout(status: FleetSyncStatus, plan: RolloutPlan | undefined, generation: number | undefined): FleetSyncStatus {
  if (!plan) {
    const { waves: _waves, message: _message, ...rest } = status;
    return rest;
  }
  const next: FleetSyncStatus = { ...status, waves: plan.waves };
  if (plan.message !== undefined && status.phase !== 'Complete') next.message = plan.message;
  else delete next.message;
  if (status.phase === 'Complete') return next;
  next.phase = plan.phase;
  // Every wave done, unreachable clusters skipped (onUnreachable: Skip): the revision is the current one.
  if (plan.phase === 'Complete') next.currentRevision = status.updateRevision;
  const how = HELD[plan.phase];
  if (how && plan.message) {
    next.conditions = setCondition(next.conditions, { type: ConditionType.Ready, status: how[0], reason: how[1], message: plan.message, observedGeneration: generation });
  }
  return next;
}
