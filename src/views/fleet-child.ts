// The child one cluster gets of a FleetSync's update revision (the template
// as its spec has it now), made as the operator makes it (wantedChild in
// controllers/fleetsync.ts): the cluster's template (fleet/cluster-template.ts:
// overrides, then values), then fleet/children.ts clusterChild.
// Only the time it was admitted at is left out (the operator's, when its wave
// takes the revision). For `syncprims build fleetsync/NAME --cluster C`. Pure.
import type { FleetSyncSpec } from '../api/fleet.js';
import type { FleetSync } from '../api/objects.js';
import type { InventoryCluster } from '../clusters/inventory-types.js';
import { clusterChild, dependencyTarget, revisionDataOf, templateRevision } from '../fleet/children.js';
import { clusterTemplate, type ClusterTemplate } from '../fleet/cluster-template.js';
import type { KubeObject } from '../kube/resources.js';

export type FleetChild =
  | {
      ok: true;
      child: KubeObject;
      /** The update revision, which the child carries. */
      revision: string;
      /** The overrides applied (their indexes). */
      overrides: number[];
      /** With `substitute`: each value the template used, and what it was given. */
      used?: Record<string, string>;
    }
  | Extract<ClusterTemplate, { ok: false }>;

/** `specOf(namespace, name)`: the spec of the FleetSync a `dependsOn` entry names (undefined when it is not there), whose child there (or itself) the cluster's child waits for, as the operator has it (fleet/children.ts dependencyTarget). */
export function fleetChild(fleet: FleetSync, cluster: InventoryCluster, specOf: (namespace: string, name: string) => Partial<FleetSyncSpec> | undefined): FleetChild {
  const namespace = fleet.metadata.namespace ?? '';
  const { spec } = fleet;
  const data = revisionDataOf(spec);
  const revision = templateRevision(data);
  const made = clusterTemplate(data, cluster);
  if (!made.ok) return made;
  const owner = { namespace, name: fleet.metadata.name ?? '', uid: fleet.metadata.uid ?? '', spec };
  const { child } = clusterChild(owner, cluster, made, { kind: data.kind, revision }, (ns, n) => dependencyTarget(specOf(ns, n), cluster));
  return { ok: true, child, revision, overrides: made.overrides, ...(made.used ? { used: made.used } : {}) };
}
