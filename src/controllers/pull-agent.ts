// The downstream side of pull mode (docs/pull.md): beside its own work, the
// operator of a pull cluster watches its assignments namespace in the
// managing cluster (its only rights there), keeps at home a Sync for each
// assignment with the copies of its related objects, and writes each Sync's
// status back into its assignment. It holds a finalizer on each assignment,
// so that an assignment deleted while it was offline is still carried out
// (its Sync deleted, which prunes) when it connects again. A Sync of ours
// whose assignment is gone is deleted too, but only once the assignments
// were listed: a managing cluster that cannot be reached or refuses us
// removes nothing. Its Lease and credential: pull-upstream.ts.
import { Reason } from '../api/conditions.js';
import { API_VERSION, syncResource } from '../api/kinds.js';
import { OWNER_KIND_LABEL, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL, ORIGIN_LABEL } from '../api/marks.js';
import { PULL_ASSIGNMENT_LABEL, PULL_CARRIER_LABEL, PULL_FIELD_MANAGER, PULL_FINALIZER } from '../clusters/pull-names.js';
import { serverSideApply } from '../kube/apply.js';
import { getIfExists, type KubeClient } from '../kube/client.js';
import { Discovery } from '../kube/discovery.js';
import { ApiError } from '../kube/errors.js';
import { ensureNamespace } from '../kube/namespaces.js';
import { objectPath, type KubeObject } from '../kube/resources.js';
import { downstreamCopy, downstreamSync, isCopyOf, targetOf, upstreamStatus } from '../proxy/assignment.js';
import { carriesAll, copyMatches, equalJson, relatedPath } from '../proxy/remote-sync.js';
import { ClusterCache } from '../runtime/cache.js';
import { Controller, type Reconciler, type ReconcileResult } from '../runtime/controller.js';
import type { Informer } from '../runtime/informer.js';
import type { Logger } from '../runtime/logger.js';
import type { Manager } from '../runtime/manager.js';
import { objectKey } from '../runtime/store.js';

/** The marks an assignment and its copies share: the ProxySync they are of, from which managing cluster. */
const OWNER_LABELS = [OWNER_KIND_LABEL, OWNER_NAMESPACE_LABEL, OWNER_NAME_LABEL, ORIGIN_LABEL] as const;
/** How soon an assignment being deleted looks again whether its Sync here is gone (its deletion event comes first). */
const GONE_RETRY_MS = 5_000;
/** How soon an assignment whose watch lags the managing cluster is looked at again (its newer version's event comes first). */
const LAGGING_RETRY_MS = 1_000;
const SYNC = syncResource('Sync');

/** The informers of the agent: its assignments and their copies (upstream), the Syncs and copies it made (at home). */
interface AgentInformers {
  assignments: Informer<KubeObject>;
  configMaps: Informer<KubeObject>;
  secrets: Informer<KubeObject>;
  local: Informer<KubeObject>;
  /** The copies made here (labelled with their assignment): someone else's change of one wakes its assignment. */
  localCopies: Record<'ConfigMap' | 'Secret', Informer<KubeObject>>;
}

/** Reconciles one assignment (key `namespace/name` in the assignments namespace) into its Sync here. */
export class PullAgentReconciler implements Reconciler {
  constructor(
    private readonly upstream: KubeClient,
    private readonly home: { client: KubeClient; discovery: Discovery },
    private readonly informers: AgentInformers,
  ) {}

  async reconcile(key: string, log: Logger): Promise<ReconcileResult | undefined> {
    let assignment = this.informers.assignments.store.get(key);
    const name = key.slice(key.indexOf('/') + 1);
    if (!assignment) return this.removeOrphans(name, log);
    const target = targetOf(assignment);
    if ('problem' in target) {
      log.warn({ assignment: name, problem: target.problem }, 'assignment refused');
      return void (await this.writeStatus(assignment, refusedStatus(assignment, Reason.InvalidSpec, target.problem)));
    }
    if (assignment.metadata.deletionTimestamp) return this.carryOutDeletion(assignment, target, log);
    // As the finalizer's patch left it: the version `lagging` compares with the managing cluster's.
    assignment = await this.holdFinalizer(assignment);
    const local = this.localSync(target);
    if (local && local.metadata.labels?.[PULL_ASSIGNMENT_LABEL] !== name) {
      const message = `the Sync ${target.namespace}/${target.name} exists in the pull cluster and is not this assignment's (no label ${PULL_ASSIGNMENT_LABEL}=${name}): left alone; delete it there, or name another Sync in the template`;
      log.warn({ assignment: name, message }, 'cannot go on');
      return void (await this.writeStatus(assignment, refusedStatus(assignment, Reason.OwnershipConflict, message)));
    }
    try {
      await ensureNamespace(this.home.client, target.namespace);
      await this.keepCopies(assignment, target);
      const desired = downstreamSync(assignment, target);
      let kept = local;
      if (!local || !carriesAll(local, desired)) {
        // After a reconnect the watch resumes and replays what changed meanwhile: only the latest is applied.
        if (await this.lagging(assignment)) return { requeueAfterMs: LAGGING_RETRY_MS };
        kept = await serverSideApply(this.home.client, this.home.discovery, desired, { fieldManager: PULL_FIELD_MANAGER, force: true });
        log.info({ assignment: name, sync: `${target.namespace}/${target.name}`, generation: assignment.metadata.generation }, 'assignment applied');
      }
      await this.writeStatus(assignment, kept ? upstreamStatus(kept) : undefined);
    } catch (err) {
      if (!(err instanceof ApiError) || err.transient) throw err;
      const message = `the pull cluster refused the assignment's Sync ${target.namespace}/${target.name} or its copies: ${err.message}`;
      log.warn({ assignment: name, message }, 'cannot go on');
      await this.writeStatus(assignment, refusedStatus(assignment, Reason.ApplyFailed, message));
      return { requeueAfterMs: 30_000 };
    }
    return undefined;
  }

  /** Whether the managing cluster has a newer assignment than the watch has brought yet (a read of it: applies are rare). */
  private async lagging(assignment: KubeObject): Promise<boolean> {
    const latest = await getIfExists<KubeObject>(this.upstream, objectPath(SYNC, assignment.metadata.name ?? '', assignment.metadata.namespace));
    return latest?.metadata.resourceVersion !== assignment.metadata.resourceVersion;
  }

  /** The Sync at `target` here, as the informer of Syncs we made has it (or any Sync there, by a GET: someone else's). */
  private localSync(target: { namespace: string; name: string }): KubeObject | undefined {
    return this.informers.local.store.get(`${target.namespace}/${target.name}`);
  }

  /** The copies of the assignment's related objects, kept beside its Sync; those it no longer names are deleted. */
  private async keepCopies(assignment: KubeObject, target: { namespace: string }): Promise<void> {
    const name = assignment.metadata.name ?? '';
    const wanted = [...this.informers.configMaps.store.list(), ...this.informers.secrets.store.list()].filter((c) => isCopyOf(c, assignment, OWNER_LABELS));
    const keep = new Set<string>();
    for (const copy of wanted) {
      const desired = downstreamCopy(copy, target, name);
      const kind = desired.kind as 'ConfigMap' | 'Secret';
      const path = relatedPath(kind, desired.metadata.name ?? '', target.namespace);
      keep.add(path);
      // Ours are in the cache; one that is not may be someone else's, unlabelled: read before it is written over.
      const existing = this.informers.localCopies[kind].store.get(`${target.namespace}/${desired.metadata.name ?? ''}`) ?? (await getIfExists<KubeObject>(this.home.client, path));
      if (existing && existing.metadata.labels?.[PULL_ASSIGNMENT_LABEL] !== name) {
        throw new ApiError(409, 'Conflict', `${desired.kind} ${target.namespace}/${desired.metadata.name} exists in the pull cluster and is not this assignment's copy: left alone`);
      }
      if (!copyMatches(existing, desired)) await serverSideApply(this.home.client, this.home.discovery, desired, { fieldManager: PULL_FIELD_MANAGER, force: true });
    }
    for (const path of this.copiesHere(name, target.namespace)) if (!keep.has(path)) await this.deleteIfThere(path);
  }

  /** The paths of the copies made here for assignment `name` in `namespace` (from the cache of our copies). */
  private copiesHere(name: string, namespace: string): string[] {
    return (['ConfigMap', 'Secret'] as const).flatMap((kind) =>
      this.informers.localCopies[kind].store
        .list()
        .filter((o) => o.metadata.namespace === namespace && o.metadata.labels?.[PULL_ASSIGNMENT_LABEL] === name)
        .map((o) => relatedPath(kind, o.metadata.name ?? '', namespace)),
    );
  }

  /** The assignment deleted upstream: its Sync here deleted (its finalizer prunes), then its copies, then the assignment let go. */
  private async carryOutDeletion(assignment: KubeObject, target: { namespace: string; name: string }, log: Logger): Promise<ReconcileResult | undefined> {
    const name = assignment.metadata.name ?? '';
    const local = this.localSync(target);
    if (local && local.metadata.labels?.[PULL_ASSIGNMENT_LABEL] === name) {
      if (!local.metadata.deletionTimestamp) {
        await this.deleteIfThere(objectPath(SYNC, target.name, target.namespace));
        log.info({ assignment: name, sync: `${target.namespace}/${target.name}` }, 'assignment deleted: its Sync deleted');
      }
      return { requeueAfterMs: GONE_RETRY_MS };
    }
    for (const path of this.copiesHere(name, target.namespace)) await this.deleteIfThere(path);
    await this.releaseFinalizer(assignment);
    return undefined;
  }

  /** Syncs of ours whose assignment is gone (deleted while its finalizer was taken off by hand, or the namespace emptied): deleted. */
  private async removeOrphans(name: string, log: Logger): Promise<undefined> {
    for (const local of this.informers.local.store.list().filter((s) => s.metadata.labels?.[PULL_ASSIGNMENT_LABEL] === name)) {
      const { namespace = '', name: syncName = '' } = local.metadata;
      if (!local.metadata.deletionTimestamp) await this.deleteIfThere(objectPath(SYNC, syncName, namespace));
      for (const path of this.copiesHere(name, namespace)) await this.deleteIfThere(path);
      log.info({ assignment: name, sync: `${namespace}/${syncName}` }, 'assignment gone: its Sync deleted');
    }
    return undefined;
  }

  private async deleteIfThere(path: string): Promise<void> {
    await this.home.client.request({ method: 'DELETE', path }).catch((err: unknown) => {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    });
  }

  /** The assignment as it is once it holds our finalizer. */
  private async holdFinalizer(assignment: KubeObject): Promise<KubeObject> {
    const finalizers = assignment.metadata.finalizers ?? [];
    if (finalizers.includes(PULL_FINALIZER)) return assignment;
    return this.patchFinalizers(assignment, [...finalizers, PULL_FINALIZER]);
  }

  private async releaseFinalizer(assignment: KubeObject): Promise<void> {
    const finalizers = assignment.metadata.finalizers ?? [];
    if (!finalizers.includes(PULL_FINALIZER)) return;
    await this.patchFinalizers(assignment, finalizers.filter((f) => f !== PULL_FINALIZER));
  }

  /** The assignment's finalizers set to `next`, if they are still what we read (a conflict is retried with the next event). */
  private async patchFinalizers(assignment: KubeObject, next: string[]): Promise<KubeObject> {
    return this.upstream.request<KubeObject>({
      method: 'PATCH',
      path: objectPath(SYNC, assignment.metadata.name ?? '', assignment.metadata.namespace),
      contentType: 'application/merge-patch+json',
      body: { metadata: { resourceVersion: assignment.metadata.resourceVersion, finalizers: next } },
    });
  }

  /**
   * The assignment's status, written when it differs: replaced whole, at whatever version the
   * assignment has now (a JSON patch, no resourceVersion). This agent is its only writer, and what
   * it writes is told in the generation it was computed for (a newer spec is not Ready by it, and
   * brings a reconcile of its own): a conflict would only stand for its own last write, not seen yet.
   */
  private async writeStatus(assignment: KubeObject, status: Record<string, unknown> | undefined): Promise<void> {
    if (status === undefined || equalJson(assignment.status ?? {}, status)) return;
    await this.upstream.request({
      method: 'PATCH',
      path: objectPath(SYNC, assignment.metadata.name ?? '', assignment.metadata.namespace, 'status'),
      contentType: 'application/json-patch+json',
      body: [{ op: 'add', path: '/status', value: status }],
    });
  }
}

/** The status of an assignment that cannot be carried out: Ready=False for its generation, with why. */
function refusedStatus(assignment: KubeObject, reason: Reason, message: string): Record<string, unknown> {
  const generation = assignment.metadata.generation ?? 0;
  const condition = { type: 'Ready', status: 'False', reason, message, observedGeneration: generation, lastTransitionTime: new Date().toISOString() };
  const previous = (assignment.status as { conditions?: { type: string; reason?: string; message?: string; lastTransitionTime?: string }[] } | undefined)?.conditions?.find((c) => c.type === 'Ready');
  // The same refusal again keeps its time, so that it is written once.
  if (previous?.reason === reason && previous.message === message) condition.lastTransitionTime = previous.lastTransitionTime ?? condition.lastTransitionTime;
  return { observedGeneration: generation, conditions: [condition] };
}

/** The informers and the controller of the agent, on the upstream client (its assignments namespace) and the manager's (home). */
export async function pullAgentController(m: Manager, upstream: KubeClient, namespace: string, log: Logger): Promise<{ controller: Controller; stop: () => Promise<void> }> {
  const upstreamCache = new ClusterCache(upstream, new Discovery(upstream), { namespace, logger: log });
  const ours = { labelSelector: PULL_ASSIGNMENT_LABEL, allNamespaces: true };
  const [assignments, configMaps, secrets, local, localConfigMaps, localSecrets] = await Promise.all([
    upstreamCache.informer(API_VERSION, 'Sync', { labelSelector: PULL_CARRIER_LABEL }),
    upstreamCache.informer('v1', 'ConfigMap', { labelSelector: OWNER_KIND_LABEL }),
    upstreamCache.informer('v1', 'Secret', { labelSelector: OWNER_KIND_LABEL }),
    m.cache.informer(API_VERSION, 'Sync', ours),
    m.cache.informer('v1', 'ConfigMap', ours),
    m.cache.informer('v1', 'Secret', ours),
  ]);
  const localCopies = { ConfigMap: localConfigMaps, Secret: localSecrets };
  const reconciler = new PullAgentReconciler(upstream, { client: m.cache.client, discovery: m.cache.discovery }, { assignments, configMaps, secrets, local, localCopies });
  const controller = new Controller({ name: 'pullagent', kind: 'Sync', informer: assignments, reconciler, concurrency: 2, logger: log, metrics: m.metrics, finalizer: PULL_FINALIZER });
  const assignmentKey = (name: string): string => `${namespace}/${name}`;
  for (const [what, informer] of [['Sync', local], ['ConfigMap', localConfigMaps], ['Secret', localSecrets]] as const) {
    informer.onEvent((e) => {
      const name = e.object.metadata.labels?.[PULL_ASSIGNMENT_LABEL];
      if (name) controller.enqueue(assignmentKey(name), `${e.type} ${what} here`);
    });
  }
  for (const copies of [configMaps, secrets]) {
    copies.onEvent((e) => {
      for (const a of assignments.store.list()) if (isCopyOf(e.object, a, OWNER_LABELS)) controller.enqueue(objectKey(a), `${e.type} copy`);
    });
  }
  // Syncs of ours whose assignment is not there (deleted while we were away): looked at once the assignments are listed.
  for (const s of local.store.list()) {
    const name = s.metadata.labels?.[PULL_ASSIGNMENT_LABEL];
    if (name && !assignments.store.get(assignmentKey(name))) controller.enqueue(assignmentKey(name), 'assignment gone');
  }
  return { controller, stop: () => upstreamCache.stop() };
}
