import {
  ConditionType,
  FINALIZER,
  parseSyncObject,
  Reason,
  RECONCILE_REQUESTED_AT_ANNOTATION,
  type SyncKind,
} from '../api/index.js';
import type { KubeObject } from '../kube/resources.js';
import { removeCondition, setCondition, type Condition } from '../runtime/conditions.js';
import type { Reconciler } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Informer } from '../runtime/informer.js';
import type { ObjectWriter } from '../runtime/object-writer.js';

export interface LifecycleDeps {
  kind: SyncKind;
  informer: Informer<KubeObject>;
  writer: ObjectWriter;
  events: EventRecorder;
}

type Status = Record<string, unknown> & { conditions?: Condition[] };

/**
 * The part of reconciling that all three kinds share: find the object in the
 * cache, handle deletion through the finalizer, add the finalizer, check the
 * spec (InvalidSpec stalls until the spec changes), and record what was
 * observed. The kind-specific pipeline (render, apply, wait) builds on it.
 */
export function lifecycleReconciler(deps: LifecycleDeps): Reconciler {
  return {
    async reconcile(key, log) {
      const obj = deps.informer.store.get(key);
      if (!obj) return; // deleted; nothing of ours is left to clean up
      if (obj.metadata.deletionTimestamp) {
        if (await deps.writer.removeFinalizer(obj, FINALIZER)) log.info('deleted: finalizer removed');
        return;
      }
      // The update event of this write brings the object back to the queue.
      if (await deps.writer.ensureFinalizer(obj, FINALIZER)) return;

      const status: Status = { ...((obj.status as Status | undefined) ?? {}), observedGeneration: obj.metadata.generation };
      const requested = obj.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
      if (requested !== undefined) status.lastHandledReconcileAt = requested;

      const parsed = parseSyncObject(deps.kind, obj);
      if (!parsed.ok) {
        const message = `invalid spec: ${parsed.message}`;
        status.conditions = invalidSpec(status.conditions, message, obj.metadata.generation);
        if (await deps.writer.updateStatus(obj, status)) {
          log.warn({ reason: Reason.InvalidSpec, message }, 'invalid spec; waiting for it to change');
          await deps.events.record(obj, 'Warning', Reason.InvalidSpec, message);
        }
        return;
      }
      if (status.conditions?.some((c) => c.type === ConditionType.Stalled && c.reason === Reason.InvalidSpec)) {
        status.conditions = removeCondition(status.conditions, ConditionType.Stalled);
      }
      await deps.writer.updateStatus(obj, status);
    },
  };
}

function invalidSpec(conditions: Condition[] | undefined, message: string, generation?: number): Condition[] {
  const common = { reason: Reason.InvalidSpec, message, observedGeneration: generation };
  let next = setCondition(conditions, { type: ConditionType.Ready, status: 'False', ...common });
  next = setCondition(next, { type: ConditionType.Stalled, status: 'True', ...common });
  return removeCondition(next, ConditionType.Reconciling);
}
