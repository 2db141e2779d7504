// Where each cluster's child of a FleetSync goes this reconcile: the
// rollout's plan (rollout.ts) from where the children stand, and the revision
// each child is made of (the update revision where admitted, else the one it
// has, kept in a ControllerRevision).
import type { FleetChildKind, FleetSyncStatus, WaveSpec } from '../api/fleet.js';
import type { InventoryCluster } from '../clusters/inventory.js';
import { approvalOf } from '../fleet/approvals.js';
import { childName, FLEET_ADMITTED_ANNOTATION, FLEET_REVISION_ANNOTATION, type FleetOwner } from '../fleet/children.js';
import { clusterState, type ClusterState } from '../fleet/fleet-status.js';
import type { PinnableSource } from '../fleet/pin-sources.js';
import type { FleetQuota } from '../fleet/quota.js';
import { planRollout, type RolloutMember, type RolloutPlan } from '../fleet/rollout.js';
import type { Requester } from '../kube/client.js';
import type { Discovery } from '../kube/discovery.js';
import type { KubeObject, ResourceInfo } from '../kube/resources.js';
import type { Informer } from '../runtime/informer.js';
import type { FleetApprovals, RolloutApprovals } from './fleet-approvals.js';
import type { FleetRevisions, RevisionData } from './fleet-revisions.js';


/** What only FleetSyncs need watched: the clusters of the namespaces, the template revisions, and the approvals of waves. */
export interface FleetParts {
  inventory: { list(namespace: string): InventoryCluster[] };
  revisions: FleetRevisions;
  approvals: Pick<RolloutApprovals, 'of'>;
}

export interface FleetSettings {
  /** The managing cluster, where FleetSyncs and their children live. */
  client: Requester;
  discovery: Discovery;
  /** The inventory and the revisions, started (and primed) when the first FleetSync is reconciled: an operator with none watches nothing more for them. */
  parts: () => Promise<FleetParts>;
  /** The shared informers and resources of the two child kinds. */
  children: Record<FleetChildKind, { informer: Informer<KubeObject>; resource: ResourceInfo }>;
  /** Why a wave's gates (`gates.dependsOn`) are not met; undefined when they are. */
  gateUnmet: (owner: FleetOwner, wave: WaveSpec) => string | undefined;
  /** The most children and bytes a FleetSync may have (`--fleet-max-clusters`, `--fleet-max-size`). */
  quota: FleetQuota;
  /**
   * What a template's Git or OCI ref names now, read in the FleetSync's
   * namespace as `account` (the template's service account) when given
   * (fleet/pin-sources.ts): every child gets that commit or digest.
   */
  resolveSource: (namespace: string, account: string | undefined, source: PinnableSource, intervalMs: number) => Promise<{ resolved: string; ref?: Record<string, string> }>;
}

/** What one cluster's child is made of: a revision, what it holds, and when the child took it. */
export interface Target {
  revision: string;
  data: RevisionData;
  admittedAt?: string;
}

/** The FleetSync's child for `cluster` of `kind`, as the cache has it. */
export function liveChildOf(settings: Pick<FleetSettings, 'children'>, owner: FleetOwner, kind: FleetChildKind, cluster: string): KubeObject | undefined {
  return settings.children[kind].informer.store.get(`${owner.namespace}/${childName(owner.name, cluster)}`);
}

/**
 * What each selected cluster's child is made of now: the update revision
 * (its data: the spec's, with a moving Git or OCI ref pinned) where the rollout admits it (all, without a rollout); else the revision
 * it has (kept as it is when that revision is no longer kept); a cluster
 * without a child gets the current revision.
 */
export function targetsOf(
  settings: Pick<FleetSettings, 'children'> & Pick<FleetParts, 'revisions'>,
  owner: FleetOwner,
  selected: InventoryCluster[],
  plan: RolloutPlan | undefined,
  update: { revision: string; data: RevisionData },
  current: string | undefined,
): Map<string, Target | undefined> {
  const now = new Date().toISOString();
  const targets = new Map<string, Target | undefined>();
  for (const cluster of selected) {
    const live = liveChildOf(settings, owner, owner.spec.kind, cluster.name);
    const has = live?.metadata.annotations?.[FLEET_REVISION_ANNOTATION];
    const admittedAt = live?.metadata.annotations?.[FLEET_ADMITTED_ANNOTATION];
    if (!plan || plan.update.has(cluster.name)) {
      targets.set(cluster.name, { revision: update.revision, data: update.data, admittedAt: has === update.revision ? admittedAt : now });
      continue;
    }
    const keep = has ?? current;
    const data = keep === undefined ? undefined : settings.revisions.data(owner, keep);
    targets.set(cluster.name, keep !== undefined && data ? { revision: keep, data, admittedAt: has === keep ? admittedAt : now } : undefined);
  }
  return targets;
}

/** Why each gated wave's gates are not met, read from the dependency graph before planning (wave name -> why). */
function unmetGatesOf(settings: Pick<FleetSettings, 'gateUnmet'>, owner: FleetOwner): Map<string, string> {
  const unmet = new Map<string, string>();
  for (const wave of owner.spec.rollout?.waves ?? []) {
    const why = wave.gates ? settings.gateUnmet(owner, wave) : undefined;
    if (why !== undefined) unmet.set(wave.name, why);
  }
  return unmet;
}

/**
 * The rollout's plan, from where each selected cluster stands before this
 * reconcile writes anything (`approvals`: the RolloutApprovals naming the
 * FleetSync; `unmade`: the clusters whose template of the update revision
 * cannot be made, failed whatever their child says).
 */
export function planOf(
  settings: FleetSettings,
  approvals: FleetApprovals,
  owner: FleetOwner,
  selected: InventoryCluster[],
  update: string,
  previous: FleetSyncStatus,
  unmade: ReadonlyMap<string, ClusterState>,
): RolloutPlan | undefined {
  const rollout = owner.spec.rollout;
  if (!rollout) return undefined;
  const members: RolloutMember[] = selected.map((cluster) => {
    const live = liveChildOf(settings, owner, owner.spec.kind, cluster.name);
    const admittedAt = Date.parse(live?.metadata.annotations?.[FLEET_ADMITTED_ANNOTATION] ?? '');
    return {
      name: cluster.name,
      labels: cluster.labels,
      revision: live?.metadata.annotations?.[FLEET_REVISION_ANNOTATION],
      state: unmade.get(cluster.name) ?? clusterState(live, update),
      unmade: unmade.has(cluster.name),
      admittedAt: Number.isNaN(admittedAt) ? undefined : admittedAt,
    };
  });
  return planRollout({
    rollout,
    update,
    previous,
    members,
    now: Date.now(),
    approvalOf: (wave) => approvalOf(approvals.objects, owner.name, update, wave, approvals.trust),
    unmetGates: unmetGatesOf(settings, owner),
  });
}

