import {
  ConditionType,
  FINALIZER,
  parseSyncObject,
  Reason,
  RECONCILE_REQUESTED_AT_ANNOTATION,
  type KindTypes,
  type SyncKind,
} from '../api/index.js';
import type { KubeObject } from '../kube/resources.js';
import type { Reconciler } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Informer } from '../runtime/informer.js';
import type { Logger } from '../runtime/logger.js';
import type { ObjectWriter } from '../runtime/object-writer.js';
import { removeCondition } from '../runtime/conditions.js';
import { failed, suspended, type SyncStatusDraft } from './sync-status.js';

export interface LifecycleDeps {
  kind: SyncKind;
  informer: Informer<KubeObject>;
  writer: ObjectWriter;
  events: EventRecorder;
}

/** A sync object that passed the common steps and is ready for its kind's pipeline. */
export interface ReconcileContext<K extends SyncKind> {
  obj: KubeObject;
  value: KindTypes[K];
  /** The status so far: the stored one plus observedGeneration and lastHandledReconcileAt. */
  status: SyncStatusDraft;
  generation?: number;
}

/**
 * Cleans up what a deleted sync owns; resolves true when done (the finalizer
 * is then removed), or throws to be retried.
 */
export type Finalizer = (obj: KubeObject, log: Logger) => Promise<void>;

/**
 * The steps all three kinds share: find the object in the cache, handle
 * deletion through the finalizer, add the finalizer, check the spec
 * (InvalidSpec stalls until the spec changes), honour suspend. Returns the
 * context for the kind's pipeline, or undefined when nothing is left to do.
 */
export async function beginReconcile<K extends SyncKind>(
  deps: LifecycleDeps & { kind: K },
  key: string,
  log: Logger,
  finalize: Finalizer,
): Promise<ReconcileContext<K> | undefined> {
  const obj = deps.informer.store.get(key);
  if (!obj) return undefined;
  if (obj.metadata.deletionTimestamp) {
    if (!obj.metadata.finalizers?.includes(FINALIZER)) return undefined;
    await finalize(obj, log);
    if (await deps.writer.removeFinalizer(obj, FINALIZER)) log.info('deleted: finalizer removed');
    return undefined;
  }
  // The update event of this write brings the object back to the queue.
  if (await deps.writer.ensureFinalizer(obj, FINALIZER)) return undefined;

  const generation = obj.metadata.generation;
  let status: SyncStatusDraft = { ...((obj.status as SyncStatusDraft | undefined) ?? {}), observedGeneration: generation };
  const requested = obj.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
  if (requested !== undefined) status.lastHandledReconcileAt = requested;

  const parsed = parseSyncObject(deps.kind, obj);
  if (!parsed.ok) {
    await reportInvalidSpec(deps, obj, status, `invalid spec: ${parsed.message}`, log);
    return undefined;
  }
  if (status.conditions?.some((c) => c.type === ConditionType.Stalled && c.reason === Reason.InvalidSpec)) {
    status = { ...status, conditions: removeCondition(status.conditions, ConditionType.Stalled) };
  }
  if ((parsed.value.spec as { suspend?: boolean }).suspend) {
    if (await deps.writer.updateStatus(obj, suspended(status, generation))) log.info('suspended');
    return undefined;
  }
  return { obj, value: parsed.value, status, generation };
}

/** Ready=False and Stalled=True, reason InvalidSpec: it waits for the spec to change. */
async function reportInvalidSpec(deps: LifecycleDeps, obj: KubeObject, base: SyncStatusDraft, message: string, log: Logger): Promise<void> {
  const status = failed(base, Reason.InvalidSpec, message, obj.metadata.generation);
  if (await deps.writer.updateStatus(obj, status)) {
    log.warn({ reason: Reason.InvalidSpec, message }, 'invalid spec; waiting for it to change');
    await deps.events.record(obj, 'Warning', Reason.InvalidSpec, message);
  }
}

/** The common steps alone, for a kind whose pipeline is not built yet. */
export function lifecycleReconciler(deps: LifecycleDeps): Reconciler {
  return {
    async reconcile(key, log) {
      const ctx = await beginReconcile(deps, key, log, async () => undefined);
      if (ctx) await deps.writer.updateStatus(ctx.obj, ctx.status);
    },
  };
}
