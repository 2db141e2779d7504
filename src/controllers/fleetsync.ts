// The FleetSync reconciler: one child (a ProxySync or a RemoteSync) per
// cluster of the namespace's inventory that the FleetSync selects, written by
// server-side apply (field manager syncprims-fleet) whenever it differs from
// what the template says; children of clusters that left the selection are
// deleted (they prune per their deletionPolicy), but a cluster with a problem
// in the inventory keeps its child as it is; the status counts the clusters by
// their child's state. Past its quota (--fleet-max-clusters, --fleet-max-size)
// a FleetSync writes nothing. Woken by the children's watch events, by
// the inventory, and by its dependencies. See docs/fleet.md.
import { ConditionType, Reason } from '../api/conditions.js';
import type { FleetChildKind, FleetSyncSpec, FleetSyncStatus, WaveSpec } from '../api/fleet.js';
import { mapLimit } from '../apply/map-limit.js';
import { selectClusters, troubledClusters, type InventoryCluster } from '../clusters/inventory.js';
import { serverSideApply } from '../kube/apply.js';
import { ApiError } from '../kube/errors.js';
import { objectPath, type KubeObject } from '../kube/resources.js';
import type { DependencyGraph } from '../deps/graph.js';
import { unmetReason } from '../deps/readiness.js';
import { displayNode } from '../deps/refs.js';
import { carriesAll } from '../proxy/remote-sync.js';
import type { Reconciler, ReconcileResult } from '../runtime/controller.js';
import type { Informer } from '../runtime/informer.js';
import type { Logger } from '../runtime/logger.js';
import {
  childName,
  clusterChild,
  dependencyTarget,
  FLEET_FIELD_MANAGER,
  FLEET_REVISION_ANNOTATION,
  FLEETSYNC_LABEL,
  ownedByFleet,
  revisionDataOf,
  templateRevision,
  type DependencyTarget,
  type FleetOwner,
  type RevisionData,
} from '../fleet/children.js';
import { ClusterTemplates, type ClusterTemplate } from '../fleet/cluster-template.js';
import { clusterState, fleetStatus, troubledState, type ClusterState } from '../fleet/fleet-status.js';
import { quotaExceeded } from '../fleet/quota.js';
import { movingSource, pinSources } from '../fleet/pin-sources.js';
import { withRollout } from '../fleet/rollout-status.js';
import { parseDuration } from '../api/duration.js';
import { SourceError } from '../source/errors.js';
import { reportApprovals } from './fleet-approvals.js';
import { liveChildOf, planOf, targetsOf, type FleetParts, type FleetSettings, type Target } from './fleet-targets.js';
import type { RolloutPlan } from '../fleet/rollout.js';

export type { FleetSettings } from './fleet-targets.js';
import { beginReconcile, CleanUpFailed, type LifecycleDeps, type ReconcileContext } from './lifecycle.js';
import { failed, suspended, type SyncStatusDraft } from './sync-status.js';
import { tellTroubled, tellUntrusted } from './fleet-warnings.js';

/** The index of each child kind's store: `namespace/fleetsync` -> its children. */
export const FLEET_CHILDREN_INDEX = 'syncprims.dev/fleetsync-children';
/** Children written at once, per FleetSync reconcile. */
const APPLY_CONCURRENCY = 16;
/** How soon a FleetSync being deleted looks again whether its children are gone (their deletion events come first). */
const CHILDREN_GONE_RETRY_MS = 30_000;
/** How soon a FleetSync whose template's ref did not resolve tries again. */
const SOURCE_RETRY_MS = 30_000;
/** A template's interval when it names none (the sync spec's default). */
const DEFAULT_TEMPLATE_INTERVAL = '10m';

/**
 * Indexes the children of FleetSyncs in a child kind's store, and calls
 * `wake(namespace/fleetsync, statusOnly)` when one changes: `statusOnly` when
 * only its status did (the FleetSync only counts again: the caller may batch
 * those), else a change to put back or a child come or gone.
 */
export function followChildren(informer: Informer<KubeObject>, wake: (key: string, statusOnly: boolean) => void): void {
  if (!informer.store.hasIndex(FLEET_CHILDREN_INDEX)) {
    informer.store.addIndex(FLEET_CHILDREN_INDEX, (obj) => {
      const fleet = obj.metadata.labels?.[FLEETSYNC_LABEL];
      return fleet ? [`${obj.metadata.namespace}/${fleet}`] : [];
    });
  }
  informer.onEvent((e) => {
    // The label as it was too: a hand edit of it must wake the FleetSync that loses the child.
    const fleets = new Set([e.object.metadata.labels?.[FLEETSYNC_LABEL], e.old?.metadata.labels?.[FLEETSYNC_LABEL]]);
    const statusOnly = e.type === 'updated' && e.old !== undefined && onlyStatusChanged(e.old, e.object);
    for (const fleet of fleets) if (fleet) wake(`${e.object.metadata.namespace}/${fleet}`, statusOnly);
  });
}

/** Whether a child's update changed nothing the FleetSync writes (its spec, by generation; its labels and annotations; its deletion). */
function onlyStatusChanged(old: KubeObject, now: KubeObject): boolean {
  return (
    old.metadata.generation === now.metadata.generation &&
    old.metadata.deletionTimestamp === now.metadata.deletionTimestamp &&
    JSON.stringify(old.metadata.labels) === JSON.stringify(now.metadata.labels) &&
    JSON.stringify(old.metadata.annotations) === JSON.stringify(now.metadata.annotations)
  );
}

/** What `cluster`'s child waits for of FleetSync `name` (fleet/children.ts dependencyTarget), as the cache has that FleetSync. */
function dependencyTargetOf(fleets: Informer<KubeObject>, namespace: string, name: string, cluster: InventoryCluster): DependencyTarget {
  return dependencyTarget(fleets.store.get(`${namespace}/${name}`)?.spec as Partial<FleetSyncSpec> | undefined, cluster);
}

/** Deletes a child (it prunes per its deletionPolicy); gone already, or another object of that name, is fine. */
async function deleteChildOf(settings: FleetSettings, kind: FleetChildKind, child: KubeObject): Promise<void> {
  const { name, namespace, uid } = child.metadata;
  try {
    await settings.client.request({
      method: 'DELETE',
      path: objectPath(settings.children[kind].resource, name!, namespace),
      body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid } },
    });
  } catch (err) {
    if (!(err instanceof ApiError && (err.notFound || err.status === 409))) throw err;
  }
}

/** One reconcile's FleetSync: where it stands, and the clusters it selects. */
interface Run {
  obj: KubeObject;
  owner: FleetOwner;
  previous: FleetSyncStatus;
  generation?: number;
  suspended: boolean;
  /** The template revision being rolled out, and what it holds. */
  update: string;
  data: RevisionData;
  parts: FleetParts;
  selected: InventoryCluster[];
  /** Selected clusters with a problem in the inventory: their children are kept as they are. */
  troubled: InventoryCluster[];
  /** Why the template's Git or OCI ref could not be resolved: nothing is written until it can. */
  sourceProblem?: string;
  /** The template's ref moves (a branch, a tag, a range): looked at again every interval. */
  resolveEveryMs?: number;
}

/** The FleetSync reconciler (see the top of this file), a page of phases. */
export class FleetSyncReconciler implements Reconciler {
  /** Per FleetSync (uid) and cluster, the inputs and resourceVersion its child was last seen matching with. */
  private readonly matched = new Map<string, Map<string, string>>();
  /** Per FleetSync (uid), the inventory problems told (fleet-warnings.ts tellTroubled). */
  private readonly toldTroubled = new Map<string, Set<string>>();
  /** Each cluster's template (its overrides and values in), remembered. */
  private readonly templates = new ClusterTemplates();

  constructor(
    private readonly deps: LifecycleDeps & { kind: 'FleetSync' },
    private readonly settings: FleetSettings,
  ) {}

  async reconcile(key: string, log: Logger): Promise<ReconcileResult | undefined> {
    const begun = await beginReconcile(this.deps, key, log, (obj, l) => this.finalize(obj, l), { handlesSuspend: true });
    if ('done' in begun) return begun.done;
    const run = await this.select(begun.ctx);
    await tellUntrusted(this.deps, run.obj, run.parts.revisions.untold(run.owner), log);
    const overQuota = quotaOf(this.settings, run);
    // Refused before anything is written: no child made or changed or deleted, no revision recorded.
    if (overQuota !== undefined) return void (await report(this.deps, run, refusedStatus(run.previous, overQuota, run.update, run.generation), log));
    if (run.sourceProblem !== undefined) {
      // The children keep the commit they have; the rollout waits for the ref to resolve again.
      await report(this.deps, run, refusedStatus(run.previous, run.sourceProblem, run.update, run.generation, Reason.SourceError), log);
      return { requeueAfterMs: SOURCE_RETRY_MS };
    }
    const plan = planOf(this.settings, run.parts.approvals.of(run.owner), run.owner, run.selected, run.update, run.previous, this.unmade(run));
    const targets = await this.recordTargets(run, plan);
    const states = await this.ensureChildren(run, targets, plan, log);
    await this.deleteLeavers(run, targets, states, log);
    await tellTroubled(this.deps, run.obj, this.toldOf(run.owner.uid), run.troubled, states, log);
    await report(this.deps, run, this.statusOf(run, plan, states), log, plan?.approvalProblem);
    const wakes = [plan?.wakeInMs, run.resolveEveryMs].filter((ms): ms is number => ms !== undefined);
    return wakes.length ? { requeueAfterMs: Math.min(...wakes) } : {};
  }

  /** Deletion: every child deleted (each prunes per its deletionPolicy), then waits for them to be gone. */
  private async finalize(obj: KubeObject, log: Logger): Promise<void | { requeueAfterMs: number }> {
    const children = childrenOfFleet(this.settings, obj);
    this.matched.delete(obj.metadata.uid ?? '');
    this.toldTroubled.delete(obj.metadata.uid ?? '');
    this.templates.forget(obj.metadata.uid ?? '');
    if (children.length === 0) return;
    try {
      await Promise.all(children.filter(({ child }) => !child.metadata.deletionTimestamp).map(({ kind, child }) => deleteChildOf(this.settings, kind, child)));
    } catch (err) {
      throw new CleanUpFailed(`cannot delete the children: ${err instanceof Error ? err.message : String(err)}`);
    }
    log.info({ children: children.length }, 'deletion waits for the children to be gone (each prunes per its deletionPolicy)');
    return { requeueAfterMs: CHILDREN_GONE_RETRY_MS };
  }

  private toldOf(uid: string): Set<string> {
    let told = this.toldTroubled.get(uid);
    if (!told) this.toldTroubled.set(uid, (told = new Set()));
    return told;
  }

  /** Phase 1: the FleetSync, the revision it rolls out, and the clusters of the inventory it selects. */
  private async select(ctx: ReconcileContext<'FleetSync'>): Promise<Run> {
    const { obj, value, status, generation } = ctx;
    const spec = value.spec;
    const previous = status as FleetSyncStatus;
    const pinning = await this.pinned(revisionDataOf(spec), obj.metadata.namespace ?? '');
    const data = pinning.data;
    const update = templateRevision(data);
    // Unset before the operator first wrote it (then every revision owned and hashing right is taken, once).
    const recorded = previous.revisions && [update, ...previous.revisions];
    const owner: FleetOwner = { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '', uid: obj.metadata.uid ?? '', spec, recorded };
    const parts = await this.settings.parts();
    const listed = parts.inventory.list(owner.namespace);
    const run = { obj, owner, previous, generation, suspended: ctx.suspended === true, update, data, parts, sourceProblem: pinning.problem, resolveEveryMs: pinning.everyMs };
    return { ...run, selected: selectClusters(listed, spec.clusters), troubled: troubledClusters(listed, spec.clusters) };
  }

  /** The revision data with the template's moving Git or OCI ref pinned to what it names now (fleet/pin-sources.ts). */
  private async pinned(data: RevisionData, namespace: string): Promise<{ data: RevisionData; problem?: string; everyMs?: number }> {
    if (!movingSource(data)) return { data };
    const spec = (data.template as { spec: { interval?: string; serviceAccountName?: string } }).spec;
    const everyMs = parseDuration(spec.interval ?? DEFAULT_TEMPLATE_INTERVAL);
    try {
      return { data: await pinSources(data, (source) => this.settings.resolveSource(namespace, spec.serviceAccountName, source, everyMs)), everyMs };
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      return { data, problem: `the template's source: ${err.message}`, everyMs };
    }
  }

  /** Phase 2: what each cluster's child is made of (the plan's), and the update revision recorded (with those still in use kept). */
  private async recordTargets(run: Run, plan: RolloutPlan | undefined): Promise<Map<string, Target | undefined>> {
    const { owner, previous, update, parts } = run;
    const targets = targetsOf({ ...this.settings, revisions: parts.revisions }, owner, run.selected, plan, { revision: update, data: run.data }, previous.currentRevision);
    const inUse = new Set([previous.currentRevision, ...[...targets.values()].map((t) => t?.revision)].filter((r): r is string => r !== undefined));
    await parts.revisions.record(owner, update, run.data, inUse);
    return targets;
  }

  /** Phase 3: each selected cluster's child at its target; where each cluster stands (the plan's failures and the troubled clusters' included). */
  private async ensureChildren(run: Run, targets: Map<string, Target | undefined>, plan: RolloutPlan | undefined, log: Logger): Promise<Map<string, ClusterState>> {
    const states = new Map<string, ClusterState>();
    await mapLimit(run.selected, APPLY_CONCURRENCY, async (cluster) => states.set(cluster.name, await this.ensureChild(run, cluster, targets.get(cluster.name), log)));
    for (const [cluster, state] of plan?.failed ?? []) states.set(cluster, state);
    return states;
  }

  /** Phase 4: the children of clusters that left the selection deleted (a troubled cluster's kept as it is). */
  private async deleteLeavers(run: Run, targets: Map<string, Target | undefined>, states: Map<string, ClusterState>, log: Logger): Promise<void> {
    const { owner } = run;
    const kept = keepTroubled(this.settings, owner, run.troubled, states, run.update);
    forgetOthers(this.matched.get(owner.uid), states);
    this.templates.forget(owner.uid, states);
    const wanted = new Set([...kept, ...run.selected.map((c) => `${targets.get(c.name)?.data.kind ?? owner.spec.kind}/${childName(owner.name, c.name)}`)]);
    await deleteLeaving(childrenOfFleet(this.settings, run.obj), wanted, (kind, child) => deleteChildOf(this.settings, kind, child), log);
  }

  /** Before planning: the selected clusters whose template of the update revision cannot be made (an override that does not apply, a value missing), as failed. */
  private unmade(run: Run): Map<string, ClusterState> {
    const unmade = new Map<string, ClusterState>();
    for (const cluster of run.selected) {
      const made = this.templates.of(run.owner.uid, run.update, run.data, cluster);
      if (!made.ok) unmade.set(cluster.name, unmadeState(made, false));
    }
    return unmade;
  }

  /** Phase 5: the status: the clusters counted, the rollout, the revisions recorded. */
  private statusOf(run: Run, plan: RolloutPlan | undefined, states: Map<string, ClusterState>): FleetSyncStatus {
    const { previous, update, generation } = run;
    const next: FleetSyncStatus = { ...withRollout(fleetStatus(previous, states, update, generation), plan, generation), revisions: run.parts.revisions.recorded(run.owner, update) };
    return run.suspended ? (suspended(next as SyncStatusDraft, generation) as FleetSyncStatus) : next;
  }

  /**
   * Makes sure of one cluster's child at its target (none: left as it is);
   * says where the cluster stands against the update revision.
   */
  private async ensureChild(run: Run, cluster: InventoryCluster, target: Target | undefined, log: Logger): Promise<ClusterState> {
    const { owner, update } = run;
    const kind = target?.data.kind ?? owner.spec.kind;
    const live = liveChildOf(this.settings, owner, kind, cluster.name);
    const name = `${kind} ${owner.namespace}/${childName(owner.name, cluster.name)}`;
    if (live && !ownedByFleet(live, owner.uid)) return clusterState(undefined, update, `${name} exists and is not this FleetSync's child: rename or delete it`);
    if (!target) return clusterState(live, update);
    const wanted = this.wantedChild(run, cluster, target, live);
    if (!('desired' in wanted)) return wanted;
    try {
      const written = await serverSideApply(this.settings.client, this.settings.discovery, wanted.desired, { fieldManager: FLEET_FIELD_MANAGER, force: true });
      log.info({ child: name, cluster: cluster.name, revision: target.revision }, live ? 'child written' : 'child created');
      return clusterState(written, update);
    } catch (err) {
      return { state: 'failed', updated: false, reason: Reason.ApplyFailed, message: `cannot write ${name}: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  /**
   * The child to write for `cluster` at `target`; or where the cluster
   * stands when there is nothing to write: its template cannot be made, or
   * the live child carries it all already (remembered by resourceVersion and
   * inputs, so that it is not compared again).
   */
  private wantedChild(run: Run, cluster: InventoryCluster, target: Target, live: KubeObject | undefined): { desired: KubeObject } | ClusterState {
    const { owner, update } = run;
    const made = this.templates.of(owner.uid, target.revision, target.data, cluster);
    if (!made.ok) return unmadeState(made, live?.metadata.annotations?.[FLEET_REVISION_ANNOTATION] === update);
    const given = { kind: target.data.kind, revision: target.revision, admittedAt: target.admittedAt };
    const { child: desired, inputs } = clusterChild(owner, cluster, made, given, (ns, n) => dependencyTargetOf(this.deps.informer, ns, n, cluster));
    let memo = this.matched.get(owner.uid);
    if (!memo) this.matched.set(owner.uid, (memo = new Map()));
    const stamp = JSON.stringify([live?.metadata.resourceVersion, inputs, made.overrides, owner.spec.suspend, owner.spec.deletionPolicy, cluster.ref]);
    if (live && memo.get(cluster.name) === stamp) return clusterState(live, update);
    if (!live || !carriesAll(live, desired)) return { desired };
    memo.set(cluster.name, stamp);
    return clusterState(live, update);
  }
}

/** The FleetSync's children of both kinds, as the cache has them. */
function childrenOfFleet(settings: Pick<FleetSettings, 'children'>, obj: KubeObject): { kind: FleetChildKind; child: KubeObject }[] {
  return (['ProxySync', 'RemoteSync'] as const).flatMap((kind) =>
    settings.children[kind].informer.store
      .byIndex(FLEET_CHILDREN_INDEX, `${obj.metadata.namespace}/${obj.metadata.name}`)
      .filter((child) => ownedByFleet(child, obj.metadata.uid ?? ''))
      .map((child) => ({ kind, child })),
  );
}

/** Deletes the children not `wanted` (`kind/name`): those of clusters that left the selection or the inventory. */
async function deleteLeaving(
  children: { kind: FleetChildKind; child: KubeObject }[],
  wanted: Set<string>,
  deleteChild: (kind: FleetChildKind, child: KubeObject) => Promise<void>,
  log: Logger,
): Promise<void> {
  const leaving = children.filter(({ kind, child }) => !wanted.has(`${kind}/${child.metadata.name}`) && !child.metadata.deletionTimestamp);
  await Promise.all(leaving.map(({ kind, child }) => deleteChild(kind, child)));
  if (leaving.length > 0) log.info({ children: leaving.map(({ child }) => child.metadata.name) }, 'children of clusters no longer selected deleted');
}

/** Ready=False, QuotaExceeded: the rest of the status as it was. */
/**
 * Ready=False, QuotaExceeded; the rollout Halted at the revision asked for, saying why (`rollout status` exits 1
 * with it, and there is no wave to approve); what its clusters have (currentRevision, counts) as it was.
 */
function refusedStatus(previous: FleetSyncStatus, why: string, update: string, generation: number | undefined, reason: Reason = Reason.QuotaExceeded): FleetSyncStatus {
  const message = reason === Reason.QuotaExceeded ? `past its quota, nothing written: ${why}` : `nothing written: ${why}`;
  const refused = failed(previous as SyncStatusDraft, reason, message, generation) as FleetSyncStatus;
  const { waves: _waves, ...rest } = refused;
  return { ...rest, observedGeneration: generation, phase: 'Halted', updateRevision: update, message };
}

/** Why the FleetSync is past its quota (its children and bytes, the revisions it keeps), or undefined. */
function quotaOf(settings: FleetSettings, { owner, selected, parts, update, data }: Run): string | undefined {
  const templateBytes = Buffer.byteLength(JSON.stringify(data));
  return quotaExceeded(settings.quota, { children: selected.length, templateBytes, otherRevisionBytes: parts.revisions.keptBytes(owner, update) });
}

/**
 * A cluster with a problem in the inventory keeps its child as it is (not
 * written, not deleted): its state is failed, saying so. Returns the children
 * kept (`kind/name`).
 */
function keepTroubled(settings: Pick<FleetSettings, 'children'>, owner: FleetOwner, troubled: InventoryCluster[], states: Map<string, ClusterState>, update: string): Set<string> {
  const kept = new Set<string>();
  for (const cluster of troubled) {
    const live = (['ProxySync', 'RemoteSync'] as const)
      .map((kind) => ({ kind, child: liveChildOf(settings, owner, kind, cluster.name) }))
      .find((c) => c.child && ownedByFleet(c.child, owner.uid));
    if (live) kept.add(`${live.kind}/${live.child!.metadata.name}`);
    states.set(cluster.name, troubledState(cluster, live?.child, live?.kind, update));
  }
  return kept;
}

/** A cluster whose template cannot be made: failed, saying why (`updated`: its child has the update revision already). */
function unmadeState(made: Extract<ClusterTemplate, { ok: false }>, updated: boolean): ClusterState {
  return { state: 'failed', updated, reason: made.reason, message: made.message };
}

/** Drops what is remembered of clusters no longer selected. */
function forgetOthers(memo: Map<string, string> | undefined, selected: Map<string, unknown>): void {
  for (const cluster of memo?.keys() ?? []) if (!selected.has(cluster)) memo!.delete(cluster);
}

/**
 * Why a wave's gates are not met (`Sync/smoke (NotReady), ...`), read from
 * the dependency graph's cache; their changes wake the FleetSync (the graph
 * indexes gates as dependencies that hold nothing but their wave).
 */
export function gateUnmet(graph: Pick<DependencyGraph, 'get'>, owner: Pick<FleetOwner, 'namespace'>, wave: WaveSpec, allowCrossNamespaceRefs: boolean): string | undefined {
  const unmet = (wave.gates?.dependsOn ?? []).flatMap((d) => {
    const node = { kind: d.kind, namespace: d.namespace ?? owner.namespace, name: d.name };
    const reason = node.namespace !== owner.namespace && !allowCrossNamespaceRefs ? 'Forbidden' : unmetReason(graph.get(node), d.requiredStatus);
    return reason ? [`${displayNode(node, owner.namespace)} (${reason})`] : [];
  });
  return unmet.length > 0 ? unmet.join(', ') : undefined;
}

/** Phase 6: writes the status; a Warning Event when clusters start failing, a Normal one when every cluster is Ready, and those of approvals (fleet-approvals.ts). */
async function report(deps: LifecycleDeps, { obj, previous: before }: Pick<Run, 'obj' | 'previous'>, next: FleetSyncStatus, log: Logger, approvalProblem?: string): Promise<void> {
  if (!(await deps.writer.updateStatus(obj, next as Record<string, unknown>))) return;
  await reportApprovals(deps.events, obj, before, next, log, approvalProblem);
  const ready = next.conditions?.find((c) => c.type === ConditionType.Ready);
  const was = before.conditions?.find((c) => c.type === ConditionType.Ready);
  if (!ready || (ready.reason === was?.reason && ready.status === was?.status)) return;
  log.info({ reason: ready.reason, message: ready.message }, 'fleet status');
  if (ready.reason === Reason.ClustersFailing || ready.reason === Reason.RolloutHalted || ready.reason === Reason.QuotaExceeded) await deps.events.record(obj, 'Warning', ready.reason, ready.message);
  else if (ready.status === 'True') await deps.events.record(obj, 'Normal', ready.reason, ready.message);
}
