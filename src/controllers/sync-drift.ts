import type { Drift } from '../apply/drift.js';
import type { ObjectResult } from '../apply/engine.js';
import { displayName } from '../apply/inventory.js';
import type { OwnedObjects } from '../apply/owned-objects.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Logger } from '../runtime/logger.js';
import { listProblems } from '../runtime/messages.js';
import type { KubeObject } from '../kube/resources.js';

/**
 * Tells of drift corrected by an apply: for each object that someone else
 * changed (`drifts`, from watch events) and the apply changed back, a
 * Warning Event `Drifted` and a log line naming the field managers and the
 * fields; each correction counts towards that object's backoff, and a
 * repeated one says whom we are fighting and how long the next one waits.
 */
export async function announceDrift(
  deps: { events: EventRecorder; owned: Pick<OwnedObjects, 'drifts'>; intervalMs: number },
  obj: KubeObject,
  drifts: Drift[],
  applied: ObjectResult[],
  log: Logger,
): Promise<void> {
  const configured = new Set(applied.filter((r) => r.action === 'configured').map((r) => r.id));
  const created = new Set(applied.filter((r) => r.action === 'created').map((r) => r.id));
  for (const d of drifts.filter((x) => (x.deleted ? created : configured).has(x.id))) {
    const { count, nextMs } = deps.owned.drifts.corrected(d.id, deps.intervalMs);
    const message = driftMessage(d, count, nextMs);
    log.warn({ object: d.id, fields: d.fields, managers: d.managers, corrections: count }, message);
    await deps.events.record(obj, 'Warning', 'Drifted', message);
  }
}

/** `ConfigMap/app/settings: .data.a changed by kubectl-patch; corrected` (and, when fighting, whom and for how long). */
export function driftMessage(d: Drift, count: number, nextMs: number): string {
  const line = d.deleted ? `${nameOf(d.id)}: deleted, not by this sync; recreated` : `${nameOf(d.id)}: ${driftChange(d)}; corrected`;
  if (count < 2) return line;
  return `${line} (${count} times in a row: fighting ${byOf(d)}; the next correction waits ${Math.round(nextMs / 1000)}s)`;
}

/**
 * What a Ready message adds while corrections wait, backed off (a fight):
 * the objects differ from the applied revision until then. Empty when none
 * waits. Names no count or time, so that the status is not rewritten at
 * each step of the fight: once when a correction starts to wait, once when
 * it is made.
 */
export function backedOffNote(waiting: readonly Drift[]): string {
  if (waiting.length === 0) return '';
  const what = waiting.map((d) => `${nameOf(d.id)} ${driftChange(d)}`);
  const objects = waiting.length === 1 ? '1 object differs until its correction' : `${waiting.length} objects differ until their corrections`;
  return `; ${objects}, backed off (fighting): ${listProblems(what)}`;
}

/** What someone else did to an object: `.data.a changed by kubectl-patch`, or `deleted`. */
export function driftChange(d: Drift): string {
  return d.deleted ? 'deleted' : `${d.fields.join(', ')} changed by ${byOf(d)}`;
}

/** A requeue no later than `waitMs` (when backed-off drifts are due). */
export function dueBy(result: ReconcileResult, waitMs: number | undefined): ReconcileResult {
  if (waitMs === undefined) return result;
  const after = result.requeueAfterMs === undefined ? waitMs : Math.min(result.requeueAfterMs, waitMs);
  return { ...result, requeueAfterMs: Math.max(1, after) };
}

function byOf(d: Drift): string {
  return d.managers.length > 0 ? d.managers.join(', ') : d.deleted ? 'whoever deleted it' : 'an unknown field manager';
}

function nameOf(id: string): string {
  try {
    return displayName(id);
  } catch {
    return id;
  }
}
