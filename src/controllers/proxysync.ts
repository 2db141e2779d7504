// The ProxySync reconciler. It keeps a Sync inside a remote cluster and
// reflects its status back, in the phases of a sync agent
// (../shared/seeds/004): find the remote Sync (by the labels of its owner, in
// the cluster's shared watch of Syncs), handle deletion (the finalizer),
// ensure it exists (its namespace created when missing; one without owner
// labels adopted only with spec.adopt), keep its content (the template, by
// server-side apply, and the related objects copied beside it), and bring its
// status back. When the operator impersonates (--default-service-account),
// everything it writes there is written as the ProxySync's account, in the
// namespace of its own name (no namespace created). See docs/proxysync.md.
import { ConditionType, Reason } from '../api/conditions.js';
import { parseDuration } from '../api/duration.js';
import { API_VERSION, syncResource } from '../api/kinds.js';
import { FIELD_MANAGER, RECONCILE_REQUESTED_AT_ANNOTATION } from '../api/marks.js';
import type { ProxySyncSpec } from '../api/objects.js';
import { actingAccountOf, type ActingAccount } from '../clusters/acting-identity.js';
import { parseSyncObject } from '../api/validate.js';
import { ARRIVED_RETRY_MS } from '../apply/arrivals.js';
import type { Drift, DueDrifts } from '../apply/drift.js';
import { ApplyEngine, type ObjectResult } from '../apply/engine.js';
import { inventoryOf, objectId, parseObjectId } from '../apply/inventory.js';
import { ownedBy, ownerOf, ownerOfKey, unowned, type Owner } from '../apply/owner.js';
import type { PullTarget } from '../clusters/pull-target.js';
import type { RemoteCluster } from '../clusters/remote-cluster.js';
import { assignmentOf, assignmentPlace } from '../proxy/assignment.js';
import { offlineMessage, presenceOf } from '../proxy/pull-presence.js';
import { pullLease, PULL_OFFLINE_RETRY_MS, revokedHalt } from './proxysync-pull.js';
import { serverSideApply } from '../kube/apply.js';
import { getIfExists, type Requester } from '../kube/client.js';
import { ensureNamespace } from '../kube/namespaces.js';
import { UnknownKindError } from '../kube/discovery.js';
import { ApiError } from '../kube/errors.js';
import { objectPath, type KubeObject } from '../kube/resources.js';
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
  proxyMarks,
  relatedAccount,
  relatedCopy,
  relatedPath,
  relatedRefs,
  remoteLocation,
  remoteMark,
  remoteWriter,
  tenancyProblem,
  type RelatedObject,
} from '../proxy/remote-sync.js';
import {
  claimOf,
  clusterName,
  Conflict,
  Halt,
  haltRetry,
  haltStatus,
  invalidSpec,
  namespaceMissing,
  namespaceRefused,
  refusal,
  remoteDeletion,
  remoteSyncStep,
  remoteSyncText,
  suspendedStatus,
  type RemotePlace,
} from './proxysync-phases.js';
import { handSuspenders, mirroredStatus } from './proxysync-status.js';
import { announceDrift, dueBy } from './sync-drift.js';
import { failed, type SyncStatusDraft } from './sync-status.js';

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
  /** A pull cluster: `cluster` is the managing cluster, and the remote Sync is its assignment there (proxy/assignment.ts). */
  pull?: PullTarget;
}

/** What the ProxySync's writes and reads in its cluster depend on. */
type InCluster = Pick<Maintain, 'obj' | 'spec' | 'cluster' | 'pull'>;

/** Who writes in the remote cluster for a ProxySync: its account there (see remoteWriter), else the kubeconfig's identity. */
interface RemoteWriter {
  client: Requester;
  /** The service account (of the ProxySync's namespace) it is, when the operator impersonates. */
  account?: string;
}

/** How soon a cluster without our CRDs is looked at again, where its CRDs cannot be watched (else their arrival wakes it). */
const CRD_RETRY_MS = 10_000;
/** How soon a ProxySync being deleted looks again whether its remote Sync has gone (its deletion event comes first). */
const REMOTE_GONE_RETRY_MS = 30_000;

/** The remote Sync after phase 4: as it is now, as the template makes it, the mark it carries, and the drift that holds it back. */
interface KeptRemoteSync {
  live: KubeObject;
  desired: KubeObject;
  mark: string | undefined;
  heldBack?: Drift;
}

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
  /**
   * Per ProxySync whose remote Sync is suspended by hand, who suspended it. The
   * cluster's watch keeps of managedFields only our entry and those written
   * since: once we apply again, the entry of an earlier suspension is no longer
   * there, so it is read once (a GET) and remembered while the suspension lasts.
   */
  private readonly suspenders = new Map<string, string[]>();

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
        this.suspenders.delete(key);
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
      entered = await enterCluster(this.settings.registry, obj, spec, false, this.actingAccount(obj, spec));
    } catch (err) {
      if (!(err instanceof ClusterNotUsable)) throw err;
      // Suspended, it writes nothing there anyway: it says so with the status it has, and mirrors again once resumed.
      if (ctx.suspended) return void (await this.deps.writer.updateStatus(obj, suspendedStatus(status, undefined, { cluster: clusterName(spec), inventory: [] }, generation, new Date())));
      return reportUnusable(this.deps, obj, status, err, log);
    }
    try {
      const { cluster, pull } = entered;
      if (ctx.suspended) return await this.mirrorOnly({ obj, spec, status, cluster, pull, generation });
      return await this.maintain({ key, obj, spec, status, cluster, pull, generation, log, finalizer });
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

  /** Phases 1, 3, 4 and 5: find and claim the remote Sync, keep its content (the copies, then the Sync), bring its status back. */
  private async maintain(run: Maintain): Promise<ReconcileResult | undefined> {
    const { key, obj, spec, cluster, log } = run;
    const problem = tenancyProblem(obj, spec, this.settings.defaultServiceAccount);
    if (problem) throw invalidSpec(problem);
    if (run.pull?.revokedAt) throw revokedHalt(run.pull);
    const place = this.placeOf(run);
    const live = await this.findAndClaim(run, place);
    const interval = parseDuration(spec.template.spec.interval);
    // What others changed of the remote Sync and the copies (from the watch) is corrected at once, then,
    // when it happens again and again, with backoff up to the template's interval, as a Sync's objects are.
    const drift = cluster.owned.takeDrifts(ownerOfKey('ProxySync', key), interval);
    const corrected: ObjectResult[] = [];
    const related = await this.related(run, { namespace: place.namespace, owner: this.ownerOf(obj), drift, corrected });
    const kept = await this.keepRemoteSync(run, live, related.digest, corrected);
    await announceDrift({ events: this.deps.events, owned: cluster.owned, intervalMs: interval }, obj, drift.due, corrected, log);
    const presenceMs = await this.statusBack(run, kept, related.shells);
    const waitMs = Math.min(drift.waitMs ?? Infinity, presenceMs ?? Infinity);
    return waitMs === Infinity ? undefined : dueBy({}, waitMs);
  }

  /** Phases 1 and 3: the remote Sync as it is (once the finalizer is on), claimed: ours, adopted, or to be created in its namespace. */
  private async findAndClaim(run: Maintain, place: RemotePlace): Promise<KubeObject | undefined> {
    const { key, obj, cluster, finalizer } = run;
    const live = await this.findRemoteSync(obj, place, cluster);
    await finalizer;
    // Conflicts met last time are looked at afresh (see Conflict).
    cluster.owned.awaitRelease(ownerOfKey('ProxySync', key), []);
    // Not among ours: missing, or there without (or with another) owner's labels.
    const existing = live ?? (await this.getRemoteSync(cluster, place));
    // As its account (when the operator impersonates), the namespace must be there: none is made for it.
    // A pull cluster's assignments namespace is made when it is registered (syncprims cluster add --pull), by nobody else.
    if (claimOf(existing, this.ownerOf(obj), remoteSyncText(place), run.spec.adopt ?? false) === 'create' && !this.writerOf(run).account && !run.pull) {
      await ensureNamespace(cluster.client, place.namespace).catch((err: unknown) => {
        throw err instanceof ApiError && err.status === 403 ? namespaceRefused(err, place) : err;
      });
    }
    return live;
  }

  /**
   * Phase 4 (the remote Sync): applied from the template where it lacks what the template sets. Changed by
   * someone else while its correction is backed off, it is left as it is until due, unless we have something
   * new to give it (a deleted remote Sync is recreated at once: there is nothing to mirror). What it applies
   * goes to `corrected`.
   */
  private async keepRemoteSync(run: Maintain, live: KubeObject | undefined, digest: string | undefined, corrected: ObjectResult[]): Promise<KeptRemoteSync> {
    const { key, obj, spec, cluster, generation, log } = run;
    const mark = remoteMark(digest, obj.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION]);
    const remote = desiredRemoteSync(obj, spec, this.settings.origin, mark, this.settings.defaultServiceAccount);
    const desired = run.pull ? assignmentOf(remote, obj, run.pull) : remote;
    const id = objectId(desired);
    const applying = `${generation}|${mark ?? ''}`;
    const step = remoteSyncStep(live, desired, { applying, lastApplied: this.lastApplied.get(key) }, () => cluster.owned.driftWaiting(ownerOfKey('ProxySync', key), id));
    if (!step.apply) return { live: live!, desired, mark, heldBack: step.heldBack };
    const applied = await this.written(run, (client) => serverSideApply(client, cluster.discovery, desired, { fieldManager: FIELD_MANAGER, force: true }));
    this.lastApplied.set(key, applying);
    corrected.push({ id, action: live ? 'configured' : 'created' });
    log.info({ remote: `${desired.metadata.namespace}/${desired.metadata.name}`, cluster: cluster.name, generation: applied.metadata.generation }, 'remote Sync applied');
    // Applied just now, it was not held back.
    return { live: applied, desired, mark };
  }

  /**
   * Phase 5: what left the inventory removed there, and the status mirrored from the remote Sync. For a pull
   * cluster, from its assignment, unless its operator is offline (its Lease not renewed): then ClusterOffline,
   * looked at again in PULL_OFFLINE_RETRY_MS; online, when its Lease runs out (the ms returned).
   */
  private async statusBack(run: Maintain, kept: KeptRemoteSync, copies: KubeObject[]): Promise<number | undefined> {
    const { obj, spec, status, generation, log } = run;
    // The ProxySync's inventory: the remote Sync and the copies it keeps beside it.
    const inventory = inventoryOf([kept.desired, ...copies]);
    await this.removeStale(run, status, inventory.map((e) => e.id));
    // Held back, the remote Sync is not what the template says: its status does not speak for the ProxySync.
    // Suspended by hand there, it applies nothing we give it: neither does it.
    const suspendedBy = await this.suspendedBy(run, kept.live);
    const remote = { cluster: clusterName(spec), mark: kept.mark, inventory, heldBack: kept.heldBack, suspendedBy };
    const now = new Date();
    const mirrored = mirroredStatus(status, kept.live, remote, generation, now);
    if (!run.pull) return void (await this.writeStatus(obj, mirrored, log));
    const presence = presenceOf(await pullLease(run.cluster, run.pull), now.getTime());
    if (presence.online) {
      await this.writeStatus(obj, mirrored, log);
      return presence.until - now.getTime() + 1_000;
    }
    await this.writeStatus(obj, failed(mirrored, Reason.ClusterOffline, offlineMessage(run.pull.cluster, presence, now.getTime()), generation), log);
    return PULL_OFFLINE_RETRY_MS;
  }

  /** Who suspended the remote Sync by hand (see handSuspenders and `suspenders`); undefined when nobody did. */
  private async suspendedBy(run: Maintain, live: KubeObject): Promise<string[] | undefined> {
    const { key, spec, cluster } = run;
    const suspends = (spec.template.spec as { suspend?: boolean }).suspend === true;
    const seen = handSuspenders(live, suspends);
    if (!seen) return void this.suspenders.delete(key);
    if (seen.length > 0) return this.suspenders.set(key, seen).get(key);
    const known = this.suspenders.get(key);
    if (known) return known;
    const read = await this.getRemoteSync(cluster, this.placeOf(run));
    const named = (read && handSuspenders(read, suspends)) || [];
    this.suspenders.set(key, named);
    return named;
  }

  /** Suspended: nothing is written in the remote cluster; its status is still mirrored. */
  private async mirrorOnly({ obj, spec, status, cluster, pull, generation }: Omit<Maintain, 'key' | 'log' | 'finalizer'>): Promise<ReconcileResult | undefined> {
    const live = await this.findRemoteSync(obj, this.placeOf({ obj, spec, cluster, pull }), cluster);
    const remote = { cluster: clusterName(spec), inventory: status.inventory?.entries ?? [] };
    await this.deps.writer.updateStatus(obj, suspendedStatus(status, live, remote, generation, new Date()));
    return undefined;
  }

  /** Where the remote Sync lives (for a pull cluster: its assignment), and the name of its cluster (in messages). */
  private placeOf({ obj, spec, cluster, pull }: InCluster): RemotePlace {
    if (pull) return { ...assignmentPlace(obj, pull), cluster: `${pull.cluster} (pull; its assignments in the managing cluster)` };
    return { ...remoteLocation(obj, spec), cluster: cluster.name };
  }

  /** The account it writes as in the remote cluster (remoteWriter), for enterCluster: a kubeconfig that impersonates itself cannot carry it too. */
  private actingAccount(obj: KubeObject, spec: ProxySyncSpec): ActingAccount | undefined {
    if (remoteWriter(spec, this.settings.defaultServiceAccount) === undefined) return undefined;
    return actingAccountOf(obj.metadata.namespace ?? '', spec.template.spec.serviceAccountName, this.settings.defaultServiceAccount);
  }

  /** Who writes in the remote cluster for this ProxySync (see RemoteWriter); a pull cluster's assignments are the operator's to write. */
  private writerOf({ obj, spec, cluster, pull }: InCluster): RemoteWriter {
    const account = pull ? undefined : remoteWriter(spec, this.settings.defaultServiceAccount);
    return account ? { client: cluster.client.asServiceAccount(obj.metadata.namespace ?? '', account), account } : { client: cluster.client };
  }

  /** A write in the remote cluster, by its writer; a namespace missing for its account said as such (see namespaceMissing). */
  private async written<T>(run: InCluster, write: (client: Requester) => Promise<T>): Promise<T> {
    const writer = this.writerOf(run);
    try {
      return await write(writer.client);
    } catch (err) {
      throw (writer.account !== undefined && namespaceMissing(err, this.placeOf(run), writer.account)) || err;
    }
  }

  /** The owner a ProxySync is of what it writes in its cluster: there, only what carries our origin is ours. */
  private ownerOf(obj: KubeObject): Owner {
    return ownerOf(obj, 'ProxySync', this.settings.origin);
  }

  /** Phase 1: the remote Sync as the cluster's shared, label-selected watch of Syncs has it (the watch wakes us on its changes). */
  private async findRemoteSync(obj: KubeObject, place: RemotePlace, cluster: RemoteCluster): Promise<KubeObject | undefined> {
    const { namespace, name } = place;
    const owner = this.ownerOf(obj);
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
    if (!found.known) return this.getRemoteSync(cluster, place).then((o) => (o && !unowned(o) ? o : undefined));
    // The watch holds what every owner has there, of any origin: the one found is ours only if it names us.
    return found.object && ownedBy(found.object, this.ownerOf(obj)) ? found.object : undefined;
  }

  /** The remote Sync read from its cluster (not its watch), whoever owns it. */
  private getRemoteSync(cluster: RemoteCluster, { namespace, name }: RemotePlace): Promise<KubeObject | undefined> {
    return getIfExists<KubeObject>(cluster.client, objectPath(syncResource('Sync'), name, namespace));
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
    run: Pick<Maintain, 'key' | 'obj' | 'spec' | 'cluster' | 'pull'>,
    { namespace, owner, drift, corrected }: { namespace: string; owner: Owner; drift: DueDrifts; corrected: ObjectResult[] },
  ): Promise<KnownCopies> {
    const { key, obj, spec, cluster } = run;
    const home = obj.metadata.namespace ?? '';
    const named = relatedRefs(spec);
    const refs = named.map((n) => ({ apiVersion: 'v1', kind: n.kind, namespace: home, name: n.name }));
    await this.references.ensureWatched(refs);
    const versions = JSON.stringify([cluster.name, namespace, ...refs.map((r) => [r.kind, r.name, this.references.cached(r)?.metadata.resourceVersion ?? 'missing'])]);
    const known = this.copiesKnown.get(key);
    const copyDrifted = (k: KnownCopies): boolean => k.shells.some((c) => drift.due.some((d) => d.id === objectId(c)));
    if (known?.versions === versions && !copyDrifted(known)) return known;
    this.copiesKnown.delete(key); // until made sure of again: a failure below leaves them to be checked next time
    const marks = proxyMarks(obj, this.settings.origin);
    const copies: KubeObject[] = [];
    // Read as the ProxySync's account (API.md), so that it copies only what that account may read.
    const account = relatedAccount(spec, this.settings.defaultServiceAccount);
    const reader = account ? this.settings.home.asServiceAccount(home, account) : this.settings.home;
    for (const { kind, name, field, optional } of named) {
      const got = await getIfExists<RelatedObject & Record<string, unknown>>(reader, relatedPath(kind, name, home)).catch((err: unknown) => {
        // Refused here, in the managing cluster (see refusal: what else is refused is the remote cluster's).
        if (err instanceof ApiError && err.status === 403 && account) {
          throw new Halt(Reason.SourceError, `service account ${home}/${account} may not get ${kind} ${home}/${name} (${field}; a ProxySync copies only what its account may read): grant that account get on it, or change ${field} (${err.message})`);
        }
        if (err instanceof ApiError && !err.transient) throw new Halt(Reason.ApplyFailed, `cannot read ${kind} ${home}/${name} (${field}) in the managing cluster: ${err.message}`);
        throw err;
      });
      if (!got && optional) continue;
      if (!got) throw new Halt(Reason.Progressing, `waiting for ${kind} ${home}/${name} (${field}) to exist: it is copied to the remote cluster`, undefined, true);
      copies.push(relatedCopy({ kind, name, type: got.type as string | undefined, data: got.data, binaryData: got.binaryData }, namespace, marks));
    }
    for (const copy of copies) {
      const action = await this.ensureCopy(run, copy, owner);
      if (action) corrected.push({ id: objectId(copy), action });
    }
    const entry = { versions, digest: copiesDigest(copies), shells: copies.map((c) => ({ apiVersion: c.apiVersion, kind: c.kind, metadata: { name: c.metadata.name, namespace } })) };
    // Watched (as owned objects) so that someone else's change of a copy wakes the ProxySync as drift.
    await cluster.owned.track(inventoryOf(entry.shells));
    this.copiesKnown.set(key, entry);
    return entry;
  }

  /**
   * One copy in the remote namespace, applied where it differs, and only when it is ours (or adopted: see
   * claimOf): what the apply did, if it was sent. It is read as the kubeconfig's identity, written by the writer.
   */
  private async ensureCopy(run: InCluster, copy: KubeObject, owner: Owner): Promise<'created' | 'configured' | undefined> {
    const { spec, cluster } = run;
    const existing = await getIfExists<KubeObject>(cluster.client, relatedPath(copy.kind as 'ConfigMap' | 'Secret', copy.metadata.name ?? '', copy.metadata.namespace ?? ''));
    claimOf(existing, owner, `${copy.kind} ${copy.metadata.namespace}/${copy.metadata.name} in cluster ${cluster.name}`, spec.adopt ?? false);
    if (copyMatches(existing, copy)) return undefined;
    await this.written(run, (client) => serverSideApply(client, cluster.discovery, copy, { fieldManager: FIELD_MANAGER, force: true }));
    return existing ? 'configured' : 'created';
  }

  /** What the last inventory lists and this one does not (a moved remote Sync, a copy no longer named) is deleted there. */
  private async removeStale(run: InCluster, status: SyncStatusDraft, keep: string[]): Promise<void> {
    const { obj, cluster } = run;
    const stale = (status.inventory?.entries ?? []).filter((e) => !keep.includes(e.id));
    if (stale.length === 0) return;
    const results = await new ApplyEngine(this.writerOf(run).client, cluster.discovery).prune(stale, this.ownerOf(obj), 4);
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
      const entered = await enterCluster(this.settings.registry, obj, spec, true, this.actingAccount(obj, spec));
      try {
        const entries = ((obj.status as SyncStatusDraft | undefined)?.inventory?.entries ?? []);
        // Deleted as it wrote them: as its account when the operator impersonates.
        const engine = new ApplyEngine(this.writerOf({ obj, spec, cluster: entered.cluster, pull: entered.pull }).client, entered.cluster.discovery);
        const syncs = entries.filter((e) => parseObjectId(e.id).kind === 'Sync');
        const deletion = remoteDeletion(await engine.prune(syncs, this.ownerOf(obj)));
        if ('refused' in deletion) throw new CleanUpFailed(deletion.refused);
        if ('waitingFor' in deletion) {
          log.info({ remote: deletion.waitingFor }, 'waiting for the remote Sync to prune and go');
          return { requeueAfterMs: REMOTE_GONE_RETRY_MS };
        }
        const rest = await engine.prune(entries.filter((e) => !syncs.includes(e)), this.ownerOf(obj));
        const failures = rest.filter((r) => r.action === 'failed');
        if (failures.length > 0) throw new CleanUpFailed(`removing the copies failed: ${listProblems(failures.map((f) => f.message ?? ''))}`);
        return undefined;
      } finally {
        entered.leave();
      }
    });
  }

}

function readyOf(status: SyncStatusDraft | undefined) {
  return status?.conditions?.find((c) => c.type === ConditionType.Ready);
}
