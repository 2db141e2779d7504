// What a ProxySync on a pull cluster meets that a push one does not: the
// cluster's identity revoked, and its operator's Lease (when it was last
// seen). See docs/pull.md.
import { Reason } from '../api/conditions.js';
import { PULL_LEASE } from '../clusters/pull-names.js';
import type { PullTarget } from '../clusters/pull-target.js';
import type { RemoteCluster } from '../clusters/remote-cluster.js';
import { CORE, objectPath, type KubeObject } from '../kube/resources.js';
import type { Informer } from '../runtime/informer.js';
import { Halt } from './proxysync-phases.js';

/** How soon a ProxySync on an offline pull cluster looks again whether its operator is back (a GET of its Lease). */
export const PULL_OFFLINE_RETRY_MS = 10_000;

/** The path of the Lease a pull cluster's operator renews in its assignments namespace. */
export function leasePath(namespace: string): string {
  return objectPath(CORE.leases, PULL_LEASE, namespace);
}

/**
 * The Lease of a pull cluster's operator, from the managing cluster's one watch of every such Lease
 * (by name, in every namespace): no request per reconcile of each of its ProxySyncs.
 */
export async function pullLease(home: Pick<RemoteCluster, 'cache'>, pull: PullTarget): Promise<KubeObject | undefined> {
  return (await pullLeases(home)).store.get(`${pull.namespace}/${PULL_LEASE}`);
}

/** That one watch (the informer of every pull cluster's Lease, by name). */
export function pullLeases(home: Pick<RemoteCluster, 'cache'>): Promise<Informer<KubeObject>> {
  return home.cache.informer('coordination.k8s.io/v1', 'Lease', { allNamespaces: true, fieldSelector: `metadata.name=${PULL_LEASE}` });
}

/** A pull cluster whose identity was revoked: nothing is written for it until it is registered again. */
export function revokedHalt(pull: PullTarget): Halt {
  return new Halt(
    Reason.ClusterRevoked,
    `pull cluster ${pull.cluster}'s identity was revoked at ${pull.revokedAt} (syncprims cluster revoke): nothing is given to it; register it again with syncprims cluster add ${pull.cluster} --pull -n ${pull.inventoryNamespace}, then join it with the new bundle`,
    { requeueAfterMs: 60_000 },
  );
}
