import { actingAccountOf } from '../clusters/acting-identity.js';
import type { RemoteCluster } from '../clusters/remote-cluster.js';
import type { Reconciler } from '../runtime/controller.js';
import { ClusterNotUsable, enterCluster, reportUnusable, type Entered } from './cluster-access.js';
import type { RemoteSettings } from './cluster-deletion.js';
import { beginReconcile, type LifecycleDeps } from './lifecycle.js';
import { remoteSyncFinalizer } from './remotesync-deletion.js';
import { ownerOfKey } from '../apply/owner.js';
import type { ApplyTarget, SyncPipeline } from './sync-pipeline.js';

/**
 * The RemoteSync reconciler, in prose: find the object; on deletion prune
 * what it owns in its cluster (unless Orphan) and let it go
 * (remotesync-deletion.ts); add the finalizer; check the spec; honour
 * suspend; wait for dependencies; find its cluster (the kubeconfig Secret,
 * checked, through the registry) and make sure it answers; then the Sync
 * pipeline against that cluster.
 */
export function remoteSyncReconciler(deps: LifecycleDeps & { kind: 'RemoteSync' }, pipeline: SyncPipeline, settings: RemoteSettings): Reconciler {
  const { registry, origin } = settings;
  const targetOf = (cluster: RemoteCluster): ApplyTarget => ({ id: cluster.name, client: cluster.client, discovery: cluster.discovery, owned: cluster.owned, origin, outage: cluster.reachability });
  const finalize = remoteSyncFinalizer(deps, pipeline, settings, targetOf);

  return {
    async reconcile(key, log) {
      // The finalizer patch goes out while the cluster is opened and the source read (nothing is applied before it lands).
      const begun = await beginReconcile(deps, key, log, finalize, { finalizerAlongside: true });
      if ('done' in begun) {
        if (!deps.informer.store.get(key)) {
          pipeline.forget(key);
          registry.lastClusterOf(`RemoteSync/${key}`)?.owned.forgetOwner(ownerOfKey('RemoteSync', key));
          await registry.release(`RemoteSync/${key}`);
        }
        return begun.done;
      }
      const { obj, value, status, finalizer } = begun.ctx;
      let entered: Entered;
      try {
        const account = actingAccountOf(obj.metadata.namespace ?? '', value.spec.serviceAccountName, settings.defaultServiceAccount);
        entered = await enterCluster(registry, obj, value.spec, false, account);
      } catch (err) {
        if (err instanceof ClusterNotUsable) return reportUnusable(deps, obj, status, err, log);
        throw err;
      }
      try {
        return await pipeline.run(key, obj, value.spec, status, targetOf(entered.cluster), log, finalizer);
      } finally {
        entered.leave();
      }
    },
  };
}
