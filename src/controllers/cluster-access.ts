// How a RemoteSync reaches its cluster: the kubeconfig Secret through the
// registry, admitted by the cluster's reachability and its bound on
// concurrent reconciles; and how it says, in its status, that it cannot.
import { Reason } from '../api/conditions.js';
import { impersonationConflict, type ActingAccount } from '../clusters/acting-identity.js';
import { clusterUser, secretRefOf, type ClusterSpec } from '../clusters/cluster-spec.js';
import type { ClusterRegistry } from '../clusters/registry.js';
import type { Reachability } from '../clusters/reachability.js';
import type { PullTarget } from '../clusters/pull-target.js';
import type { RemoteCluster } from '../clusters/remote-cluster.js';
import type { KubeObject } from '../kube/resources.js';
import { jitter } from '../runtime/backoff.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Logger } from '../runtime/logger.js';
import type { ObjectWriter } from '../runtime/object-writer.js';
import { failed, type SyncStatusDraft } from './sync-status.js';

/** How soon a RemoteSync turned away by a busy cluster is tried again. */
const BUSY_RETRY_MS = 1_000;
/** ...and one turned away by the shares of the workers, unless woken first (worker-shares.ts). */
const SHARE_BACKSTOP_MS = 10_000;

/** A cluster that cannot be used now: report why and come back later. */
export class ClusterNotUsable extends Error {
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

/** A cluster admitted for work; `leave` when done. For a pull cluster, `cluster` is the managing cluster, where `pull` says its assignments are. */
export interface Entered {
  cluster: RemoteCluster;
  pull?: PullTarget;
  leave: () => void;
}

// Named where the CLI finds them too (clusters/cluster-spec.ts); the controllers take them from here.
export { clusterUser, secretRefOf, type ClusterSpec };

/**
 * The sync's cluster, admitted for work, or ClusterNotUsable thrown.
 * `allowLast`: when the Secret is gone, the cluster it used last (to prune on deletion).
 * `account`: the service account the sync acts as there, refused with a kubeconfig that impersonates (acting-identity.ts).
 */
export async function enterCluster(registry: ClusterRegistry, obj: KubeObject, spec: ClusterSpec, allowLast: boolean, account?: ActingAccount): Promise<Entered> {
  const user = clusterUser(obj);
  const lookup = await registry.clusterFor(user, secretRefOf(obj, spec));
  const last = allowLast ? registry.lastClusterOf(user) : undefined;
  if (!lookup.ok && !last) throw new ClusterNotUsable(lookup.reason, lookup.message);
  const cluster = lookup.ok ? lookup.cluster : last!;
  const pull = pullOf(obj, lookup.ok ? lookup.pull : registry.lastPullOf(user));
  const conflict = impersonationConflict(cluster.name, cluster.client.kubeConfig, account);
  if (conflict) throw new ClusterNotUsable(Reason.InvalidKubeconfig, conflict);
  const admission = cluster.reachability.admit();
  if (!admission.go) throw new ClusterNotUsable(Reason.ClusterUnreachable, unreachableMessage(cluster.name, admission.message, cluster.reachability), admission.retryInMs);
  const namespace = obj.metadata.namespace ?? '';
  const entered = cluster.tryEnter(obj.kind ?? '', namespace, `${namespace}/${obj.metadata.name ?? ''}`);
  // Turned away, holding no worker: by its cluster's bound, back after a jittered second; by its server's or
  // namespace's share, woken when a worker is given back (the longer wait is the backstop).
  if (!entered.ok) {
    const retry = entered.group.startsWith('cluster ') ? BUSY_RETRY_MS : SHARE_BACKSTOP_MS;
    throw new ClusterNotUsable(Reason.Progressing, `cluster ${cluster.name} is busy: ${entered.group} holds its share of the workers`, jitter(retry), true);
  }
  const leave = entered.leave;
  if (admission.probe) {
    try {
      await cluster.probe();
    } catch {
      leave();
      throw new ClusterNotUsable(Reason.ClusterUnreachable, unreachableMessage(cluster.name, 'no response', cluster.reachability), jitter(5_000));
    }
  }
  return { cluster, leave, ...(pull && { pull }) };
}

/** A pull cluster, which only a ProxySync reaches (through its assignments): for any other kind, ClusterNotUsable. */
function pullOf(obj: KubeObject, pull: PullTarget | undefined): PullTarget | undefined {
  if (pull && obj.kind !== 'ProxySync') {
    throw new ClusterNotUsable(
      Reason.InvalidSpec,
      `cluster ${pull.cluster} is a pull cluster (it connects to the managing cluster; the managing cluster never dials it): a ${obj.kind} cannot reach it; use a ProxySync (or a FleetSync of kind ProxySync)`,
    );
  }
  return pull;
}

/**
 * Opens ahead the cluster of a sync just seen (ClusterRegistry.prepare), so
 * that its first reconcile finds it open: unless it is suspended or being
 * deleted, or names no cluster (its reconcile says what is wrong).
 */
export function prepareCluster(registry: ClusterRegistry, obj: KubeObject): void {
  const spec = obj.spec as (ClusterSpec & { suspend?: boolean }) | undefined;
  if (!spec || spec.suspend || obj.metadata.deletionTimestamp || (!spec.kubeConfig && !spec.clusterRef)) return;
  registry.prepare(clusterUser(obj), secretRefOf(obj, spec));
}

/** What a sync says of a cluster whose server answered, but not as a Kubernetes API server does (NotKubernetesError). */
export function notKubernetesMessage(cluster: string, error: string): string {
  return `cluster ${cluster} is not usable: ${error}`;
}

/** Says in the status (with an Event and a log line, when it changes) why the cluster cannot be used; when to come back. */
export async function reportUnusable(
  deps: { writer: ObjectWriter; events: EventRecorder },
  obj: KubeObject,
  status: SyncStatusDraft,
  err: ClusterNotUsable,
  log: Logger,
): Promise<ReconcileResult> {
  if (err.busy) return { requeueAfterMs: err.retryInMs ?? BUSY_RETRY_MS };
  const next = failed(status, err.reason, err.message, obj.metadata.generation);
  if (await deps.writer.updateStatus(obj, next)) {
    log.warn({ reason: err.reason, message: err.message }, 'cluster not usable');
    await deps.events.record(obj, 'Warning', err.reason, err.message);
  }
  // A change of the Secret wakes it at once; this is the backstop (and the probe's backoff).
  return { requeueAfterMs: err.retryInMs ?? 60_000 };
}

/** What a remote cluster knows of its outage (clusters/reachability.ts); a local target has none. */
export type Outage = Pick<Reachability, 'reachable' | 'describe'>;

/**
 * One wording for one outage, whoever meets it: a request that got no answer
 * mid-apply, a reconcile turned away, a failed probe (cluster-access.ts). The
 * outage's description when the cluster's reachability knows it (its first
 * error, when last reached), so that the status is written once per outage.
 */
export function unreachableMessage(cluster: string, error: string, outage?: Outage): string {
  return `cluster ${cluster} is unreachable: ${outage && !outage.reachable ? outage.describe() : `no answer (${error})`}`;
}
