// What the web view lists of FleetSyncs: each with its phase and cluster
// counts, the clusters that fail it, its children (one per cluster), which
// can be selected like any sync, and per cluster its wave, values, overrides
// and problem (fleet-clusters.ts). Pure; made from the cached objects and the
// cluster inventory.
import type { FleetSyncStatus } from '../api/fleet.js';
import type { InventoryCluster } from '../clusters/inventory.js';
import { nodeKey, type SyncNode } from '../deps/refs.js';
import type { KubeObject } from '../kube/resources.js';
import { FleetMembers } from '../views/fleet-members.js';
import { syncRow } from '../views/sync-rows.js';
import { fleetClusters, type FleetClusterItem } from './fleet-clusters.js';

export interface FleetChildItem {
  key: string;
  kind: string;
  namespace: string;
  name: string;
  label: string;
  /** The cluster it is for. */
  cluster: string;
  state: string;
  reason?: string;
  message?: string;
  resourceVersion?: string;
}

export interface FleetView {
  key: string;
  namespace: string;
  name: string;
  state: string;
  phase?: string;
  reason?: string;
  message?: string;
  /** `ready/selected`. */
  readyClusters: string;
  /** Rolling out in waves: `3/5 waves, 412/1000`. */
  progress?: string;
  clusters?: FleetSyncStatus['clusters'];
  failures: NonNullable<FleetSyncStatus['failures']>;
  children: FleetChildItem[];
  /** Per cluster: its wave, child, values, overrides and problem. */
  clusterRows: FleetClusterItem[];
  /** Whether the view reads the namespace's cluster inventory (else no cluster's values are known). */
  valuesKnown: boolean;
}

/** A namespace's cluster inventory; undefined: the view does not read it (yet). */
export type InventoryOf = (namespace: string) => readonly InventoryCluster[] | undefined;

/** The FleetSyncs among `objects`, by namespace and name; `stateOf` colours them as the rest of the view. */
export function fleetViews(objects: readonly KubeObject[], stateOf: (o: KubeObject) => string, inventoryOf: InventoryOf = () => undefined): FleetView[] {
  const members = new FleetMembers(objects);
  return objects
    .filter((o) => o.kind === 'FleetSync')
    .map((o): FleetView => {
      const row = syncRow(o);
      const status = (o.status ?? {}) as FleetSyncStatus;
      const key = keyOf(o);
      const children = members.membersOf(key).map(({ cluster, object }) => childItem(object, cluster, stateOf));
      const inventory = inventoryOf(row.namespace);
      return {
        key,
        namespace: row.namespace,
        name: row.name,
        state: stateOf(o),
        ...(row.fleet?.phase ? { phase: row.fleet.phase } : {}),
        ...(row.reason ? { reason: row.reason } : {}),
        ...(row.message ? { message: row.message } : {}),
        readyClusters: row.fleet?.clusters ?? '0/0',
        ...(row.fleet?.progress ? { progress: row.fleet.progress } : {}),
        ...(status.clusters ? { clusters: status.clusters } : {}),
        failures: status.failures ?? [],
        children,
        clusterRows: fleetClusters(o, new Map(children.map((c) => [c.cluster, c.key])), inventory),
        valuesKnown: inventory !== undefined,
      };
    })
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
}

function childItem(o: KubeObject, cluster: string, stateOf: (o: KubeObject) => string): FleetChildItem {
  const row = syncRow(o);
  return {
    key: keyOf(o),
    kind: o.kind,
    namespace: row.namespace,
    name: row.name,
    label: `${o.kind}/${row.name}`,
    cluster,
    state: stateOf(o),
    ...(row.reason ? { reason: row.reason } : {}),
    ...(row.message ? { message: row.message } : {}),
    ...(o.metadata.resourceVersion ? { resourceVersion: o.metadata.resourceVersion } : {}),
  };
}

function keyOf(o: KubeObject): string {
  return nodeKey({ kind: o.kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '' } as SyncNode);
}
