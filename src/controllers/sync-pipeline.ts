import { Reason } from '../api/conditions.js';
import { RECONCILE_REQUESTED_AT_ANNOTATION } from '../api/marks.js';
import { parseDuration } from '../api/duration.js';
import type { InventoryEntry } from '../api/status.js';
import type { SyncSpec } from '../api/sync-spec.js';
import { ApplyEngine, UNREACHABLE, type ObjectResult } from '../apply/engine.js';
import { ChangeSet, formatChangeSet } from '../apply/changeset.js';
import { nudgeCrdDeletions } from '../apply/crd-deletion.js';
import { leastReady, summarize } from '../apply/health.js';
import { compareIds, mergeInventories, staleEntries } from '../apply/inventory.js';
import type { OwnedObjects } from '../apply/owned-objects.js';
import { ownerOf, type Owner } from '../apply/owner.js';
import type { KindKey } from '../apply/render.js';
import { renderSet, scopesOf } from '../apply/render-set.js';
import type { KubeClient, Requester } from '../kube/client.js';
import type { Discovery } from '../kube/discovery.js';
import { withoutManagedFields, type KubeObject } from '../kube/resources.js';
import { referencedObjectsOf } from '../source/index.js';
import { clusterCapabilities } from '../kube/capabilities.js';
import { jitter } from '../runtime/backoff.js';
import { listProblems } from '../runtime/messages.js';
import { oversized } from './stored-size.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Logger } from '../runtime/logger.js';
import type { ObjectWriter } from '../runtime/object-writer.js';
import type { ReferencedObjects } from '../runtime/referenced-objects.js';
import { announceDrift, backedOffNote, dueBy } from './sync-drift.js';
import type { Drift } from '../apply/drift.js';
import { failed, progressing, succeeded, withVerification, type SyncStatusDraft } from './sync-status.js';
import { Holds } from './holds.js';
import type { Outage } from './cluster-access.js';
import { afterApplyProblem, afterProblem, failureRetry, problemOf, renderErrors, renderFailure, watchRefusal, type RenderProblem } from './sync-problems.js';
import { CleanUpFailed } from './lifecycle.js';
import type { ChartHook } from '../apply/hooks.js';
import { SyncHooks, type HookContext } from './sync-hooks.js';

/** The cluster a sync applies to: the home cluster for a Sync, a remote one for a RemoteSync. */
export interface ApplyTarget {
  /** Names the cluster in the pipeline's memory: a sync moved to another cluster runs in full. */
  id: string;
  client: KubeClient;
  discovery: Discovery;
  /** That cluster's owned-object informers. */
  owned: OwnedObjects;
  /** `syncprims.dev/origin` on objects in remote clusters. */
  origin?: string;
  /** A remote cluster's reachability: what its ClusterUnreachable condition says. */
  outage?: Outage;
}

/** What the pipeline works with, whatever the target. */
export interface PipelineDeps {
  /** The cluster the sync object and its source objects live in, and its discovery. */
  home: KubeClient;
  homeDiscovery: Discovery;
  /** Follows the objects sources reference (one metadata watch per kind). */
  references: Pick<ReferencedObjects, 'ensureWatched' | 'cached'>;
  /** The home cluster's owned objects: where a sync waits for the CRD of a source kind (a Flux source) it does not serve yet. */
  homeOwned: Pick<OwnedObjects, 'awaitKinds'>;
  writer: ObjectWriter;
  events: EventRecorder;
  concurrency: number;
  /** `--default-service-account`: what syncs that name no service account apply as. */
  defaultServiceAccount?: string;
}

/** The owner a sync is of what it applies in `target`: in a remote cluster, only what carries our origin is ours. */
function ownerIn(sync: KubeObject, target: ApplyTarget): Owner {
  return ownerOf(sync, sync.kind, target.origin);
}

/** What the pipeline remembers of a sync between reconciles (lost on restart: then it re-checks). */
interface AppliedState {
  target: string;
  generation?: number;
  revision: string;
  requestedAt?: string;
  appliedAt: number;
  startedAt: number;
  /** The applied entries, whose health decides Ready. */
  inventory: InventoryEntry[];
  /** What status.inventory lists: the applied entries and any stale ones not pruned. */
  recorded: InventoryEntry[];
  fresh: Map<string, KubeObject>;
  /** The set's chart hooks: its post hooks run once it is Ready (sync-hooks.ts). */
  hooks: ChartHook[];
}

/**
 * The sync pipeline: fetch the source, render, apply in stages, prune what
 * left the set, wait for health (from watches), report. When only the health
 * of applied objects can have changed, only health is re-read, from the cache.
 */
export class SyncPipeline {
  private readonly state = new Map<string, AppliedState>();
  private readonly sourceChanged = new Set<string>();
  private readonly hooks: SyncHooks;

  constructor(private readonly deps: PipelineDeps) {
    this.hooks = new SyncHooks(deps);
  }

  /** A source object of this sync changed: the next reconcile re-reads it. */
  markSourceChanged(key: string): void {
    this.sourceChanged.add(key);
  }

  /** Prunes everything the sync owns (deletionPolicy Delete); throws to be retried. */
  async finalize(obj: KubeObject, spec: SyncSpec | undefined, target: ApplyTarget, log: Logger): Promise<void> {
    this.forget(`${obj.metadata.namespace}/${obj.metadata.name}`);
    if (spec?.deletionPolicy === 'Orphan') return;
    const status = obj.status as SyncStatusDraft | undefined;
    // The chart hooks it applied are not in its inventory (never pruned), but go with it.
    const recorded = mergeInventories((status?.inventory?.entries ?? []) as InventoryEntry[], (status?.hooks as { entries?: InventoryEntry[] } | undefined)?.entries ?? []);
    let entries = recorded;
    // A sync that never finished an apply may have applied objects its inventory does not list yet (its
    // first status write comes at the end of its first apply: a process killed before it leaves them
    // unrecorded). Its source says what they can be; the prune deletes only those carrying its labels.
    if (spec && status?.lastAppliedRevision === undefined) entries = mergeInventories(recorded, await this.renderedEntries(obj, spec, target, log));
    if (entries.length === 0) return;
    const engine = new ApplyEngine(spec ? this.clientFor(target, spec, ownerOf(obj)) : target.client, target.discovery);
    const results = await engine.prune(entries, ownerIn(obj, target), this.deps.concurrency);
    // Of the objects it only may have applied (not in its inventory), those its account may not read
    // cannot be checked for its labels, so they are left, as a prune leaves whatever is not provably
    // its own: they do not hold the deletion (a sync refused from its start can go).
    const listed = new Set(recorded.map((e) => e.id));
    const failures = results.filter((r) => r.action === 'failed' && (listed.has(r.id) || r.reason !== 'Forbidden'));
    if (failures.length > 0) {
      const message = `pruning on deletion failed: ${listProblems(failures.map((f) => f.message ?? ''))}`;
      // A cluster that stopped answering is not a refusal: its reachability says so (and wakes the sync).
      throw failures.every((f) => f.reason === UNREACHABLE) ? new Error(message) : new CleanUpFailed(message);
    }
    log.info({ pruned: results.filter((r) => r.action === 'deleted').length }, 'pruned what the sync owned');
  }

  forget(key: string): void {
    this.state.delete(key);
    this.sourceChanged.delete(key);
  }

  /** `finalizer`: settles once the sync's finalizer is on; nothing is applied before. */
  async run(key: string, obj: KubeObject, spec: SyncSpec, base: SyncStatusDraft, target: ApplyTarget, log: Logger, finalizer: Promise<unknown> = Promise.resolve()): Promise<ReconcileResult> {
    const held = new Holds();
    const owner = ownerOf(obj);
    target.owned.begin(owner);
    try {
      return await this.runHolding(held, { key, obj, spec, target }, base, log, finalizer);
    } finally {
      held.releaseAll();
      target.owned.end(owner);
    }
  }

  /**
   * `run`, with what it holds (the kinds it applies stay watched) in `held` until it ends. Its phases:
   * read the source and render it, check the set fits, apply, prune, then health and the report.
   * (Dependencies were checked before, in lifecycle.ts; a kind not served yet is waited for here.)
   */
  private async runHolding(held: Holds, run: Run, status0: SyncStatusDraft, log: Logger, finalizer: Promise<unknown>): Promise<ReconcileResult> {
    let base = status0;
    const { key, obj, spec, target } = run;
    const prev = this.state.get(key);
    // Fields we own that others changed (watch events) are corrected at once, then with backoff (sync-drift.ts).
    const drift = stillOwned(target.owned.takeDrifts(ownerOf(obj), parseDuration(spec.interval)), prev);
    if (prev && drift.due.length === 0 && this.onlyHealthCanHaveChanged(run, prev)) {
      await finalizer;
      return dueBy(await this.report(run, base, prev, log), drift.waitMs);
    }
    this.sourceChanged.delete(key);
    const previous = (base.inventory?.entries ?? []) as InventoryEntry[];
    const set = await this.readAndRender(run, previous, held);
    // The finalizer patch went out alongside the fetch (a new sync's first write); it lands before any apply.
    await finalizer;
    if ('reason' in set) return this.notRendered(run, withVerification(base, set, obj.metadata.generation), set, log);
    base = withVerification(base, set, obj.metadata.generation);
    const tooLarge = oversized(obj, set.entries);
    if (tooLarge) {
      // Stalled until the spec changes: nothing is applied that could not be recorded.
      await this.fail(obj, base, { reason: Reason.InvalidSpec, message: tooLarge }, log);
      return {};
    }
    void this.awaitKinds(ownerOf(obj), target); // it renders: it waits for no CRD
    // A new revision's pre hooks, before its set (sync-hooks.ts); a revision without hooks goes straight on.
    const pre = await this.hooks.beforeSet(this.hookContext(run, set, log), base);
    if ('result' in pre) {
      this.state.delete(key); // until its set is applied, each reconcile runs in full
      return pre.result;
    }
    base = pre.go;
    // The apply corrects every drifted object, backed off or not (it applies whatever differs from the
    // set): all are taken, and announced as corrected, and none is left to say it still waits. Taken
    // only now: a set that does not render or fit applies nothing, and its waiting drifts stay.
    const corrections = stillOwned({ due: [...drift.due, ...target.owned.takeAllDrifts(ownerOf(obj))] }, prev).due;
    const status = await held.alongside(this.announceProgress(obj, base, set, obj.metadata.generation), target.owned.prime(set.objects));
    const applied = await this.apply(run, set);
    const pruned = await this.prune(run, set.entries, previous, applied);
    await this.tellChanges(run, { applied, pruned: pruned.results, corrections }, log);
    const state = this.remember(run, set, { applied, pruned }, prev);
    return this.afterApply(run, { ...status, inventory: { entries: state.recorded }, lastAttemptedRevision: set.revision }, { state, applied, pruned: pruned.results }, log);
  }

  /** Phase 1 and 2: the source read and rendered, the watches of the kinds it applies started (and held) on the way. */
  private async readAndRender({ obj, spec, target }: Run, previous: InventoryEntry[], held: Holds): Promise<Rendered> {
    // The watches of the kinds applied last time start while the source is fetched and rendered (after a restart).
    target.owned.track(previous).catch(() => undefined);
    // The watches of the kinds about to be applied start as soon as the source is parsed, while it is rendered.
    return this.fetchAndRender(obj, spec, target, (objects) => {
      held.addPending(target.owned.prime(objects, spec.defaultNamespace));
    });
  }

  /** What changed: the Event of the apply and prune (not waited for: sent in turn by the recorder), and the drifts corrected. */
  private async tellChanges({ obj, spec, target }: Run, done: { applied: Applied; pruned: ObjectResult[]; corrections: Drift[] }, log: Logger): Promise<void> {
    void this.announce(obj, done.applied.results, done.pruned, log);
    await announceDrift({ events: this.deps.events, owned: target.owned, intervalMs: parseDuration(spec.interval) }, obj, done.corrections, done.applied.results, log);
  }

  /** What the pipeline remembers of this apply until the next reconcile: what it applied and records, and since when it waits. */
  private remember({ key, obj, target }: Run, set: { revision: string; entries: InventoryEntry[]; hooks: ChartHook[] }, done: { applied: Applied; pruned: Pruned }, prev: AppliedState | undefined): AppliedState {
    const now = Date.now();
    const state: AppliedState = {
      target: target.id,
      generation: obj.metadata.generation,
      revision: set.revision,
      requestedAt: requestedAtOf(obj),
      appliedAt: now,
      startedAt: prev?.revision === set.revision ? prev.startedAt : now,
      inventory: set.entries.filter((e) => done.applied.ok.has(e.id)),
      recorded: recordedAfter(set.entries, done.applied, done.pruned),
      fresh: done.applied.fresh,
      hooks: set.hooks,
    };
    this.state.set(key, state);
    return state;
  }

  /** Phase 6 and 7: what went wrong in the apply and prune, reported (sync-problems.ts); else health, and the report. */
  private async afterApply(run: Run, status: SyncStatusDraft, done: { state: AppliedState; applied: Applied; pruned: ObjectResult[] }, log: Logger): Promise<ReconcileResult> {
    const { obj, spec, target } = run;
    const problem = problemOf(done.applied.results, done.pruned, target.client.name, target.outage);
    if (!problem) return this.report(run, status, done.state, log);
    this.state.delete(run.key); // the next attempt runs in full
    await this.fail(obj, status, problem, log);
    return afterApplyProblem(problem, done.applied, parseDuration(spec.interval));
  }

  /**
   * The set did not render: says why. A kind the target does not serve yet,
   * or a source kind the home cluster does not, wakes the sync the moment a
   * CRD that serves it is Established (the retry stays, as a backstop).
   */
  private async notRendered({ obj, spec, target }: Run, base: SyncStatusDraft, why: Exclude<Rendered, { objects: KubeObject[] }>, log: Logger): Promise<ReconcileResult> {
    // Listening before it says so: a CRD installed once the status is seen wakes it.
    const served = await this.awaitKinds(ownerOf(obj), target, why);
    await this.fail(obj, base, why, log);
    // Served already, but not by the discovery that rendered it: that catches up in a moment.
    return afterProblem({}, served, parseDuration(spec.interval));
  }

  /**
   * What `owner` waits for: the CRDs of the source kinds the home cluster does
   * not serve, or else of the set's kinds the target does not; nothing, when
   * it rendered. Resolves to whether one is served already (see awaitKinds).
   */
  private awaitKinds(owner: Owner, target: ApplyTarget, why?: { unknownKinds?: KindKey[]; sourceKinds?: KindKey[] }): Promise<boolean> {
    const [here, there] = why?.sourceKinds ? [this.deps.homeOwned, target.owned] : [target.owned, this.deps.homeOwned];
    // Cleared first: for a Sync both are the home cluster's.
    void there.awaitKinds(owner, []);
    return here.awaitKinds(owner, why?.sourceKinds ?? why?.unknownKinds ?? []);
  }

  /** The same cluster, generation, revision request and source, within the interval: only health is to be re-read. */
  private onlyHealthCanHaveChanged({ key, obj, spec, target }: Run, prev: AppliedState): boolean {
    return (
      prev.target === target.id &&
      !this.sourceChanged.has(key) &&
      prev.generation === obj.metadata.generation &&
      prev.requestedAt === requestedAtOf(obj) &&
      Date.now() - prev.appliedAt < parseDuration(spec.interval)
    );
  }

  /** What the source renders to now, as inventory entries, for a sync being deleted; none when it cannot be read. */
  private async renderedEntries(obj: KubeObject, spec: SyncSpec, target: ApplyTarget, log: Logger): Promise<InventoryEntry[]> {
    const set = await this.render(obj, spec, target);
    if ('objects' in set) return set.entries;
    log.warn({ reason: set.reason, message: set.message }, 'deleted before its first apply finished, and its source cannot be read: only its inventory is pruned');
    return [];
  }

  /** The rendered set and its revision, or why there is none. */
  private async fetchAndRender(
    obj: KubeObject,
    spec: SyncSpec,
    target: ApplyTarget,
    onFetched?: (objects: KubeObject[]) => void,
  ): Promise<Rendered> {
    // Watched before reading, so that a missing or not yet ready source wakes the sync when it comes.
    // A watch that cannot start (a Flux kind not installed) is tried again next time; the read says why.
    await this.deps.references.ensureWatched(referencedObjectsOf(spec.source, ownerOf(obj).namespace, spec.helm)).catch(() => undefined);
    return this.render(obj, spec, target, onFetched);
  }

  /** Fetches and renders the source (fetchAndRender without watching what it references); `onFetched` hears the objects before they are rendered. */
  private async render(
    obj: KubeObject,
    spec: SyncSpec,
    target: ApplyTarget,
    onFetched?: (objects: KubeObject[]) => void,
  ): Promise<Rendered> {
    const owner = ownerOf(obj);
    try {
      const account = this.accountOf(spec);
      const set = await renderSet({
        // Read as the sync's account (API.md): what it may not read, it cannot have applied either.
        reader: account ? { client: this.deps.home.asServiceAccount(owner.namespace, account), account: `${owner.namespace}/${account}` } : { client: this.deps.home },
        discovery: this.deps.homeDiscovery,
        namespace: owner.namespace,
        spec,
        owner: owner as Owner & { kind: 'Sync' | 'RemoteSync' | 'ProxySync' },
        origin: target.origin,
        scopeOf: scopesOf(target.discovery),
        cached: (ref) => this.deps.references.cached(ref),
        capabilities: () => clusterCapabilities(target.client),
        // A repository's ref listed by another sync of it within this sync's interval is not listed again
        // (a webhook's push forgets the listings of its repository: the next sync lists it at once).
        resolveMaxAgeMs: parseDuration(spec.interval),
        onFetched,
      });
      return renderErrors(set) ?? { objects: set.objects, entries: set.entries, revision: set.revision!, hooks: set.hooks, verified: set.fetched.verified };
    } catch (err) {
      // Discovery got no answer from the target cluster (or not a Kubernetes one): the cluster is the problem, not the source.
      return renderFailure(err, target.client.name, target.outage);
    }
  }

  /**
   * A new revision or spec: say so before applying. The same one again (a
   * resync, a restart) writes nothing unless something changes. A sync that
   * has applied nothing yet has no dependent relying on its progress: that is
   * folded into its first result (README, design notes), one write fewer.
   *
   * The same write lists, ahead of the apply, every object the sync may own
   * once it is done: the inventory so far plus the set about to be applied.
   * A process killed in the middle of the apply leaves no object applied and
   * unrecorded, so the next prune or deletion finds it (the result's write
   * then records what was applied and kept).
   */
  private async announceProgress(obj: KubeObject, base: SyncStatusDraft, set: { entries: InventoryEntry[]; revision: string }, generation?: number): Promise<SyncStatusDraft> {
    const { revision } = set;
    const storedGeneration = (obj.status as SyncStatusDraft | undefined)?.observedGeneration;
    if (base.lastAppliedRevision === revision && storedGeneration === generation) return base;
    if (base.lastAppliedRevision === undefined) return { ...base, lastAttemptedRevision: revision };
    const ahead = mergeInventories((base.inventory?.entries ?? []) as InventoryEntry[], set.entries);
    const status = { ...progressing(base, `applying revision ${revision}`, generation), lastAttemptedRevision: revision, inventory: { entries: ahead } };
    await this.deps.writer.updateStatus(obj, status);
    return status;
  }

  /**
   * The target's client, as the sync's service account when it names one, else
   * as `--default-service-account` when set: in the target cluster, in the
   * namespace of the sync (for a RemoteSync, the namespace of that name there).
   */
  private clientFor(target: ApplyTarget, spec: SyncSpec, owner: Owner): Requester {
    const account = this.accountOf(spec);
    return account ? target.client.asServiceAccount(owner.namespace, account) : target.client;
  }

  /** The service account a sync acts as: its own, else `--default-service-account`; undefined: the operator itself. */
  private accountOf(spec: SyncSpec): string | undefined {
    return spec.serviceAccountName ?? this.deps.defaultServiceAccount;
  }

  /** Phase 3: applies the set in stages; waits (by watch) for what holds an object back: its owner letting go, its namespace, a CRD being deleted. */
  private async apply({ obj, spec, target }: Run, { objects }: { objects: KubeObject[] }): Promise<Applied> {
    const owner = ownerIn(obj, target);
    const engine = new ApplyEngine(this.clientFor(target, spec, owner), target.discovery);
    // What the objects are now comes from the owned-object watches (one GET fewer per object; primed by the caller).
    const results = await engine.applyStaged(objects, {
      owner,
      force: spec.force ?? false,
      concurrency: this.deps.concurrency,
      live: target.owned,
    });
    // An object another sync owns is applied the moment that sync lets it go, not at the retry;
    // one whose namespace is missing, the moment the namespace is created.
    target.owned.awaitRelease(owner, results.filter((r) => r.action === 'conflict').map((r) => r.id));
    // A CRD being deleted that it waits for is nudged, as the API server's CRD finalizer can stall (crd-deletion.ts).
    const nudged = await nudgeCrdDeletions(engine.client, owner, results);
    const arrived = await target.owned.awaitNamespaces(owner, [...new Set(results.flatMap((r) => (r.missingNamespace ? [r.missingNamespace] : [])))]);
    const ok = results.filter((r) => r.action !== 'failed' && r.action !== 'conflict');
    // What the applies returned, until the watches deliver it (health drops each as the cache catches up).
    const fresh = new Map(ok.filter((r) => r.object && r.action !== 'unchanged').map((r) => [r.id, withoutManagedFields(r.object!)]));
    return { results, ok: new Set(ok.map((r) => r.id)), complete: !results.some((r) => r.action === 'failed'), fresh, arrived, nudged, engine };
  }

  /**
   * Phase 4: prunes what left the set, only after a complete apply (a half-applied set must not delete
   * what it was to replace). `kept`: the stale entries not deleted, which stay recorded (those that
   * failed to prune, and all of them when the prune did not run).
   */
  private async prune({ obj, spec, target }: Run, entries: InventoryEntry[], previous: InventoryEntry[], applied: Applied): Promise<Pruned> {
    const stale = staleEntries(previous, entries);
    if (!spec.prune || !applied.complete) return { results: [], kept: stale };
    const results = stale.length > 0 ? await applied.engine.prune(stale, ownerIn(obj, target), this.deps.concurrency) : [];
    const failedPrunes = new Set(results.filter((p) => p.action === 'failed').map((p) => p.id));
    return { results, kept: stale.filter((e) => failedPrunes.has(e.id)) };
  }

  /** Tells what changed: an Event and a log line, only when something did. */
  private async announce(obj: KubeObject, applied: ObjectResult[], pruned: ObjectResult[], log: Logger): Promise<void> {
    const cs = new ChangeSet();
    for (const r of [...applied, ...pruned]) {
      if (r.action !== 'failed' && r.action !== 'conflict') cs.add({ id: r.id, action: r.action, message: r.message });
    }
    if (!cs.hasChanges()) return;
    const line = formatChangeSet(cs);
    log.info({ changes: line }, 'applied');
    await this.deps.events.record(obj, 'Normal', 'Applied', line);
  }

  /** Where and as whom the hooks of `set` run: as its objects are applied. */
  private hookContext({ obj, spec, target }: Run, set: { revision: string; hooks: ChartHook[] }, log: Logger): HookContext {
    const owner = ownerIn(obj, target);
    return {
      obj,
      spec,
      revision: set.revision,
      hooks: set.hooks,
      client: this.clientFor(target, spec, owner),
      discovery: target.discovery,
      owner,
      watch: (objects) => void target.owned.prime(objects).then((release) => release(), () => undefined),
      log,
    };
  }

  /** Health from the cache: Ready, InProgress (wait, woken by watches) or HealthCheckFailed. */
  private async report(run: Run, base: SyncStatusDraft, state: AppliedState, log: Logger): Promise<ReconcileResult> {
    const { obj, spec, target } = run;
    const generation = obj.metadata.generation;
    const interval = parseDuration(spec.interval);
    const entries = state.inventory;
    const health = await target.owned
      .track(entries)
      .then(() => target.owned.health(entries, state.fresh, ownerOf(obj)))
      .catch((err: unknown) => watchRefusal(err, target.client.name, target.outage));
    if (!Array.isArray(health)) {
      // Applied, but not followed: say so rather than retry in silence (the next try may find it granted).
      await this.fail(obj, { ...base, inventory: { entries: state.recorded }, lastAttemptedRevision: state.revision, lastAppliedRevision: state.revision }, health, log);
      return failureRetry(interval);
    }
    const summary = summarize(health.map((h) => h.status));
    let status: SyncStatusDraft = { ...base, summary, inventory: { entries: state.recorded }, lastAttemptedRevision: state.revision };
    const notReady = health.filter((h) => h.status !== 'Current');
    const fight = backedOffNote(target.owned.waitingDrifts(ownerOf(obj)));
    if (!spec.wait || notReady.length === 0) {
      // Ready: its post hooks first, if a new revision has any (sync-hooks.ts).
      const post = await this.hooks.afterReady(this.hookContext(run, state, log), { ...status, lastAppliedRevision: state.revision });
      if ('result' in post) return post.result;
      status = succeeded(post.go, `applied revision ${state.revision}${fight}`, generation);
      if (await this.deps.writer.updateStatus(obj, status)) log.info({ revision: state.revision }, 'ready');
      return { requeueAfterMs: jitter(interval) };
    }
    const waited = Date.now() - state.startedAt;
    const timeout = parseDuration(spec.timeout);
    const why = leastReady(health);
    if (waited >= timeout) {
      const message = `timed out after ${spec.timeout} waiting for health: ${why}`;
      await this.fail(obj, { ...status, lastAppliedRevision: state.revision }, { reason: Reason.HealthCheckFailed, message }, log);
      return { requeueAfterMs: jitter(interval) };
    }
    status = progressing({ ...status, lastAppliedRevision: state.revision }, `waiting for ${notReady.length} of ${health.length} objects: ${why}${fight}`, generation);
    await this.deps.writer.updateStatus(obj, status);
    // Watches wake us when an object changes; this only brings the timeout.
    return { requeueAfterMs: timeout - waited + 100 };
  }

  /** Ready=False for the sync's generation with the problem's reason and message; an Event and a log line when that is news. */
  private async fail(obj: KubeObject, base: SyncStatusDraft, { reason, message }: { reason: Reason; message: string }, log: Logger): Promise<void> {
    const status = failed(base, reason, message, obj.metadata.generation);
    if (await this.deps.writer.updateStatus(obj, status)) {
      log.warn({ reason, message }, 'not ready');
      await this.deps.events.record(obj, 'Warning', reason, message);
    }
  }
}

/**
 * A source rendered, or why it is not (see RenderProblem). A rendered set carries its inventory entries
 * (sorted), computed once for the size check, the progress status and the prune.
 */
type Rendered = { objects: KubeObject[]; entries: InventoryEntry[]; revision: string; hooks: ChartHook[]; verified?: string } | RenderProblem;

/** What the apply phase did: each object's result, the ids applied, whether all were, and what it waited for. */
interface Applied {
  results: ObjectResult[];
  ok: Set<string>;
  complete: boolean;
  /** What the applies returned, until the watches deliver it. */
  fresh: Map<string, KubeObject>;
  /** A namespace it waited for arrived meanwhile. */
  arrived: boolean;
  /** A CRD being deleted that it waits for was nudged. */
  nudged: boolean;
  engine: ApplyEngine;
}

/** What the prune phase did, and the stale entries that stay recorded. */
interface Pruned {
  results: ObjectResult[];
  kept: InventoryEntry[];
}

/** One reconcile's sync, spec and target. */
interface Run {
  key: string;
  obj: KubeObject;
  spec: SyncSpec;
  target: ApplyTarget;
}


/** The drifts, less the deletions of objects the sync no longer has (its own prune's, seen by the watch). */
function stillOwned<T extends { due: Drift[] }>(drift: T, prev: AppliedState | undefined): T {
  if (!prev || !drift.due.some((d) => d.deleted)) return drift;
  const ids = new Set(prev.inventory.map((e) => e.id));
  return { ...drift, due: drift.due.filter((d) => !d.deleted || ids.has(d.id)) };
}

/** The reconcile request a sync carries (`syncprims.dev/reconcile-requested-at`). */
function requestedAtOf(obj: KubeObject): string | undefined {
  return obj.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
}

/** What status.inventory lists after an apply and prune: the entries applied, and the stale ones kept (see prune), sorted. */
function recordedAfter(entries: InventoryEntry[], applied: Pick<Applied, 'ok'>, pruned: Pruned): InventoryEntry[] {
  const next = entries.filter((e) => applied.ok.has(e.id));
  return [...next, ...pruned.kept.filter((e) => !applied.ok.has(e.id))].sort((a, b) => compareIds(a.id, b.id));
}
