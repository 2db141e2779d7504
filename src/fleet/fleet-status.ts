// A FleetSync's status from its children: how many clusters are selected,
// updated, Ready, failed, unreachable or still progressing, the failing ones
// by name, and the conditions. Pure; the reconciler reads the children.
import { ConditionType, Reason } from '../api/conditions.js';
import { MAX_FLEET_FAILURES, type FleetPhase, type FleetSyncStatus } from '../api/fleet.js';
import type { KubeObject } from '../kube/resources.js';
import { findCondition, removeCondition, setCondition, type Condition } from '../runtime/conditions.js';
import { FLEET_REVISION_ANNOTATION } from './children.js';

/** Where one selected cluster stands. */
export type ClusterState =
  | { state: 'ready' }
  | { state: 'progressing'; updated: boolean }
  | { state: 'unreachable'; updated: boolean; message: string }
  | { state: 'failed'; updated: boolean; reason: string; message: string };

/** Ready=False reasons of a child that are a wait, not a failure. */
const WAITING_REASONS: ReadonlySet<string> = new Set([Reason.DependencyNotReady, Reason.Progressing, Reason.Suspended, Reason.RemoteNotReady]);

/**
 * One cluster's state from its child: `undefined` (not made yet) is
 * progressing; a child that has not observed its spec, or has another
 * revision, is not Ready for this one. A name another object holds is failed.
 */
export function clusterState(child: KubeObject | undefined, revision: string, conflict?: string): ClusterState {
  if (conflict !== undefined) return { state: 'failed', updated: false, reason: Reason.OwnershipConflict, message: conflict };
  if (!child) return { state: 'progressing', updated: false };
  const updated = child.metadata.annotations?.[FLEET_REVISION_ANNOTATION] === revision;
  const conditions = (child.status as { conditions?: Condition[] } | undefined)?.conditions;
  const stalled = findCondition(conditions, ConditionType.Stalled);
  if (stalled?.status === 'True') return { state: 'failed', updated, reason: stalled.reason, message: stalled.message };
  const ready = observedReady(child);
  if (!ready) return { state: 'progressing', updated };
  if (ready.status === 'True') return updated ? { state: 'ready' } : { state: 'progressing', updated };
  // A pull cluster offline counts as unreachable (onUnreachable), as a push cluster that does not answer.
  if (ready.reason === Reason.ClusterUnreachable || ready.reason === Reason.ClusterOffline) return { state: 'unreachable', updated, message: ready.message };
  if (ready.status === 'False' && !WAITING_REASONS.has(ready.reason)) return { state: 'failed', updated, reason: ready.reason, message: ready.message };
  return { state: 'progressing', updated };
}

/**
 * A cluster whose inventory entry has a problem: failed, its child (if it has
 * one) kept as it is, neither written nor deleted, so that a second claim of
 * its name or a lost credential prunes nothing there.
 */
export function troubledState(cluster: { definedBy: string; problem?: string }, child: KubeObject | undefined, kind: string | undefined, revision: string): ClusterState {
  const updated = child?.metadata.annotations?.[FLEET_REVISION_ANNOTATION] === revision;
  const kept = child ? `its child ${kind} ${child.metadata.name} is kept as it is (not written, not deleted)` : 'it gets no child';
  return {
    state: 'failed',
    updated,
    reason: Reason.InventoryProblem,
    message: `${cluster.definedBy}: ${cluster.problem ?? 'unusable'}; ${kept} until the problem is fixed or the cluster leaves the inventory`,
  };
}

/** The child's Ready condition, once it speaks for the child's generation (else undefined: not observed yet). */
function observedReady(child: KubeObject): Condition | undefined {
  const status = (child.status ?? {}) as { observedGeneration?: number; conditions?: Condition[] };
  const generation = child.metadata.generation;
  const ready = findCondition(status.conditions, ConditionType.Ready);
  if (status.observedGeneration !== generation) return undefined;
  return ready?.observedGeneration === undefined || ready.observedGeneration === generation ? ready : undefined;
}

export interface FleetCounts {
  selected: number;
  updated: number;
  ready: number;
  failed: number;
  unreachable: number;
  progressing: number;
}

/** The counts and the failing clusters (at most MAX_FLEET_FAILURES, by name), from each selected cluster's state. */
export function tally(states: Map<string, ClusterState>): { counts: FleetCounts; failures: NonNullable<FleetSyncStatus['failures']>; unreachable: string[] } {
  const counts: FleetCounts = { selected: states.size, updated: 0, ready: 0, failed: 0, unreachable: 0, progressing: 0 };
  const failures: NonNullable<FleetSyncStatus['failures']> = [];
  const unreachable: string[] = [];
  for (const [cluster, s] of [...states].sort(([a], [b]) => a.localeCompare(b))) {
    if (s.state === 'ready' || s.updated) counts.updated++;
    counts[s.state]++;
    if (s.state === 'failed' && failures.length < MAX_FLEET_FAILURES) failures.push({ cluster, reason: s.reason, message: s.message });
    if (s.state === 'unreachable') unreachable.push(cluster);
  }
  return { counts, failures, unreachable };
}

/** `edge-1, edge-2 and 3 more`; `total` counts the names there are when `names` holds only the first of them (a capped list). */
export function someNames(names: readonly string[], max = 3, total = names.length): string {
  if (total <= max) return names.slice(0, max).join(', ');
  return `${names.slice(0, max).join(', ')} and ${total - Math.min(max, names.length)} more`;
}

/**
 * The FleetSync's status: Ready=True once every selected cluster is Ready
 * with `revision` (currentRevision becomes it); Ready=False while a cluster
 * failed (ClustersFailing) or, none failing, one is unreachable; else
 * Ready=Unknown, Progressing.
 */
export function fleetStatus(base: FleetSyncStatus, states: Map<string, ClusterState>, revision: string, generation: number | undefined): FleetSyncStatus {
  const { counts, failures, unreachable } = tally(states);
  const complete = counts.ready === counts.selected;
  const phase: FleetPhase = complete ? 'Complete' : 'Progressing';
  const of = `${counts.ready}/${counts.selected} clusters Ready`;
  let conditions = removeCondition(base.conditions, ConditionType.Stalled);
  const set = (type: string, status: Condition['status'], reason: string, message: string): void => {
    conditions = setCondition(conditions, { type, status, reason, message, observedGeneration: generation });
  };
  if (complete) {
    set(ConditionType.Ready, 'True', Reason.Succeeded, counts.selected === 0 ? 'no cluster is selected' : `${of} at revision ${revision}`);
    conditions = removeCondition(conditions, ConditionType.Reconciling);
  } else if (counts.failed > 0) {
    const named = failures.map((f) => `${f.cluster} (${f.reason})`);
    set(ConditionType.Ready, 'False', Reason.ClustersFailing, `${of}; ${counts.failed} failing: ${someNames(named, 3, counts.failed)}`);
    conditions = removeCondition(conditions, ConditionType.Reconciling);
  } else if (counts.unreachable > 0) {
    set(ConditionType.Ready, 'False', Reason.ClusterUnreachable, `${of}; unreachable: ${someNames(unreachable)}`);
    conditions = removeCondition(conditions, ConditionType.Reconciling);
  } else {
    const message = `${of}; ${counts.progressing} progressing to revision ${revision}`;
    set(ConditionType.Ready, 'Unknown', Reason.Progressing, message);
    set(ConditionType.Reconciling, 'True', Reason.Progressing, message);
  }
  const status: FleetSyncStatus = {
    ...base,
    observedGeneration: generation,
    conditions,
    phase,
    updateRevision: revision,
    clusters: counts,
    readyClusters: `${counts.ready}/${counts.selected}`,
  };
  if (complete) status.currentRevision = revision;
  if (failures.length > 0) status.failures = failures;
  else delete status.failures;
  delete status.pendingDependencies;
  return status;
}
