import { kubeconfigSecret } from '../api/cluster.js';
import { Reason } from '../api/conditions.js';
import type { RemoteSyncSpec } from '../api/objects.js';
import { parseSyncObject } from '../api/validate.js';
import type { ClusterRegistry, ClusterSecretRef } from '../clusters/registry.js';
import type { RemoteCluster } from '../clusters/remote-cluster.js';
import type { KubeObject } from '../kube/resources.js';
import type { Reconciler, ReconcileResult } from '../runtime/controller.js';
import type { Logger } from '../runtime/logger.js';
import { jitter } from '../runtime/backoff.js';
import { beginReconcile, type LifecycleDeps } from './lifecycle.js';
import type { ApplyTarget, SyncPipeline } from './sync-pipeline.js';
import { failed, type SyncStatusDraft } from './sync-status.js';

/** How soon a RemoteSync turned away by a busy cluster is tried again. */
const BUSY_RETRY_MS = 1_000;

/** A cluster that cannot be used now: report why and come back later. */
class ClusterNotUsable extends Error {
  constructor(
    readonly reason: Reason,
    message: string,
    readonly retryInMs?: number,
    /** Only busy (as many reconciles work on it as may): nothing to report, just come back. */
    readonly busy = false,
  ) {
    super(message);
  }
}

/**
 * The RemoteSync reconciler, in prose: find the object; on deletion prune
 * what it owns in its cluster (unless Orphan) and let it go; add the
 * finalizer; check the spec; honour suspend; wait for dependencies; find its
 * cluster (the kubeconfig Secret, checked, through the registry) and make
 * sure it answers; then the Sync pipeline against that cluster.
 */
export function remoteSyncReconciler(deps: LifecycleDeps & { kind: 'RemoteSync' }, pipeline: SyncPipeline, registry: ClusterRegistry, origin: string): Reconciler {
  const targetOf = (cluster: RemoteCluster): ApplyTarget => ({ id: cluster.name, client: cluster.client, discovery: cluster.discovery, owned: cluster.owned, origin });

  /** The RemoteSync's cluster, admitted for work; throws ClusterNotUsable. The caller must call `leave`. */
  async function enter(key: string, obj: KubeObject, spec: RemoteSyncSpec, allowLast: boolean): Promise<{ cluster: RemoteCluster; leave: () => void }> {
    const lookup = await registry.clusterFor(key, secretRefOf(obj, spec));
    const last = allowLast ? registry.lastClusterOf(key) : undefined;
    if (!lookup.ok && !last) throw new ClusterNotUsable(lookup.reason, lookup.message);
    const cluster = lookup.ok ? lookup.cluster : last!;
    const admission = cluster.reachability.admit();
    if (!admission.go) throw new ClusterNotUsable(Reason.ClusterUnreachable, `cluster ${cluster.name} is unreachable: ${admission.message}`, admission.retryInMs);
    const leave = cluster.tryEnter();
    if (!leave) throw new ClusterNotUsable(Reason.Progressing, `cluster ${cluster.name} is busy`, BUSY_RETRY_MS, true);
    if (admission.probe) {
      try {
        await cluster.probe();
      } catch {
        leave();
        throw new ClusterNotUsable(Reason.ClusterUnreachable, `cluster ${cluster.name} is unreachable: ${cluster.reachability.describe()}`, jitter(5_000));
      }
    }
    return { cluster, leave };
  }

  async function report(obj: KubeObject, status: SyncStatusDraft, err: ClusterNotUsable, log: Logger): Promise<ReconcileResult> {
    if (err.busy) return { requeueAfterMs: err.retryInMs ?? BUSY_RETRY_MS };
    const next = failed(status, err.reason, err.message, obj.metadata.generation);
    if (await deps.writer.updateStatus(obj, next)) {
      log.warn({ reason: err.reason, message: err.message }, 'cluster not usable');
      await deps.events.record(obj, 'Warning', err.reason, err.message);
    }
    // A change of the Secret wakes it at once; this is the backstop (and the probe's backoff).
    return { requeueAfterMs: err.retryInMs ?? 60_000 };
  }

  return {
    async reconcile(key, log) {
      const begun = await beginReconcile(deps, key, log, async (obj, l) => {
        const parsed = parseSyncObject('RemoteSync', obj);
        const spec = parsed.ok ? parsed.value.spec : undefined;
        if (!spec || spec.deletionPolicy === 'Orphan') return;
        const { cluster, leave } = await enter(key, obj, spec, true).catch(async (err: unknown) => {
          if (err instanceof ClusterNotUsable) await report(obj, (obj.status ?? {}) as SyncStatusDraft, err, l);
          throw err;
        });
        try {
          await pipeline.finalize(obj, spec, targetOf(cluster), l);
        } finally {
          leave();
        }
      });
      if ('done' in begun) {
        if (!deps.informer.store.get(key)) {
          pipeline.forget(key);
          await registry.release(key);
        }
        return begun.done;
      }
      const { obj, value, status } = begun.ctx;
      let entered: { cluster: RemoteCluster; leave: () => void };
      try {
        entered = await enter(key, obj, value.spec, false);
      } catch (err) {
        if (err instanceof ClusterNotUsable) return report(obj, status, err, log);
        throw err;
      }
      try {
        return await pipeline.run(key, obj, value.spec, status, targetOf(entered.cluster), log);
      } finally {
        entered.leave();
      }
    },
  };
}

function secretRefOf(obj: KubeObject, spec: RemoteSyncSpec): ClusterSecretRef {
  const { name, key } = kubeconfigSecret(spec);
  const field = spec.kubeConfig ? 'spec.kubeConfig.secretRef' : 'spec.clusterRef.name';
  return { namespace: obj.metadata.namespace ?? '', name, key, field };
}
