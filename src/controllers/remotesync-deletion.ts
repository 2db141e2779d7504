// A RemoteSync being deleted: prune in its cluster (with the last client
// used, if its Secret is gone already), by the rules of cluster-deletion.ts.
import { parseSyncObject } from '../api/validate.js';
import { actingAccountOf } from '../clusters/acting-identity.js';
import type { RemoteCluster } from '../clusters/remote-cluster.js';
import type { KubeObject } from '../kube/resources.js';
import type { Logger } from '../runtime/logger.js';
import { enterCluster } from './cluster-access.js';
import { cleanUpInCluster, type FinalizeResult, type RemoteSettings } from './cluster-deletion.js';
import type { LifecycleDeps } from './lifecycle.js';
import type { ApplyTarget, SyncPipeline } from './sync-pipeline.js';

export function remoteSyncFinalizer(
  deps: LifecycleDeps,
  pipeline: SyncPipeline,
  settings: RemoteSettings,
  targetOf: (cluster: RemoteCluster) => ApplyTarget,
): (obj: KubeObject, log: Logger) => Promise<FinalizeResult> {
  return async (obj, log) => {
    const parsed = parseSyncObject('RemoteSync', obj);
    const spec = parsed.ok ? parsed.value.spec : undefined;
    if (!spec || spec.deletionPolicy === 'Orphan') return;
    return cleanUpInCluster(deps, settings, obj, spec, log, async () => {
      const account = actingAccountOf(obj.metadata.namespace ?? '', spec.serviceAccountName, settings.defaultServiceAccount);
      const entered = await enterCluster(settings.registry, obj, spec, true, account);
      try {
        await pipeline.finalize(obj, spec, targetOf(entered.cluster), log);
      } finally {
        entered.leave();
      }
    });
  };
}
