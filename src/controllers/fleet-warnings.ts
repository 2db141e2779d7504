// What a FleetSync says once, beside its status: revisions carrying its label
// that are not its own (ignored), clusters whose inventory entry has a
// problem, and clusters whose template cannot be made (an override that does
// not apply, a value missing): their children kept as they are. Each a
// Warning Event and a log line.
import { Reason } from '../api/conditions.js';
import type { InventoryCluster } from '../clusters/inventory.js';
import type { ClusterState } from '../fleet/fleet-status.js';
import type { KubeObject } from '../kube/resources.js';
import type { Logger } from '../runtime/logger.js';
import type { UntrustedRevision } from './fleet-revisions.js';
import type { LifecycleDeps } from './lifecycle.js';

/** Revisions not seen before that carry the FleetSync's label and are not its own: one Warning Event for them all. */
export async function tellUntrusted(deps: Pick<LifecycleDeps, 'events'>, obj: KubeObject, untrusted: UntrustedRevision[], log: Logger): Promise<void> {
  if (untrusted.length === 0) return;
  const named = untrusted.map((r) => `ControllerRevision ${r.name} (${r.why})`).join('; ');
  const message = `ignored, never used, changed or deleted: ${named}; they carry this FleetSync's label but are not revisions it wrote`;
  log.warn({ revisions: untrusted }, 'ControllerRevisions with the FleetSync\'s label that are not its own: ignored');
  await deps.events.record(obj, 'Warning', Reason.UntrustedRevision, message);
}

/** The reasons of a cluster whose template cannot be made (fleet/cluster-template.ts). */
const UNMADE: ReadonlySet<string> = new Set([Reason.OverrideFailed, Reason.SubstitutionFailed]);

/**
 * Clusters with an inventory problem, or whose template cannot be made, not
 * told yet: a Warning Event each (its reason the state's), once per problem.
 * `told` is this FleetSync's memory of what was (`cluster` and message), kept
 * by the caller across reconciles: a problem gone is forgotten, so it is told
 * again if it comes back. Not read from the status' failures, which list at
 * most MAX_FLEET_FAILURES clusters.
 */
export async function tellTroubled(
  deps: Pick<LifecycleDeps, 'events'>,
  obj: KubeObject,
  told: Set<string>,
  troubled: InventoryCluster[],
  states: Map<string, ClusterState>,
  log: Logger,
): Promise<void> {
  const inInventory = new Set(troubled.map((c) => c.name));
  const now = new Set<string>();
  for (const [cluster, state] of states) {
    if (state.state !== 'failed' || !(inInventory.has(cluster) || UNMADE.has(state.reason))) continue;
    const key = `${cluster}\n${state.message}`;
    now.add(key);
    if (told.has(key)) continue;
    const what = inInventory.has(cluster) ? 'cluster with an inventory problem' : 'cluster whose template cannot be made';
    log.warn({ cluster, reason: state.reason, problem: state.message }, `${what}: its child is kept as it is`);
    await deps.events.record(obj, 'Warning', state.reason, `cluster ${cluster}: ${state.message}`);
  }
  for (const key of told) if (!now.has(key)) told.delete(key);
  for (const key of now) told.add(key);
}
