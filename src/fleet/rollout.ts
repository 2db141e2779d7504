// A progressive rollout of a FleetSync's update revision: which clusters'
// children take it now, wave by wave. Pure; the reconciler gives it where
// each cluster stands and writes what it decides. The rules (issue 35):
// - every selected cluster is in one wave (the first whose selector matches;
//   the rest in a last wave, or refused with `unmatched: Error`), decided when
//   the rollout starts (membership is kept in status) and for a cluster that
//   joins, when it joins;
// - a wave admits clusters only once every wave before it is Ready with the
//   revision and has soaked; at most maxInFlight of its clusters are taking
//   the revision at once; approval (a RolloutApproval of this revision and
//   wave, its approver in the wave's status) and gates come before its first
//   admission, and every admission after;
// - failing clusters past maxFailures halt it (nothing more is admitted; the
//   updated keep the revision), as does a cluster not Ready by the deadline;
// - unreachable is not failure (onUnreachable: Wait holds the wave, Skip does
//   not, Fail counts it); a cluster failing at an older revision takes the
//   new one at once (fixing forward), outside maxInFlight.
import { parseDuration } from '../api/duration.js';
import type { FleetPhase, FleetSyncStatus, RolloutSpec, WaveSpec, WaveStatus } from '../api/fleet.js';
import { matchesSelector } from '../clusters/label-selector.js';
import type { ApprovalProblem, WaveApproval } from './approvals.js';
import { someNames, type ClusterState } from './fleet-status.js';

/** A selected cluster, as the rollout sees it. */
export interface RolloutMember {
  name: string;
  labels: Record<string, string>;
  /** The revision its child carries; undefined without a child. */
  revision?: string;
  /** Where it stands against the update revision (fleet-status.ts clusterState). */
  state: ClusterState;
  /** When its child took the update revision (ms since the epoch), for the progress deadline. */
  admittedAt?: number;
  /** Its template of the update revision cannot be made (a value missing, an override that does not apply): it fails that revision, whatever its child has. */
  unmade?: boolean;
}

export interface RolloutInput {
  rollout: RolloutSpec;
  /** The revision being rolled out. */
  update: string;
  /** The status as it was: the waves' members and soaks of this revision's rollout. */
  previous: FleetSyncStatus;
  members: RolloutMember[];
  now: number;
  /** Who approved the wave for this revision (a RolloutApproval: `syncprims rollout approve`); undefined when nobody has. */
  approvalOf: (wave: string) => WaveApproval | ApprovalProblem | undefined;
  /** Why each wave's gates are not met yet, by wave name (read before planning: the planner asks nobody); a wave absent is free to go. */
  unmetGates: ReadonlyMap<string, string>;
}

export interface RolloutPlan {
  /** The clusters whose child has, or takes now, the update revision. */
  update: Set<string>;
  phase: FleetPhase;
  waves: WaveStatus[];
  message?: string;
  /** Clusters the rollout counts as failed although their child does not say so (past the deadline, unreachable with Fail). */
  failed: Map<string, ClusterState>;
  /** When to look again without an event (a soak's end, a deadline), in ms from now. */
  wakeInMs?: number;
  /** Why approvals that name the wave it waits at do not count (the approver policy missing or changed; made before it). */
  approvalProblem?: string;
}

const DEFAULT_DEADLINE = '15m';
/** Clusters a halted rollout's message names (the rest counted): status.failures has their reasons, the children the whole story. */
const NAMES_IN_MESSAGE = 10;
/** The wave of clusters no wave selects (`unmatched: LastWave`). */
export const UNMATCHED_WAVE = 'unmatched';

interface Wave {
  spec: WaveSpec;
  members: RolloutMember[];
}

/** The waves and their members: kept from the status while the same revision rolls, decided from labels for newcomers. */
export function assignWaves(input: Pick<RolloutInput, 'rollout' | 'update' | 'previous' | 'members'>): { waves: Wave[]; unmatched: string[] } {
  const specs: WaveSpec[] = input.rollout.waves?.length ? [...input.rollout.waves] : [{ name: 'all' }];
  const frozen = new Map<string, string>();
  if (input.previous.updateRevision === input.update) {
    for (const w of input.previous.waves ?? []) for (const m of w.members ?? []) frozen.set(m, w.name);
  }
  const waves: Wave[] = specs.map((spec) => ({ spec, members: [] }));
  const rest: Wave = { spec: { name: UNMATCHED_WAVE }, members: [] };
  for (const member of [...input.members].sort((a, b) => a.name.localeCompare(b.name))) {
    const kept = waves.find((w) => w.spec.name === frozen.get(member.name));
    const wave = kept ?? waves.find((w) => !w.spec.selector || matchesSelector(member.labels, w.spec.selector));
    (wave ?? rest).members.push(member);
  }
  if (rest.members.length > 0 && input.rollout.unmatched !== 'Error') waves.push(rest);
  return { waves, unmatched: input.rollout.unmatched === 'Error' ? rest.members.map((m) => m.name) : [] };
}

/** A member's standing in this rollout. */
interface Standing {
  member: RolloutMember;
  updated: boolean;
  state: ClusterState;
  /** Ready with the revision, or unreachable and skipped. */
  done: boolean;
}

function standing(member: RolloutMember, input: RolloutInput): Standing {
  const updated = member.revision === input.update;
  let state = member.state;
  const deadline = parseDuration(input.rollout.progressDeadline ?? DEFAULT_DEADLINE);
  if (updated && state.state === 'progressing' && member.admittedAt !== undefined && input.now - member.admittedAt > deadline) {
    const message = `not Ready with revision ${input.update} within the progress deadline (${input.rollout.progressDeadline ?? DEFAULT_DEADLINE})`;
    state = { state: 'failed', updated, reason: 'ProgressDeadlineExceeded', message };
  }
  const onUnreachable = input.rollout.onUnreachable ?? 'Wait';
  if (state.state === 'unreachable' && onUnreachable === 'Fail') state = { state: 'failed', updated, reason: 'ClusterUnreachable', message: state.message };
  const done = state.state === 'ready' || (state.state === 'unreachable' && onUnreachable === 'Skip');
  return { member, updated, state, done };
}

/** The plan of this reconcile (see the top of this file). */
export function planRollout(input: RolloutInput): RolloutPlan {
  const { waves, unmatched } = assignWaves(input);
  const plan: RolloutPlan = { update: new Set(), phase: 'Complete', waves: [], failed: new Map() };
  const wake = (ms: number): void => {
    plan.wakeInMs = Math.max(0, Math.min(plan.wakeInMs ?? Infinity, ms));
  };
  let open = true;
  if (unmatched.length > 0) {
    open = false;
    plan.phase = 'Halted';
    plan.message = `clusters no wave selects (unmatched: Error): ${someNames(unmatched, NAMES_IN_MESSAGE)}`;
  }
  waves.forEach((wave, i) => {
    const standings = wave.members.map((m) => standing(m, input));
    for (const s of standings) keepOrFixForward(s, input, plan, wake);
    const status = waveStatus(wave, standings);
    const approval = wave.spec.approval ? input.approvalOf(wave.spec.name) : undefined;
    if (approval && 'approvedBy' in approval) Object.assign(status, { approved: true, approvedBy: approval.approvedBy, approvedAt: approval.approvedAt });
    plan.waves.push(status);
    if (!open) return;
    open = false;
    const failing = standings.filter((s) => (s.updated || s.member.unmade === true) && s.state.state === 'failed');
    const maxFailures = wave.spec.maxFailures ?? input.rollout.maxFailures ?? 0;
    if (failing.length > maxFailures) {
      plan.phase = 'Halted';
      plan.message = `wave ${wave.spec.name}: ${failing.length} failing (at most ${maxFailures}): ${someNames(failing.map((s) => s.member.name), NAMES_IN_MESSAGE)}`;
      return;
    }
    if (standings.every((s) => s.done)) {
      if (i === waves.length - 1) open = true;
      else open = soaked(wave, status, input, plan, wake);
      return;
    }
    admit(wave, standings, status, input, plan, approval && 'problem' in approval ? approval.problem : undefined);
  });
  if (open) plan.phase = 'Complete';
  return plan;
}

/**
 * What holds whatever the wave: a cluster that has the revision keeps it
 * (never taken back within a rollout), one failing at an older revision
 * fixes forward at once; one taking it is looked at again at its deadline.
 */
function keepOrFixForward(s: Standing, input: RolloutInput, plan: RolloutPlan, wake: (ms: number) => void): void {
  if (s.state !== s.member.state) plan.failed.set(s.member.name, s.state);
  if (s.updated || s.state.state === 'failed') plan.update.add(s.member.name);
  if (s.updated && s.state.state === 'progressing' && s.member.admittedAt !== undefined) {
    wake(s.member.admittedAt + parseDuration(input.rollout.progressDeadline ?? DEFAULT_DEADLINE) - input.now + 1);
  }
}

/** A wave that is done: soaked yet? Its soak starts when it became done (kept in status) and starts again if it was not done meanwhile. */
function soaked(wave: Wave, status: WaveStatus, input: RolloutInput, plan: RolloutPlan, wake: (ms: number) => void): boolean {
  const soak = parseDuration(wave.spec.soak ?? input.rollout.soak ?? '0s');
  if (soak === 0) return true;
  const before = input.previous.updateRevision === input.update ? input.previous.waves?.find((w) => w.name === wave.spec.name)?.soakUntil : undefined;
  const until = before !== undefined ? Date.parse(before) : input.now + soak;
  status.soakUntil = new Date(until).toISOString();
  if (input.now >= until) return true;
  plan.phase = 'Soaking';
  plan.message = `wave ${wave.spec.name} is Ready with revision ${input.update}: soaking until ${status.soakUntil}`;
  wake(until - input.now);
  return false;
}

/** The wave the rollout is at: its gates, then up to maxInFlight clusters at once. */
function admit(wave: Wave, standings: Standing[], status: WaveStatus, input: RolloutInput, plan: RolloutPlan, approvalProblem: string | undefined): void {
  const name = wave.spec.name;
  plan.phase = 'Progressing';
  if (input.rollout.paused) {
    plan.phase = 'Paused';
    plan.message = `paused at wave ${name} (spec.rollout.paused)`;
    return;
  }
  if (wave.spec.approval && !status.approved) {
    plan.phase = 'AwaitingApproval';
    if (approvalProblem !== undefined) plan.approvalProblem = approvalProblem;
    plan.message = `wave ${name} waits for approval: ${approvalProblem ?? `syncprims rollout approve fleetsync/<name> --wave ${name} (a RolloutApproval of revision ${input.update})`}`;
    return;
  }
  const gate = input.unmetGates.get(wave.spec.name);
  if (gate !== undefined) {
    plan.message = `wave ${name} waits for its gates: ${gate}`;
    return;
  }
  const limit = wave.spec.maxInFlight ?? input.rollout.maxInFlight ?? wave.members.length;
  let slots = limit - standings.filter((s) => s.updated && !s.done && s.state.state !== 'failed').length;
  for (const s of standings) {
    if (slots <= 0) break;
    if (plan.update.has(s.member.name)) continue;
    plan.update.add(s.member.name);
    slots--;
  }
  plan.message = `wave ${name}: ${status.ready}/${status.clusters} Ready with revision ${input.update}`;
}

function waveStatus(wave: Wave, standings: Standing[]): WaveStatus {
  const count = (f: (s: Standing) => boolean): number => standings.filter(f).length;
  const status: WaveStatus = {
    name: wave.spec.name,
    clusters: standings.length,
    updated: count((s) => s.updated),
    ready: count((s) => s.state.state === 'ready'),
    failed: count((s) => s.state.state === 'failed'),
    unreachable: count((s) => s.state.state === 'unreachable'),
    members: wave.members.map((m) => m.name),
  };
  return status;
}
