import type { SyncKind } from '../api/kinds.js';
import { parseSyncObject } from '../api/validate.js';
import type { SyncSpec } from '../api/sync-spec.js';
import type { Reconciler } from '../runtime/controller.js';
import { beginReconcile, type LifecycleDeps } from './lifecycle.js';
import { ownerOfKey } from '../apply/owner.js';
import type { ApplyTarget, SyncPipeline } from './sync-pipeline.js';

/**
 * The Sync reconciler, in prose: find the object; on deletion prune what it
 * owns (unless Orphan) and let it go; add the finalizer; check the spec;
 * honour suspend; wait for dependencies; then fetch, render, apply, prune, wait and report.
 */
export function syncReconciler(deps: LifecycleDeps & { kind: SyncKind }, pipeline: SyncPipeline, target: ApplyTarget): Reconciler {
  return {
    async reconcile(key, log) {
      const begun = await beginReconcile(deps, key, log, async (obj, l) => {
        const parsed = parseSyncObject(deps.kind, obj);
        await pipeline.finalize(obj, parsed.ok ? (parsed.value.spec as SyncSpec) : undefined, target, l);
      }, { finalizerAlongside: true });
      if ('done' in begun) {
        if (!deps.informer.store.get(key)) {
          pipeline.forget(key);
          target.owned.forgetOwner(ownerOfKey(deps.kind, key));
        }
        return begun.done;
      }
      const { obj, value, status, finalizer } = begun.ctx;
      return pipeline.run(key, obj, value.spec as SyncSpec, status, target, log, finalizer);
    },
  };
}
