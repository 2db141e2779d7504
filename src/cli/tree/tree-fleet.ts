// The FleetSync part of `syncprims tree`: its children (one per cluster),
// each followed into its cluster as a ProxySync or RemoteSync is; past
// MAX_FOLLOWED_CHILDREN only their state is shown (their own tree is one
// command away).
import { mapLimit } from '../../apply/map-limit.js';
import { FLEETSYNC_LABEL } from '../../fleet/children.js';
import type { KubeClient } from '../../kube/client.js';
import type { KubeObject } from '../../kube/resources.js';
import { FleetMembers, memberRevision, type FleetMember } from '../../views/fleet-members.js';
import { rolloutView } from '../../views/rollout-view.js';
import { listSyncs } from '../../views/sync-api.js';
import { syncState, type FleetChildTree, type SyncTree } from '../../views/tree-model.js';
import { readUnmade } from '../unmade-read.js';

/** A FleetSync's children followed into their clusters at most; the rest show their state. */
export const MAX_FOLLOWED_CHILDREN = 50;
/** Children looked into at once. */
const CONCURRENCY = 4;

/** The children of `fleet`, read by their label (ProxySyncs and RemoteSyncs of its namespace). */
export async function readMembers(client: KubeClient, fleet: KubeObject): Promise<FleetMember[]> {
  const namespace = fleet.metadata.namespace ?? '';
  const selector = `${FLEETSYNC_LABEL}=${fleet.metadata.name ?? ''}`;
  const lists = await Promise.all((['ProxySync', 'RemoteSync'] as const).map((kind) => listSyncs(client, kind, namespace, selector)));
  return new FleetMembers([fleet, ...lists.flatMap((l) => l.items)]).membersOf(`FleetSync/${namespace}/${fleet.metadata.name ?? ''}`);
}

/** Each member's tree, by cluster name: `follow` reads what it has in its cluster (for the first MAX_FOLLOWED_CHILDREN). */
export function childTrees(members: readonly FleetMember[], follow: (child: KubeObject) => Promise<SyncTree>): Promise<FleetChildTree[]> {
  const numbered = members.map((m, i) => ({ ...m, i }));
  return mapLimit(numbered, CONCURRENCY, async ({ cluster, object, i }) => {
    const sync: SyncTree =
      i < MAX_FOLLOWED_CHILDREN
        ? await follow(object)
        : { ...syncState(object), notFollowed: `more than ${MAX_FOLLOWED_CHILDREN} clusters: run syncprims tree ${object.kind.toLowerCase()}/${object.metadata.name ?? ''}` };
    const revision = memberRevision(object);
    return { clusterName: cluster, ...(revision ? { fleetRevision: revision } : {}), sync };
  });
}

/** A FleetSync rolling out in waves: its waves, for the tree to group the children by. */
export function wavesOf(fleet: KubeObject): Pick<SyncTree, 'waves'> {
  const rollout = rolloutView(fleet);
  return rollout ? { waves: rollout.waves } : {};
}

/** The clusters the FleetSync cannot make a template for (cli/unmade-read.ts), for the tree to name under each. */
export async function unmadeOf(client: KubeClient, fleet: KubeObject): Promise<Pick<SyncTree, 'unmade'>> {
  const unmade = await readUnmade(client, [fleet]);
  return unmade.length > 0 ? { unmade: unmade.map(({ cluster, reason, message }) => ({ cluster, reason, message })) } : {};
}
