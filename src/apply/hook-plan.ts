// What a chart's hooks call for, decided from the sync's status and the live
// hook objects (docs/helm-hooks.md): which stage a revision is at, the hooks
// of a phase in groups of equal weight, and what a hook's object says of its
// run. Pure: hook-runner.ts acts on it, sync-hooks.ts reports it.
import { HOOK_RUN_ANNOTATION } from '../api/marks.js';
import type { HooksStatus } from '../api/status.js';
import type { KubeObject } from '../kube/resources.js';
import { computeHealth } from './health.js';
import type { ChartHook, HookPhase } from './hooks.js';

/** One group of a phase: the hooks of one weight, in the order the render gave them (Helm's kind order, then name). */
export interface HookGroup {
  weight: number;
  hooks: ChartHook[];
}

/** The hooks of `phase` in groups of equal weight, lightest first. */
export function hookGroups(hooks: readonly ChartHook[], phase: HookPhase): HookGroup[] {
  const groups = new Map<number, ChartHook[]>();
  for (const h of hooks) {
    if (h.phase !== phase) continue;
    const group = groups.get(h.weight);
    if (group) group.push(h);
    else groups.set(h.weight, [h]);
  }
  return [...groups.entries()].sort(([a], [b]) => a - b).map(([weight, group]) => ({ weight, hooks: group }));
}

/** Where a revision's hooks are. `record`: the status to carry on from (a fresh one for a revision whose hooks start now). */
export type HookStage =
  /** No hook runs: the set is applied and reported as it is without hooks. */
  | { stage: 'none' }
  | { stage: 'pre'; record: HooksStatus }
  /** The pre hooks are done: the set is applied; its post hooks run once it is Ready. */
  | { stage: 'set'; record: HooksStatus }
  | { stage: 'post'; record: HooksStatus }
  /** A hook of this revision failed in this attempt: nothing more runs (see `attempt`). */
  | { stage: 'failed'; record: HooksStatus; message: string };

/** What tries a revision's hooks: a new generation or a new reconcile request tries a failed one again. */
export interface HookAttempt {
  generation?: number;
  requestedAt?: string;
}

export interface HookStageInput {
  hooks: readonly ChartHook[];
  revision: string;
  /** `status.hooks`. */
  record?: HooksStatus;
  /** `status.lastAppliedRevision`. */
  lastAppliedRevision?: string;
  attempt: HookAttempt;
}

/**
 * The stage of the set's revision. Hooks run only for a revision that is new
 * to the sync: one its status records neither as applied nor as having run
 * hooks. A restart with the same revision carries on where the status says
 * (it never starts them again); a revision applied already runs none.
 */
export function hookStage({ hooks, revision, record, lastAppliedRevision, attempt }: HookStageInput): HookStage {
  if (hooks.length === 0) return { stage: 'none' };
  if (record?.revision !== revision) {
    if (lastAppliedRevision === revision) return { stage: 'none' };
    return { stage: 'pre', record: freshRecord(revision, attempt, record) };
  }
  if (record.failed !== undefined) {
    if (sameAttempt(record, attempt)) return { stage: 'failed', record, message: record.failed };
    return { stage: 'pre', record: freshRecord(revision, attempt, record) };
  }
  switch (record.phase) {
    case 'Pre':
      return { stage: 'pre', record };
    case 'Set':
      return { stage: 'set', record };
    case 'Post':
      return { stage: 'post', record };
    default:
      return { stage: 'none' };
  }
}

function freshRecord(revision: string, attempt: HookAttempt, before: HooksStatus | undefined): HooksStatus {
  return { revision, phase: 'Pre', ...attemptOf(attempt), entries: before?.entries ?? [] };
}

function attemptOf({ generation, requestedAt }: HookAttempt): HookAttempt {
  return { ...(generation !== undefined ? { generation } : {}), ...(requestedAt !== undefined ? { requestedAt } : {}) };
}

function sameAttempt(record: HooksStatus, attempt: HookAttempt): boolean {
  return record.generation === attempt.generation && record.requestedAt === attempt.requestedAt;
}

/** What a hook's object says of its run: `Missing` (not there, or left by another run), or its progress. */
export interface HookState {
  status: 'Missing' | 'Running' | 'Succeeded' | 'Failed';
  message: string;
}

/**
 * A hook's run as its live object tells it: a Job until Complete (Failed: the
 * hook failed), a Pod until Succeeded (Failed: failed), anything else until
 * Current by the kstatus rules of health.ts. An object not marked with this
 * run (`run`: the group's `since`) is not this run's.
 */
export function hookState(live: KubeObject | undefined, run: string): HookState {
  if (!live || live.metadata.annotations?.[HOOK_RUN_ANNOTATION] !== run) return { status: 'Missing', message: 'not applied yet' };
  const computed = computeHealth(live);
  const health = { ...computed, message: computed.message.replace(`${live.kind} ${live.metadata.name ?? ''}: `, '') };
  if (live.kind === 'Pod' && live.apiVersion === 'v1' && health.status === 'Current') {
    const phase = (live.status as { phase?: string } | undefined)?.phase;
    if (phase !== 'Succeeded') return { status: 'Running', message: `${health.message} (a hook Pod is done once Succeeded)` };
  }
  if (health.status === 'Current') return { status: 'Succeeded', message: health.message };
  if (health.status === 'Failed') return { status: 'Failed', message: health.message };
  return { status: 'Running', message: health.message };
}

/** `Kind namespace/name` of a hook. */
export function hookName({ object }: ChartHook): string {
  const { namespace, name } = object.metadata;
  return `${object.kind} ${namespace ? `${namespace}/` : ''}${name ?? ''}`;
}
