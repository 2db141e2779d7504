// The ProxySync reconciler. It keeps a Sync inside a remote cluster and
// reflects its status back, in the phases of a sync agent
// (../shared/seeds/004): find the remote Sync (by the labels of its owner, in
// the cluster's shared watch of Syncs), handle deletion (the finalizer),
// ensure it exists (its namespace created when missing; adopted only when
// nobody else's), keep its content (the template, by server-side apply, and
// the related objects copied beside it), and bring its status back. See
// docs/proxysync.md.
import { ConditionType, Reason } from '../api/conditions.js';
import { parseDuration } from '../api/duration.js';
import { API_VERSION, syncResource } from '../api/kinds.js';
import { FIELD_MANAGER, RECONCILE_REQUESTED_AT_ANNOTATION } from '../api/marks.js';
import type { ProxySyncSpec } from '../api/objects.js';
import { parseSyncObject } from '../api/validate.js';
import { ARRIVED_RETRY_MS } from '../apply/arrivals.js';
import type { DueDrifts } from '../apply/drift.js';
import { ApplyEngine, UNREACHABLE, type ObjectResult } from '../apply/engine.js';
import { inventoryOf, objectId, parseObjectId } from '../apply/inventory.js';
import { ownedByOther, ownerLabelOf, ownerOf, ownerOfKey, unowned, type Owner } from '../apply/owner.js';
import type { RemoteCluster } from '../clusters/remote-cluster.js';
import { serverSideApply } from '../kube/apply.js';
import { getIfExists } from '../kube/client.js';
import { createNamespace } from '../kube/namespaces.js';
import { UnknownKindError } from '../kube/discovery.js';
import { ApiError } from '../kube/errors.js';
import { CORE, objectPath, type KubeObject } from '../kube/resources.js';
import type { Reconciler, ReconcileResult } from '../runtime/controller.js';
import type { Logger } from '../runtime/logger.js';
import { listProblems } from '../runtime/messages.js';
import type { ReferencedObjects } from '../runtime/referenced-objects.js';
import { ClusterNotUsable, enterCluster, reportUnusable, type Entered } from './cluster-access.js';
import { cleanUpInCluster, type FinalizeResult, type RemoteSettings } from './cluster-deletion.js';
import { beginReconcile, CleanUpFailed, type LifecycleDeps, type ReconcileContext } from './lifecycle.js';
import {
  copiesDigest,
  copyMatches,
  desiredRemoteSync,
  ownerMarks,
  relatedAccount,
  relatedCopy,
  relatedPath,
  relatedRefs,
  remoteLocation,
  remoteMark,
  type RelatedObject,
} from '../proxy/remote-sync.js';
import { clusterName, Conflict, Halt, haltRetry, haltStatus, refusal, remoteSyncStep } from './proxysync-phases.js';
import { mirroredStatus } from './proxysync-status.js';
import { announceDrift, dueBy } from './sync-drift.js';
import { suspended, type SyncStatusDraft } from './sync-status.js';

/** One reconcile of a ProxySync that is not suspended, in the cluster it entered. */
interface Maintain {
  key: string;
  obj: KubeObject;
  spec: ProxySyncSpec;
  status: SyncStatusDraft;
  cluster: RemoteCluster;
  generation: number | undefined;
  log: Logger;
  /** Settles once the ProxySync's finalizer is on: nothing is written in the cluster before (a deletion could leave it behind). */
  finalizer: Promise<unknown>;
}

/** How soon a cluster without our CRDs is looked at again, where its CRDs cannot be watched (else their arrival wakes it). */
const CRD_RETRY_MS = 10_000;
/** How soon a ProxySync being deleted looks again whether its remote Sync has gone (its deletion event comes first). */
const REMOTE_GONE_RETRY_MS = 30_000;

/** The copies of related objects as last made sure of: at which resourceVersions, their digest, and their ids. */
interface KnownCopies {
  versions: string;
  digest: string | undefined;
  shells: KubeObject[];
}

/** The ProxySync reconciler (see the top of this file for its phases). */
export class ProxySyncReconciler implements Reconciler {
  /** Per ProxySync, the related objects this process last made sure of in the remote cluster. */
  private readonly copiesKnown = new Map<string, KnownCopies>();
  /**
   * Per ProxySync, what the remote Sync it last applied was made from (its
   * generation and mark: the rest of it is fixed for the process): a
   * backed-off drift holds back only the same apply again.
   */
  private readonly lastApplied = new Map<string, string>();

  constructor(
    private readonly deps: LifecycleDeps & { kind: 'ProxySync' },
    private readonly settings: RemoteSettings,
    /** The referenced-object index: the related objects are watched (as metadata), and their change wakes the ProxySync. */
    private readonly references: Pick<ReferencedObjects, 'ensureWatched' | 'cached'>,
  ) {}

  async reconcile(key: string, log: Logger): Promise<ReconcileResult | undefined> {
    const begun = await beginReconcile(this.deps, key, log, (obj, l) => this.finalize(obj, l), { handlesSuspend: true, finalizerAlongside: true });
    if ('done' in begun) {
      if (!this.deps.informer.store.get(key)) {
        this.copiesKnown.delete(key);
        this.lastApplied.delete(key);
        this.settings.registry.lastClusterOf(`ProxySync/${key}`)?.owned.forgetOwner(ownerOfKey('ProxySync', key));
        await this.settings.registry.release(`ProxySync/${key}`);
      }
      return begun.done;
    }
    const result = await this.inCluster(key, begun.ctx, log);
    // Its patch went out alongside the opening of the cluster, and the first write there waited for it
    // (a reconcile that wrote nothing there may not have): its failure (the ProxySync moved on) is retried.
    await begun.ctx.finalizer;
    return result;
  }

  private async inCluster(key: string, ctx: ReconcileContext<'ProxySync'>, log: Logger): Promise<ReconcileResult | undefined> {
    const { obj, value, status, generation, finalizer } = ctx;
    const spec = value.spec;
    let entered: Entered;
    try {
      entered = await enterCluster(this.settings.registry, obj, spec, false);
    } catch (err) {
      if (!(err instanceof ClusterNotUsable)) throw err;
      // Suspended, it writes nothing there anyway: it says so with the status it has, and mirrors again once resumed.
      if (ctx.suspended) return void (await this.deps.writer.updateStatus(obj, suspended(status, generation)));
      return reportUnusable(this.deps, obj, status, err, log);
    }
    try {
      if (ctx.suspended) return await this.mirrorOnly(obj, spec, status, entered.cluster, generation);
      return await this.maintain({ key, obj, spec, status, cluster: entered.cluster, generation, log, finalizer });
    } catch (thrown) {
      const err = thrown instanceof Halt ? thrown : refusal(thrown, entered.cluster);
      if (!err) throw thrown;
      const result = this.retryOf(err, key, spec, entered.cluster);
      if (await this.deps.writer.updateStatus(obj, haltStatus(err, status, generation))) {
        log.info({ reason: err.reason, message: err.message }, err.wait ? 'waiting' : 'cannot go on');
        if (!err.wait) await this.deps.events.record(obj, 'Warning', err.reason, err.message);
      }
      return result;
    } finally {
      entered.leave();
    }
  }

  /**
   * When a halted ProxySync is looked at again: a wait when what it waits for wakes it (or as the halt says), a
   * failure after min(interval, 30 s) as a Sync's, and a Conflict also the moment its object is released.
   */
  private retryOf(err: Halt, key: string, spec: ProxySyncSpec, cluster: RemoteCluster): ReconcileResult | undefined {
    if (err instanceof Conflict) cluster.owned.awaitRelease(ownerOfKey('ProxySync', key), [err.id]);
    return haltRetry(err, parseDuration(spec.template.spec.interval));
  }

  /** Phases 1, 3, 4 and 5: find, ensure, keep content, status back. */
  private async maintain(run: Maintain): Promise<ReconcileResult | undefined> {
    const { key, obj, spec, status, cluster, generation, log, finalizer } = run;
    let live = await this.findRemoteSync(obj, spec, cluster);
    await finalizer;
    const location = remoteLocation(obj, spec);
    const owner = ownerOf(obj, 'ProxySync');
    // Conflicts met last time are looked at afresh (see Conflict).
    cluster.owned.awaitRelease(ownerOfKey('ProxySync', key), []);
    await this.claim(live, location, owner, cluster);
    const interval = parseDuration(spec.template.spec.interval);
    // What others changed of the remote Sync and the copies (from the watch) is corrected at once, then,
    // when it happens again and again, with backoff up to the template's interval, as a Sync's objects are.
    const drift = cluster.owned.takeDrifts(ownerOfKey('ProxySync', key), interval);
    const corrected: ObjectResult[] = [];
    const related = await this.related(run, { namespace: location.namespace, owner, drift, corrected });
    const mark = remoteMark(related.digest, obj.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION]);
    const desired = desiredRemoteSync(obj, spec, this.settings.origin, mark, this.settings.defaultServiceAccount);
    const id = objectId(desired);
    const applying = `${generation}|${mark ?? ''}`;
    // Changed by someone else while its correction is backed off: left as it is until due, unless we have
    // something new to give it (a deleted remote Sync is recreated at once: there is nothing to mirror).
    const step = remoteSyncStep(live, desired, { applying, lastApplied: this.lastApplied.get(key) }, () => cluster.owned.driftWaiting(ownerOfKey('ProxySync', key), id));
    if (step.apply) {
      const existed = live !== undefined;
      live = await serverSideApply(cluster.client, cluster.discovery, desired, { fieldManager: FIELD_MANAGER, force: true });
      this.lastApplied.set(key, applying);
      corrected.push({ id, action: existed ? 'configured' : 'created' });
      log.info({ remote: `${location.namespace}/${location.name}`, cluster: cluster.name, generation: live.metadata.generation }, 'remote Sync applied');
    }
    await announceDrift({ events: this.deps.events, owned: cluster.owned, intervalMs: interval }, obj, drift.due, corrected, log);
    // The ProxySync's inventory: the remote Sync and the copies it keeps beside it.
    const inventory = inventoryOf([desired, ...related.shells]);
    await this.removeStale(obj, status, inventory.map((e) => e.id), cluster);
    // Held back, the remote Sync is not what the template says: its status does not speak for the ProxySync.
    // (Applied just now, it was not held back.)
    const next = mirroredStatus(status, live!, { cluster: clusterName(spec), mark, inventory, heldBack: step.heldBack }, generation, new Date());
    await this.writeStatus(obj, next, log);
    return drift.waitMs === undefined ? undefined : dueBy({}, drift.waitMs);
  }

  /** Suspended: nothing is written in the remote cluster; its status is still mirrored. */
  private async mirrorOnly(obj: KubeObject, spec: ProxySyncSpec, status: SyncStatusDraft, cluster: RemoteCluster, generation: number | undefined): Promise<ReconcileResult | undefined> {
    const live = await this.findRemoteSync(obj, spec, cluster);
    const mark = live?.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
    const inventory = status.inventory?.entries ?? [];
    const mirrored = live ? mirroredStatus(status, live, { cluster: clusterName(spec), mark, inventory }, generation, new Date()) : status;
    await this.deps.writer.updateStatus(obj, suspended(mirrored, generation));
    return undefined;
  }

  /** Phase 1: the remote Sync as the cluster's shared, label-selected watch of Syncs has it (the watch wakes us on its changes). */
  private async findRemoteSync(obj: KubeObject, spec: ProxySyncSpec, cluster: RemoteCluster): Promise<KubeObject | undefined> {
    const { namespace, name } = remoteLocation(obj, spec);
    const owner = ownerOf(obj, 'ProxySync');
    try {
      await cluster.discovery.resolve(API_VERSION, 'Sync');
      void cluster.owned.awaitKinds(owner, []);
    } catch (err) {
      if (!(err instanceof UnknownKindError)) throw err;
      // Woken the moment the Sync CRD is Established there (a registration's RemoteSync, a person); the timer is a backstop.
      const served = await cluster.owned.awaitKinds(owner, [{ apiVersion: API_VERSION, kind: 'Sync' }]);
      const message = `cluster ${cluster.name} does not serve ${API_VERSION} Syncs: register it first (install the syncprims CRDs and operator there, e.g. with a RemoteSync; see the README, "Registration")`;
      throw new Halt(Reason.CRDNotInstalled, message, served ? { retry: { minDelayMs: ARRIVED_RETRY_MS } } : { requeueAfterMs: CRD_RETRY_MS });
    }
    const probe: KubeObject = { apiVersion: API_VERSION, kind: 'Sync', metadata: { name, namespace } };
    await cluster.owned.track(inventoryOf([probe]));
    const found = cluster.owned.lookup(probe);
    return found.known ? found.object : getIfExists<KubeObject>(cluster.client, syncPath(namespace, name)).then((o) => (o && !unowned(o) ? o : undefined));
  }

  /**
   * Phase 3: the remote Sync is ours, or nobody's (then adopted); its namespace is created when it does not exist.
   * One that another owner's labels name is a Conflict.
   */
  private async claim(live: KubeObject | undefined, location: { namespace: string; name: string }, owner: Owner, cluster: RemoteCluster): Promise<void> {
    // Not among ours: missing, or there without (or with another) owner's labels.
    const existing = live ?? (await getIfExists<KubeObject>(cluster.client, syncPath(location.namespace, location.name)));
    if (existing && ownedByOther(existing, owner)) {
      throw new Conflict(`the Sync ${location.namespace}/${location.name} in cluster ${cluster.name} is owned by ${ownerLabelOf(existing)}`, objectId(existing));
    }
    if (!existing) await ensureNamespace(cluster, location.namespace);
  }

  /**
   * Phase 5 (related objects): the copies of what the template's source names,
   * kept in step in the remote namespace. They are read (GET in the managing
   * cluster) and checked there only when one of them has changed since this
   * process last did, as the metadata watch of the referenced-object index
   * tells, or when one of the copies was changed by someone else there (a
   * drift due for correction); their content is kept no longer than this
   * reconcile. The copies it applies over what someone else changed go to
   * `corrected`.
   */
  private async related(
    { key, obj, spec, cluster }: Pick<Maintain, 'key' | 'obj' | 'spec' | 'cluster'>,
    { namespace, owner, drift, corrected }: { namespace: string; owner: Owner; drift: DueDrifts; corrected: ObjectResult[] },
  ): Promise<KnownCopies> {
    const home = obj.metadata.namespace ?? '';
    const named = relatedRefs(spec);
    const refs = named.map((n) => ({ apiVersion: 'v1', kind: n.kind, namespace: home, name: n.name }));
    await this.references.ensureWatched(refs);
    const versions = JSON.stringify([cluster.name, namespace, ...refs.map((r) => [r.kind, r.name, this.references.cached(r)?.metadata.resourceVersion ?? 'missing'])]);
    const known = this.copiesKnown.get(key);
    const copyDrifted = (k: KnownCopies): boolean => k.shells.some((c) => drift.due.some((d) => d.id === objectId(c)));
    if (known?.versions === versions && !copyDrifted(known)) return known;
    this.copiesKnown.delete(key); // until made sure of again: a failure below leaves them to be checked next time
    const marks = ownerMarks(obj, this.settings.origin);
    const copies: KubeObject[] = [];
    // Read as the ProxySync's account (API.md), so that it copies only what that account may read.
    const account = relatedAccount(spec, this.settings.defaultServiceAccount);
    const reader = account ? this.settings.home.asServiceAccount(home, account) : this.settings.home;
    for (const { kind, name, field } of named) {
      const got = await getIfExists<RelatedObject & Record<string, unknown>>(reader, relatedPath(kind, name, home)).catch((err: unknown) => {
        // Refused here, in the managing cluster (see refusal: what else is refused is the remote cluster's).
        if (err instanceof ApiError && err.status === 403 && account) {
          throw new Halt(Reason.SourceError, `service account ${home}/${account} may not get ${kind} ${home}/${name} (${field}; a ProxySync copies only what its account may read): grant that account get on it, or change ${field} (${err.message})`);
        }
        if (err instanceof ApiError && !err.transient) throw new Halt(Reason.ApplyFailed, `cannot read ${kind} ${home}/${name} (${field}) in the managing cluster: ${err.message}`);
        throw err;
      });
      if (!got) throw new Halt(Reason.Progressing, `waiting for ${kind} ${home}/${name} (${field}) to exist: it is copied to the remote cluster`, undefined, true);
      copies.push(relatedCopy({ kind, name, type: got.type as string | undefined, data: got.data, binaryData: got.binaryData }, namespace, marks));
    }
    for (const copy of copies) {
      const action = await this.ensureCopy(copy, owner, cluster);
      if (action) corrected.push({ id: objectId(copy), action });
    }
    const entry = { versions, digest: copiesDigest(copies), shells: copies.map((c) => ({ apiVersion: c.apiVersion, kind: c.kind, metadata: { name: c.metadata.name, namespace } })) };
    // Watched (as owned objects) so that someone else's change of a copy wakes the ProxySync as drift.
    await cluster.owned.track(inventoryOf(entry.shells));
    this.copiesKnown.set(key, entry);
    return entry;
  }

  /** One copy in the remote namespace, applied where it differs (and not someone else's): what the apply did, if it was sent. */
  private async ensureCopy(copy: KubeObject, owner: Owner, cluster: RemoteCluster): Promise<'created' | 'configured' | undefined> {
    const existing = await getIfExists<KubeObject>(cluster.client, relatedPath(copy.kind as 'ConfigMap' | 'Secret', copy.metadata.name ?? '', copy.metadata.namespace ?? ''));
    if (existing && ownedByOther(existing, owner)) {
      throw new Conflict(`${copy.kind} ${copy.metadata.namespace}/${copy.metadata.name} in cluster ${cluster.name} is owned by ${ownerLabelOf(existing)}`, objectId(copy));
    }
    if (copyMatches(existing, copy)) return undefined;
    await serverSideApply(cluster.client, cluster.discovery, copy, { fieldManager: FIELD_MANAGER, force: true });
    return existing ? 'configured' : 'created';
  }

  /** What the last inventory lists and this one does not (a moved remote Sync, a copy no longer named) is deleted there. */
  private async removeStale(obj: KubeObject, status: SyncStatusDraft, keep: string[], cluster: RemoteCluster): Promise<void> {
    const stale = (status.inventory?.entries ?? []).filter((e) => !keep.includes(e.id));
    if (stale.length === 0) return;
    const results = await new ApplyEngine(cluster.client, cluster.discovery).prune(stale, ownerOf(obj, 'ProxySync'), 4);
    const failures = results.filter((r) => r.action === 'failed');
    if (failures.length > 0) throw new Halt(Reason.PruneFailed, `removing what the ProxySync no longer keeps failed: ${listProblems(failures.map((f) => f.message ?? ''))}`);
  }

  private async writeStatus(obj: KubeObject, next: SyncStatusDraft, log: Logger): Promise<void> {
    const before = readyOf(obj.status as SyncStatusDraft | undefined);
    if (!(await this.deps.writer.updateStatus(obj, next))) return;
    const after = readyOf(next);
    if (after && (after.status !== before?.status || after.reason !== before?.reason)) {
      log.info({ ready: after.status, reason: after.reason }, 'remote status mirrored');
      await this.deps.events.record(obj, after.status === 'False' ? 'Warning' : 'Normal', after.reason, after.message);
    }
  }

  /** Phase 2: delete the remote Sync (its finalizer prunes there), wait until it is gone, then remove the copies. */
  private async finalize(obj: KubeObject, log: Logger): Promise<FinalizeResult> {
    const parsed = parseSyncObject('ProxySync', obj);
    const spec = parsed.ok ? parsed.value.spec : undefined;
    if (!spec) return;
    const { namespace, name } = remoteLocation(obj, spec);
    if (spec.deletionPolicy === 'Orphan') {
      await this.deps.events.record(obj, 'Normal', 'Orphaned', `deletionPolicy Orphan: the remote Sync ${namespace}/${name} stays in its cluster and runs on its own`);
      return;
    }
    return cleanUpInCluster(this.deps, this.settings, obj, spec, log, async () => {
      const entered = await enterCluster(this.settings.registry, obj, spec, true);
      try {
        const entries = ((obj.status as SyncStatusDraft | undefined)?.inventory?.entries ?? []);
        const engine = new ApplyEngine(entered.cluster.client, entered.cluster.discovery);
        const syncs = entries.filter((e) => parseObjectId(e.id).kind === 'Sync');
        const results = await engine.prune(syncs, ownerOf(obj, 'ProxySync'));
        const refused = results.filter((r) => r.action === 'failed' && r.reason !== UNREACHABLE);
        if (refused.length > 0) throw new CleanUpFailed(`deleting the remote Sync failed: ${listProblems(refused.map((f) => f.message ?? ''))}`);
        const deleting = results.filter((r) => r.action === 'deleted' || r.action === 'failed');
        if (deleting.length > 0) {
          log.info({ remote: deleting.map((r) => r.id) }, 'waiting for the remote Sync to prune and go');
          return { requeueAfterMs: REMOTE_GONE_RETRY_MS };
        }
        const rest = await engine.prune(entries.filter((e) => !syncs.includes(e)), ownerOf(obj, 'ProxySync'));
        const failures = rest.filter((r) => r.action === 'failed');
        if (failures.length > 0) throw new CleanUpFailed(`removing the copies failed: ${listProblems(failures.map((f) => f.message ?? ''))}`);
        return undefined;
      } finally {
        entered.leave();
      }
    });
  }

}

function syncPath(namespace: string, name: string): string {
  return objectPath(syncResource('Sync'), name, namespace);
}

async function ensureNamespace(cluster: RemoteCluster, namespace: string): Promise<void> {
  try {
    await createNamespace(cluster.client, namespace);
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 403)) throw err;
    // An identity confined to its namespaces may not create namespaces: one that is there will do.
    if (await namespaceMissing(cluster, namespace)) {
      throw new Halt(Reason.ApplyFailed, `cannot create namespace ${namespace} in cluster ${cluster.name}: ${err.message}; create it, or grant the kubeconfig's identity create on namespaces`);
    }
  }
}

/** Whether a namespace is known not to exist: one the identity may not read either is left to the writes that follow (their errors name it). */
async function namespaceMissing(cluster: RemoteCluster, namespace: string): Promise<boolean> {
  try {
    return (await getIfExists(cluster.client, objectPath(CORE.namespaces, namespace))) === undefined;
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return false;
    throw err;
  }
}

function readyOf(status: SyncStatusDraft | undefined) {
  return status?.conditions?.find((c) => c.type === ConditionType.Ready);
}
