// The ProxySyncs on a pull cluster woken the moment its operator is back: its
// Lease renewed after it had lapsed, or made for the first time (a join), wakes
// the ProxySyncs of that cluster, which said ClusterOffline (or never-seen)
// until then. A renewal in time wakes nobody: it changes nothing they say. The
// ProxySyncs' retry while offline (PULL_OFFLINE_RETRY_MS) stays, as a backstop.
import type { PullTarget } from '../clusters/pull-target.js';
import type { RemoteCluster } from '../clusters/remote-cluster.js';
import type { KubeObject } from '../kube/resources.js';
import type { InformerEvent } from '../runtime/informer.js';
import type { Logger } from '../runtime/logger.js';
import { presenceOf } from '../proxy/pull-presence.js';
import { pullLeases } from './proxysync-pull.js';

/** Wakes `user` (`Kind/namespace/name`) with `cause`. */
export type WakeUser = (user: string, cause: string) => void;

/** Follows the pull Leases of `home` (the managing cluster, where the assignments are): see the header. */
export function wakeOnPullLeases(home: RemoteCluster, pullOf: (user: string) => PullTarget | undefined, wake: WakeUser, log: Logger): void {
  pullLeases(home)
    .then((leases) => leases.onEvent((e) => back(e, Date.now()) && wakeUsersOf(home, e.object.metadata.namespace, pullOf, wake)))
    .catch((err: unknown) => log.warn({ err: err instanceof Error ? err.message : String(err) }, 'cannot watch the pull clusters\' Leases: their ProxySyncs look again on their retry'));
}

/** Pure: whether the event is a pull cluster's operator back (its Lease renewed after it lapsed, or new) at `now`. */
export function back(e: InformerEvent<KubeObject>, now: number): boolean {
  if (e.type === 'deleted' || !presenceOf(e.object, now).online) return false;
  return e.type === 'added' || !presenceOf(e.old, now).online;
}

function wakeUsersOf(home: RemoteCluster, namespace: string | undefined, pullOf: (user: string) => PullTarget | undefined, wake: WakeUser): void {
  for (const user of home.users) {
    const pull = pullOf(user);
    if (pull && pull.namespace === namespace) wake(user, `pull cluster ${pull.cluster} online again`);
  }
}
