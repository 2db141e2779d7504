// A chart's hooks in the sync pipeline (docs/helm-hooks.md): the pre hooks of
// a new revision before its set is applied, the post hooks once the set is
// Ready, each phase taken as far as it goes in one reconcile (hook-runner.ts)
// and reported: Ready Unknown while they run, Ready False (HookFailed, an
// Event, a log line) when one fails. A set without hooks passes through
// untouched: no request, no write.
import { Reason } from '../api/conditions.js';
import { parseDuration } from '../api/duration.js';
import { RECONCILE_REQUESTED_AT_ANNOTATION } from '../api/marks.js';
import type { HooksStatus } from '../api/status.js';
import type { SyncSpec } from '../api/sync-spec.js';
import type { Discovery } from '../kube/discovery.js';
import type { Requester } from '../kube/client.js';
import type { KubeObject } from '../kube/resources.js';
import type { Owner } from '../apply/engine.js';
import { hookStage, type HookStage } from '../apply/hook-plan.js';
import { runHookPhase, type HookOutcome } from '../apply/hook-runner.js';
import type { ChartHook, HookPhase } from '../apply/hooks.js';
import { jitter } from '../runtime/backoff.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Logger } from '../runtime/logger.js';
import type { ObjectWriter } from '../runtime/object-writer.js';
import { RETRY_SOURCE_MS } from './sync-problems.js';
import { failed, progressing, type SyncStatusDraft } from './sync-status.js';

export interface SyncHooksDeps {
  writer: Pick<ObjectWriter, 'updateStatus'>;
  events: Pick<EventRecorder, 'record'>;
  concurrency: number;
}

/** One reconcile's sync, where its hooks go, and as whom. */
export interface HookContext {
  obj: KubeObject;
  spec: Pick<SyncSpec, 'timeout' | 'interval'>;
  revision: string;
  hooks: readonly ChartHook[];
  /** The target cluster's client, as the sync's account when it has one (as the set is applied). */
  client: Requester;
  discovery: Discovery;
  owner: Owner;
  /** Starts watching the hooks' kinds (their changes wake the sync). */
  watch: (objects: KubeObject[]) => void;
  log: Logger;
}

/** Go on (with the status so far, `status.hooks` in it), or return this from the reconcile. */
export type HookStep = { go: SyncStatusDraft } | { result: ReconcileResult };

/** The stage the context's revision is at (hook-plan.ts hookStage), from `status`. */
export function stageOf(ctx: HookContext, status: SyncStatusDraft): HookStage {
  return hookStage({
    hooks: ctx.hooks,
    revision: ctx.revision,
    record: status.hooks as HooksStatus | undefined,
    lastAppliedRevision: status.lastAppliedRevision,
    attempt: { generation: ctx.obj.metadata.generation, requestedAt: ctx.obj.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION] },
  });
}

export class SyncHooks {
  constructor(private readonly deps: SyncHooksDeps) {}

  /**
   * Before the set is applied: a new revision's pre hooks, group by group.
   * Goes on once they are done (or when there are none to run, or the pre
   * hooks are done already); a pre hook that failed keeps the set from being applied.
   */
  async beforeSet(ctx: HookContext, base: SyncStatusDraft): Promise<HookStep> {
    const stage = stageOf(ctx, base);
    if (stage.stage === 'failed' && stage.record.phase === 'Pre') return this.stillFailed(ctx, base, stage.record);
    if (stage.stage !== 'pre') return { go: base };
    return this.phase('pre', ctx, { ...base, lastAttemptedRevision: ctx.revision }, stage.record);
  }

  /**
   * Once the set is applied and Ready: its post hooks, group by group. Goes
   * on (to Ready True) once they are done, or when there are none to run.
   */
  async afterReady(ctx: HookContext, status: SyncStatusDraft): Promise<HookStep> {
    const stage = stageOf(ctx, status);
    if (stage.stage === 'failed') return this.stillFailed(ctx, status, stage.record);
    if (stage.stage !== 'set' && stage.stage !== 'post') return { go: status };
    return this.phase('post', ctx, status, stage.record);
  }

  private async phase(phase: HookPhase, ctx: HookContext, base: SyncStatusDraft, record: HooksStatus): Promise<HookStep> {
    const generation = ctx.obj.metadata.generation;
    let status = base;
    const save = async (next: HooksStatus): Promise<void> => {
      status = next.failed !== undefined
        ? failed({ ...status, hooks: next }, Reason.HookFailed, next.failed, generation)
        : progressing({ ...status, hooks: next }, runningMessage(phase, ctx.revision, next), generation);
      await this.deps.writer.updateStatus(ctx.obj, status);
    };
    const timeoutMs = parseDuration(ctx.spec.timeout);
    const outcome = await runHookPhase(phase, ctx.hooks, record, { client: ctx.client, discovery: ctx.discovery, owner: ctx.owner, concurrency: this.deps.concurrency, timeoutMs, save });
    return this.reported(ctx, { ...status, hooks: outcome.record }, outcome, timeoutMs);
  }

  private async reported(ctx: HookContext, status: SyncStatusDraft, outcome: HookOutcome, timeoutMs: number): Promise<HookStep> {
    const generation = ctx.obj.metadata.generation;
    if (outcome.outcome === 'done') {
      ctx.log.info({ revision: ctx.revision, phase: outcome.record.phase }, 'hooks done');
      return { go: status };
    }
    if (outcome.outcome === 'failed') {
      ctx.log.warn({ reason: Reason.HookFailed, message: outcome.message }, 'hook failed');
      await this.deps.events.record(ctx.obj, 'Warning', Reason.HookFailed, outcome.message);
      return { result: { requeueAfterMs: jitter(parseDuration(ctx.spec.interval)) } };
    }
    ctx.watch(outcome.hooks.map((h) => h.object));
    await this.deps.writer.updateStatus(ctx.obj, progressing(status, outcome.message, generation));
    // The watch of the hooks wakes the sync; this brings the timeout (and looks again, should that watch stop).
    const since = Date.parse(outcome.record.since ?? '') || Date.now();
    return { result: { requeueAfterMs: Math.max(100, Math.min(since + timeoutMs - Date.now() + 100, RETRY_SOURCE_MS)) } };
  }

  /** A hook of this revision failed in this attempt: said again (written only if the status changed), nothing run. */
  private async stillFailed(ctx: HookContext, status: SyncStatusDraft, record: HooksStatus): Promise<HookStep> {
    const next = failed({ ...status, hooks: record }, Reason.HookFailed, record.failed ?? 'a hook failed', ctx.obj.metadata.generation);
    await this.deps.writer.updateStatus(ctx.obj, next);
    return { result: { requeueAfterMs: jitter(parseDuration(ctx.spec.interval)) } };
  }
}

function runningMessage(phase: HookPhase, revision: string, record: HooksStatus): string {
  const events = phase === 'pre' ? 'pre-install/pre-upgrade' : 'post-install/post-upgrade';
  if (record.weight === undefined) return `${phase === 'pre' ? 'applying' : 'applied'} revision ${revision}`;
  return `revision ${revision}: running its ${events} hooks of weight ${record.weight}`;
}
