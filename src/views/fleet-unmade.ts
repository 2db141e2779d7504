// The clusters whose child a FleetSync cannot make (an override that does not
// apply, a value missing), computed from the spec as it is now and the
// inventory, with the function the operator uses (fleet/cluster-template.ts):
// every selected cluster is named, not only the 20 of status.failures, and
// before the operator has looked at a new spec; what `get clusters`, `tree`
// and `doctor` say. Pure.
import type { Reason } from '../api/conditions.js';
import type { FleetSync } from '../api/objects.js';
import { parseSyncObject } from '../api/validate.js';
import { selectClusters } from '../clusters/inventory.js';
import type { InventoryCluster } from '../clusters/inventory-types.js';
import { revisionDataOf } from '../fleet/children.js';
import { clusterTemplate } from '../fleet/cluster-template.js';
import type { KubeObject } from '../kube/resources.js';

/** One cluster's template that one FleetSync cannot make. */
export interface UnmadeTemplate {
  /** The FleetSync's namespace and name. */
  namespace: string;
  fleetSync: string;
  cluster: string;
  reason: typeof Reason.OverrideFailed | typeof Reason.SubstitutionFailed;
  message: string;
}

/** Whether a FleetSync makes a template per cluster at all (else every cluster's is the template: nothing can fail). */
export function templatesPerCluster(fleet: KubeObject): boolean {
  const spec = (fleet.spec ?? {}) as { substitute?: unknown; overrides?: unknown[] };
  return spec.substitute !== undefined || (Array.isArray(spec.overrides) && spec.overrides.length > 0);
}

/**
 * For each FleetSync of `fleets` (of `clusters`' namespace), the clusters it
 * selects whose template cannot be made, by FleetSync and cluster. A
 * FleetSync whose spec is not valid is left out (its Stalled condition says why).
 */
export function unmadeTemplates(fleets: readonly KubeObject[], clusters: InventoryCluster[]): UnmadeTemplate[] {
  return fleets.filter(templatesPerCluster).flatMap((obj) => {
    const parsed = parseSyncObject('FleetSync', obj);
    return parsed.ok ? unmadeOf(parsed.value, clusters) : [];
  });
}

function unmadeOf(fleet: FleetSync, clusters: InventoryCluster[]): UnmadeTemplate[] {
  const data = revisionDataOf(fleet.spec);
  return selectClusters(clusters, fleet.spec.clusters).flatMap((cluster): UnmadeTemplate[] => {
    const made = clusterTemplate(data, cluster);
    if (made.ok) return [];
    return [{ namespace: fleet.metadata.namespace ?? '', fleetSync: fleet.metadata.name ?? '', cluster: cluster.name, reason: made.reason, message: made.message }];
  });
}
