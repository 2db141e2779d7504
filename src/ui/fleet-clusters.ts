// What the web view's FleetSync panel lists per cluster: the wave it is in,
// its child, its values (from the namespace's cluster inventory, as the
// FleetSync controller reads it), the overrides that select it (each by its
// index and first patch) and why it fails, as the FleetSync's
// status.failures says (a value missing for substitution, an override that
// does not apply, or its child's failure). Pure.
import type { FleetOverride, FleetSyncSpec, FleetSyncStatus } from '../api/fleet.js';
import { selectClusters, troubledClusters, type InventoryCluster } from '../clusters/inventory.js';
import { overridesOf } from '../fleet/overrides.js';
import type { KubeObject } from '../kube/resources.js';
import { rolloutView } from '../views/rollout-view.js';

/** An override that selects a cluster: its index in spec.overrides, and its first patch (what it is about). */
export interface AppliedOverride {
  index: number;
  /** `add /metadata/labels/tier`. */
  first: string;
  /** How many patches it has. */
  patches: number;
}

export interface FleetClusterItem {
  name: string;
  /** The rollout's wave that holds it (status.waves[].members). */
  wave?: string;
  /** Its child's key (one of the FleetView's children), if it has one. */
  child?: string;
  /** Its values (cluster_name among them); undefined: it is not in the inventory the view reads (or the view reads none yet). */
  values?: Record<string, string>;
  /** The overrides of the spec that select it, in order (none: not in the inventory, or none selects it). */
  overrides: AppliedOverride[];
  /** Why it fails (status.failures), e.g. `SubstitutionFailed` and the variable missing. */
  problem?: { reason: string; message: string };
}

/**
 * The clusters of a FleetSync (`children`: its children's keys by cluster): those it selects from `inventory` (with those
 * of a problem), those with a child, a failure or a place in a wave; in wave
 * order (those in no wave last), then by name.
 */
export function fleetClusters(fleet: KubeObject, children: ReadonlyMap<string, string>, inventory: readonly InventoryCluster[] | undefined): FleetClusterItem[] {
  const spec = (fleet.spec ?? {}) as Partial<FleetSyncSpec>;
  const status = (fleet.status ?? {}) as Partial<FleetSyncStatus>;
  const sel = spec.clusters ?? {};
  const known = new Map<string, InventoryCluster>();
  for (const c of inventory ? [...selectClusters([...inventory], sel), ...troubledClusters([...inventory], sel)] : []) known.set(c.name, c);
  const waves = rolloutView(fleet)?.waves ?? [];
  const waveOf = new Map<string, { name: string; at: number }>();
  waves.forEach((w, at) => w.members.forEach((m) => waveOf.set(m, { name: w.name, at })));
  const problems = new Map((status.failures ?? []).map((f) => [f.cluster, { reason: f.reason, message: f.message }]));
  const names = new Set([...known.keys(), ...children.keys(), ...problems.keys(), ...waveOf.keys()]);
  return [...names]
    .map((name): FleetClusterItem => {
      const cluster = known.get(name);
      const child = children.get(name);
      const problem = problems.get(name);
      const wave = waveOf.get(name)?.name;
      return {
        name,
        ...(wave !== undefined ? { wave } : {}),
        ...(child !== undefined ? { child } : {}),
        ...(cluster ? { values: cluster.values } : {}),
        overrides: cluster ? appliedOverrides(spec.overrides, cluster) : [],
        ...(problem ? { problem } : {}),
      };
    })
    .sort((a, b) => (waveOf.get(a.name)?.at ?? waves.length) - (waveOf.get(b.name)?.at ?? waves.length) || compare(a.name, b.name));
}

function appliedOverrides(overrides: readonly FleetOverride[] | undefined, cluster: InventoryCluster): AppliedOverride[] {
  return overridesOf(overrides, cluster).map((index) => {
    const patches = overrides![index]!.patches;
    const first = patches[0];
    return { index, first: first ? `${first.op} ${first.path}` : '', patches: patches.length };
  });
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
