import { ConditionType, Reason } from '../api/conditions.js';
import type { Kind } from '../api/kinds.js';
import type { DependencyGraph, PendingDependency } from '../deps/graph.js';
import { displayNode, nodeKey, nodeOf } from '../deps/refs.js';
import type { KubeObject } from '../kube/resources.js';
import { findCondition, removeCondition } from '../runtime/conditions.js';
import { jitter } from '../runtime/backoff.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Logger } from '../runtime/logger.js';
import type { OperatorMetrics } from '../runtime/metrics.js';
import type { ObjectWriter } from '../runtime/object-writer.js';
import { failed, type SyncStatusDraft } from './sync-status.js';

/**
 * A waiting sync is woken by its dependencies' changes; this slow resync only
 * covers what no event brings (it is not how readiness is noticed).
 */
export const DEPENDENCY_BACKSTOP_MS = 5 * 60_000;

const DEPENDENCY_REASONS: readonly string[] = [Reason.DependencyNotReady, Reason.DependencyCycle];

/** What the dependency step decided: go on with this status, or stop here with this result. */
export type DependencyOutcome = { proceed: true; status: SyncStatusDraft } | { proceed: false; result?: ReconcileResult };

export interface DependencyStepDeps {
  graph: DependencyGraph;
  writer: ObjectWriter;
  events: EventRecorder;
  metrics?: OperatorMetrics;
}

/**
 * The "check dependencies" step of every kind. Waiting is a state
 * (Ready=False, DependencyNotReady, Reconciling=True, pendingDependencies);
 * a cycle stalls every member with its whole path; met dependencies clear
 * both and let the pipeline go on.
 */
export class DependencyStep {
  /** When each waiting sync was first found waiting (node key -> ms), for the wait-time metric. */
  private readonly waitingSince = new Map<string, number>();

  constructor(private readonly deps: DependencyStepDeps) {}

  async check(kind: Kind, obj: KubeObject, base: SyncStatusDraft, log: Logger): Promise<DependencyOutcome> {
    const verdict = this.deps.graph.verdict(kind, obj);
    const key = nodeKey(nodeOf(kind, obj));
    switch (verdict.state) {
      case 'deferred':
        if (verdict.pending.length > 0 && !this.waitingSince.has(key)) this.waitingSince.set(key, Date.now());
        log.debug({ on: verdict.on }, 'a dependency is being reconciled; checking again once it is done');
        return { proceed: false, result: { requeueAfterMs: jitter(DEPENDENCY_BACKSTOP_MS) } };
      case 'cycle': {
        this.waitingSince.delete(key);
        const message = `dependency cycle: ${verdict.path.join(' -> ')}`;
        await this.report(obj, { ...base, pendingDependencies: verdict.pending }, Reason.DependencyCycle, message, 'Warning', log);
        return { proceed: false };
      }
      case 'waiting': {
        if (!this.waitingSince.has(key)) this.waitingSince.set(key, Date.now());
        const message = `waiting for ${describePending(verdict.pending, obj.metadata.namespace ?? '')}`;
        await this.report(obj, { ...base, pendingDependencies: verdict.pending }, Reason.DependencyNotReady, message, 'Normal', log);
        return { proceed: false, result: { requeueAfterMs: jitter(DEPENDENCY_BACKSTOP_MS) } };
      }
      case 'met': {
        const since = this.waitingSince.get(key);
        if (since !== undefined) {
          this.waitingSince.delete(key);
          const waited = Date.now() - since;
          this.deps.metrics?.dependencyWaitSeconds.observe({ controller: kind.toLowerCase() }, waited / 1000);
          log.info({ waitedMs: waited }, 'dependencies met');
        }
        return { proceed: true, status: withoutDependencyWait(base) };
      }
    }
  }

  forget(kind: Kind, obj: KubeObject): void {
    this.waitingSince.delete(nodeKey(nodeOf(kind, obj)));
  }

  private async report(obj: KubeObject, base: SyncStatusDraft, reason: Reason, message: string, type: 'Normal' | 'Warning', log: Logger): Promise<void> {
    const status = failed(base, reason, message, obj.metadata.generation);
    if (await this.deps.writer.updateStatus(obj, status)) {
      log.info({ reason, pending: base.pendingDependencies }, message);
      await this.deps.events.record(obj, type, reason, message);
    }
  }
}

/** `Sync/a (NotReady), RemoteSync/b (NotFound)`. */
function describePending(pending: PendingDependency[], namespace: string): string {
  return pending.map((p) => `${displayNode({ ...p, namespace: p.namespace ?? namespace }, namespace)} (${p.reason})`).join(', ');
}

/** The status once dependencies are met: no pending list, no condition left over from waiting. */
function withoutDependencyWait(s: SyncStatusDraft): SyncStatusDraft {
  const { pendingDependencies: _dropped, ...rest } = s;
  let conditions = s.conditions;
  for (const type of [ConditionType.Ready, ConditionType.Reconciling, ConditionType.Stalled]) {
    const c = findCondition(conditions, type);
    if (c && DEPENDENCY_REASONS.includes(c.reason)) conditions = removeCondition(conditions, type);
  }
  return conditions === s.conditions ? rest : { ...rest, conditions };
}
