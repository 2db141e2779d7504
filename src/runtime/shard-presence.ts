// What keeps the two modes of several replicas from working side by side (docs/shards.md,
// "Switching modes"): a `--leader-elect` replica stands aside (does not take the leader Lease, or
// gives it back) while any `--shards` replica is live, as this watch of the membership Leases
// sees them; the sharded replicas, for their part, take no key while the leader Lease is held
// (runtime/shards.ts). A Deployment switched from one mode to the other rolls its pods: without
// this, the old leader and the new replicas would both write for a while.
import { SHARD_MEMBER_LABEL } from '../api/shard-marks.js';
import type { KubeClient } from '../kube/client.js';
import { collectionPath, CORE, type KubeObject } from '../kube/resources.js';
import type { ClusterCache } from './cache.js';
import type { Lease } from './lease-lock.js';
import { ShardMembers } from './shard-members.js';

const LEASES = 'coordination.k8s.io/v1';
/** Members named in a reason; the rest are counted. */
const NAMED = 3;

type LeaseObject = Lease & KubeObject;

export class ShardPresence {
  private constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly members: ShardMembers,
  ) {}

  /** Follows the membership Leases in `namespace` (primed before it resolves). */
  static async start(cache: ClusterCache, client: KubeClient, namespace: string, leaseDurationMs: number): Promise<ShardPresence> {
    const members = new ShardMembers(leaseDurationMs);
    const informer = await cache.informer<LeaseObject>(LEASES, 'Lease', { namespace, labelSelector: SHARD_MEMBER_LABEL });
    for (const lease of informer.store.list()) members.observe(lease);
    informer.onEvent((e) => (e.type === 'deleted' ? members.forget(e.object.spec?.holderIdentity ?? '') : members.observe(e.object)));
    return new ShardPresence(client, namespace, members);
  }

  /**
   * Why a leader must stand aside now (sharded replicas are live), or
   * undefined. `fresh`: the membership Leases read now, not as watched (a
   * replica that joined a moment ago counts: a member seen for the first time
   * is live for one lease duration).
   */
  async standAside(fresh: boolean): Promise<string | undefined> {
    if (fresh) {
      const list = await this.client.request<{ items: Lease[] }>({
        path: collectionPath(CORE.leases, this.namespace),
        query: { labelSelector: SHARD_MEMBER_LABEL },
      });
      for (const lease of list.items) this.members.observe(lease);
    }
    const live = this.members.live();
    if (live.length === 0) return undefined;
    const named = live.slice(0, NAMED).join(', ') + (live.length > NAMED ? ` and ${live.length - NAMED} more` : '');
    return `replicas run with --shards (${named}): a leader would work beside them; it leads once none is live`;
  }
}
