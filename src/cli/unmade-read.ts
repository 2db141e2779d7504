// The unmade templates of some FleetSyncs (views/fleet-unmade.ts), for
// `tree` and `doctor`: their namespaces' inventories read (only where a
// FleetSync has overrides or substitute), each FleetSync's spec as it is now.
// Where an inventory may not be read (403: listing Secrets is not granted),
// what the operator found is taken instead: its status.failures of those
// reasons (at most 20, as of the generation it last observed).
import { Reason } from '../api/conditions.js';
import type { FleetSyncStatus } from '../api/fleet.js';
import { readInventory } from '../clusters/inventory-read.js';
import type { Requester } from '../kube/client.js';
import { ApiError } from '../kube/errors.js';
import type { KubeObject } from '../kube/resources.js';
import { templatesPerCluster, unmadeTemplates, type UnmadeTemplate } from '../views/fleet-unmade.js';

/** Every FleetSync of `objects` that cannot make some selected cluster's template, per cluster. */
export async function readUnmade(client: Requester, objects: readonly KubeObject[]): Promise<UnmadeTemplate[]> {
  const fleets = objects.filter((o) => o.kind === 'FleetSync' && templatesPerCluster(o));
  const namespaces = [...new Set(fleets.map((f) => f.metadata.namespace ?? ''))].sort();
  const found = await Promise.all(
    namespaces.map(async (namespace) => {
      const here = fleets.filter((f) => (f.metadata.namespace ?? '') === namespace);
      try {
        return unmadeTemplates(here, await readInventory(client, namespace));
      } catch (err) {
        if (err instanceof ApiError && err.status === 403) return here.flatMap(reportedUnmade);
        throw err;
      }
    }),
  );
  return found.flat();
}

/** The unmade templates a FleetSync's status reports. */
export function reportedUnmade(fleet: KubeObject): UnmadeTemplate[] {
  const failures = ((fleet.status ?? {}) as FleetSyncStatus).failures ?? [];
  return failures.flatMap((f): UnmadeTemplate[] =>
    f.reason === Reason.OverrideFailed || f.reason === Reason.SubstitutionFailed
      ? [{ namespace: fleet.metadata.namespace ?? '', fleetSync: fleet.metadata.name ?? '', cluster: f.cluster, reason: f.reason, message: f.message }]
      : [],
  );
}
