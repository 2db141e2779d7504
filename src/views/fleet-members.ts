// The children of the FleetSyncs among a set of syncs (a ProxySync or
// RemoteSync labelled syncprims.dev/fleetsync with a FleetSync of its
// namespace that is in the set), so that the views show them as members of
// their FleetSync rather than as hundreds of syncs of their own. Pure.
import { FLEET_CLUSTER_LABEL, FLEET_REVISION_ANNOTATION, FLEETSYNC_LABEL } from '../fleet/children.js';
import { nodeKey, nodeOf, type SyncNode } from '../deps/refs.js';
import type { Kind } from '../api/kinds.js';
import type { KubeObject } from '../kube/resources.js';

/** One child of a FleetSync. */
export interface FleetMember {
  /** The cluster it is for (its label syncprims.dev/cluster). */
  cluster: string;
  object: KubeObject;
}

export class FleetMembers {
  /** Child key -> its FleetSync's key. */
  private readonly fleetOf = new Map<string, string>();
  /** FleetSync key -> its children, by cluster name. */
  private readonly byFleet = new Map<string, FleetMember[]>();

  constructor(objects: readonly KubeObject[]) {
    const fleets = new Set(objects.filter((o) => o.kind === 'FleetSync').map((o) => keyOf(o)));
    for (const o of objects) {
      const fleet = fleetNameOf(o);
      if (fleet === undefined) continue;
      const fleetKey = nodeKey({ kind: 'FleetSync', namespace: o.metadata.namespace ?? '', name: fleet });
      if (!fleets.has(fleetKey)) continue;
      this.fleetOf.set(keyOf(o), fleetKey);
      const list = this.byFleet.get(fleetKey) ?? [];
      list.push({ cluster: o.metadata.labels?.[FLEET_CLUSTER_LABEL] ?? '', object: o });
      this.byFleet.set(fleetKey, list);
    }
    for (const list of this.byFleet.values()) list.sort((a, b) => a.cluster.localeCompare(b.cluster) || keyOf(a.object).localeCompare(keyOf(b.object)));
  }

  /** The key of the FleetSync `key` (a node key) is a child of, if it is one. */
  fleetKeyOf(key: string): string | undefined {
    return this.fleetOf.get(key);
  }

  isMember(obj: KubeObject): boolean {
    return this.fleetOf.has(keyOf(obj));
  }

  /** The children of a FleetSync (by its node key), by cluster name. */
  membersOf(fleetKey: string): FleetMember[] {
    return this.byFleet.get(fleetKey) ?? [];
  }

  /** A node key as the views draw it: a child's becomes its FleetSync's. */
  lift(key: string): string {
    return this.fleetOf.get(key) ?? key;
  }

  /**
   * Cycles with each child replaced by its FleetSync (the same cluster's
   * children of two FleetSyncs that wait on each other are those two
   * FleetSyncs' cycle), each once.
   */
  liftCycles(cycles: readonly string[][]): string[][] {
    const seen = new Set<string>();
    const out: string[][] = [];
    for (const cycle of cycles) {
      // Two children of one FleetSync in a row are one step; a sync waiting on itself stays a cycle.
      const lifted = cycle.map((k) => this.lift(k)).filter((k, i, all) => i === 0 || k !== all[i - 1] || cycle[i] === cycle[i - 1]);
      const ring = lifted.slice(0, -1);
      const id = [...ring].sort().join('|');
      if (ring.length === 0 || seen.has(id)) continue;
      seen.add(id);
      out.push(lifted);
    }
    return out;
  }
}

/** The FleetSync a ProxySync or RemoteSync says it belongs to (its label), if any. */
export function fleetNameOf(obj: KubeObject): string | undefined {
  if (obj.kind !== 'ProxySync' && obj.kind !== 'RemoteSync') return undefined;
  return obj.metadata.labels?.[FLEETSYNC_LABEL] || undefined;
}

/** The template revision a child was given (annotation syncprims.dev/fleet-revision). */
export function memberRevision(obj: KubeObject): string | undefined {
  return obj.metadata.annotations?.[FLEET_REVISION_ANNOTATION] || undefined;
}

function keyOf(o: KubeObject): string {
  return nodeKey(nodeOf(o.kind as Kind, o) as SyncNode);
}
