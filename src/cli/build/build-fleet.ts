// `syncprims build fleetsync/NAME --cluster C`: the child (a RemoteSync or a
// ProxySync) cluster C gets of the FleetSync's update revision, read from the
// managing cluster and made as the operator makes it (views/fleet-child.ts).
// A cluster not in the inventory, not selected, or whose template cannot be
// made (an override, a value) ends the command with why.
import type { FleetSyncSpec } from '../../api/fleet.js';
import type { FleetSync } from '../../api/objects.js';
import { parseSyncObject } from '../../api/validate.js';
import { readInventory } from '../../clusters/inventory-read.js';
import { selectClusters } from '../../clusters/inventory.js';
import type { InventoryCluster } from '../../clusters/inventory-types.js';
import { getIfExists, type KubeClient } from '../../kube/client.js';
import type { KubeObject } from '../../kube/resources.js';
import { fleetChild } from '../../views/fleet-child.js';
import { getSync, syncObjectPath } from '../../views/sync-api.js';
import { withCluster, type ClusterFlags } from '../cluster.js';
import { CliError } from '../errors.js';
import { toJson, toYaml } from '../output.js';

export interface FleetBuildFlags extends ClusterFlags {
  cluster: string;
  output: 'yaml' | 'json';
}

/** Prints the child of FleetSync `name` for `flags.cluster`. */
export async function buildFleetChild(name: string, flags: FleetBuildFlags): Promise<void> {
  await withCluster(flags, async ({ client, namespace }) => {
    const fleet = parsedFleet(await getSync(client, 'FleetSync', namespace, name));
    const cluster = selectedCluster(fleet, await readInventory(client, namespace), flags.cluster);
    const specs = await dependencySpecs(client, fleet);
    const made = fleetChild(fleet, cluster, (ns, n) => specs.get(`${ns}/${n}`));
    if (!made.ok) throw new CliError(`FleetSync ${namespace}/${name}: cluster ${cluster.name} gets no child (${made.reason}): ${made.message}`);
    if (flags.output === 'json') return void process.stdout.write(toJson(made.child));
    const overrides = made.overrides.length > 0 ? `overrides ${made.overrides.join(', ')}` : 'no override';
    const values = made.used ? `; values ${Object.keys(made.used).sort().join(', ') || 'none used'}` : '';
    process.stdout.write(`# ${made.child.kind} ${namespace}/${made.child.metadata.name ?? ''}: FleetSync ${name}'s child for cluster ${cluster.name}, revision ${made.revision} (${overrides}${values}); the operator adds the time its wave admits it\n`);
    process.stdout.write(toYaml(made.child));
  });
}

function parsedFleet(obj: KubeObject): FleetSync {
  const parsed = parseSyncObject('FleetSync', obj);
  if (!parsed.ok) throw new CliError(`FleetSync ${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}: invalid spec: ${parsed.message} (the operator makes no child of it either)`);
  return parsed.value;
}

/** The inventory's cluster `name`, which the FleetSync must select, or why it gets no child. */
function selectedCluster(fleet: FleetSync, inventory: InventoryCluster[], name: string): InventoryCluster {
  const namespace = fleet.metadata.namespace ?? '';
  const fleetName = `FleetSync ${namespace}/${fleet.metadata.name ?? ''}`;
  const found = inventory.find((c) => c.name === name);
  if (!found) {
    const names = inventory.map((c) => c.name);
    const known = names.length > 0 ? `its clusters: ${[...new Set(names)].join(', ')}` : 'it has none';
    throw new CliError(`cluster ${name} is not in the inventory of namespace ${namespace} (${known}; register one: syncprims cluster add ${name} --kubeconfig FILE -n ${namespace})`);
  }
  if (found.problem) throw new CliError(`cluster ${name} cannot be used, so ${fleetName} gives it no child: ${found.problem}`);
  if (!selectClusters(inventory, fleet.spec.clusters).includes(found)) {
    const labels = Object.entries(found.labels).map(([k, v]) => `${k}=${v}`).join(',') || 'none';
    throw new CliError(`${fleetName} does not select cluster ${name} (its spec.clusters: ${JSON.stringify(fleet.spec.clusters)}; the cluster's labels: ${labels})`);
  }
  return found;
}

/** The spec of each FleetSync the spec depends on (`namespace/name`), read as the operator reads them: one absent is not in the map. */
async function dependencySpecs(client: KubeClient, fleet: FleetSync): Promise<Map<string, Partial<FleetSyncSpec>>> {
  const namespace = fleet.metadata.namespace ?? '';
  const refs = (fleet.spec.dependsOn ?? []).filter((d) => d.kind === 'FleetSync').map((d) => ({ namespace: d.namespace ?? namespace, name: d.name }));
  const specs = new Map<string, Partial<FleetSyncSpec>>();
  await Promise.all(
    refs.map(async (r) => {
      const other = await getIfExists<KubeObject>(client, syncObjectPath('FleetSync', r.namespace, r.name));
      if (other?.spec) specs.set(`${r.namespace}/${r.name}`, other.spec as Partial<FleetSyncSpec>);
    }),
  );
  return specs;
}
