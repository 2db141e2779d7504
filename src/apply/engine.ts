import { createHash } from 'node:crypto';
import { FIELD_MANAGER } from '../api/marks.js';
import { canonicalJson } from '../kube/canonical-json.js';
import { getIfExists, type Requester } from '../kube/client.js';
import { Discovery, UnknownKindError } from '../kube/discovery.js';
import { ApiError, TransportError } from '../kube/errors.js';
import { CORE, objectPath, type KubeObject, type ResourceInfo } from '../kube/resources.js';
import type { ChangeAction } from './changeset.js';
import type { InventoryEntry } from '../api/status.js';
import { objectId, parseObjectId } from './inventory.js';
import { applyStages, pruneOrder } from './order.js';
import { mapLimit } from './map-limit.js';
import { ourEntry } from './managed-fields.js';
import { decideNoop } from './noop.js';
import { holderText, keptFromPrune, ownedByOther, type Owner } from './owner.js';

export type { Owner } from './owner.js';

/** What happened to one object. `failed` and `conflict` are not change-set actions. */
export interface ObjectResult {
  id: string;
  action: ChangeAction | 'failed' | 'conflict';
  message?: string;
  /** Why it failed, when it did: `CRDNotInstalled`, `Forbidden`, `Immutable`, `Invalid`... */
  reason?: string;
  /** The object as the server returned it (created, configured or unchanged). */
  object?: KubeObject;
  /** A failure a later try may not meet (429, 5xx): how long the server asked us to wait (Retry-After; 0 if it did not say). */
  transient?: { retryAfterMs: number };
  /** It failed because its namespace does not exist (yet): that namespace. */
  missingNamespace?: string;
  /** The object exists and is being deleted (a Namespace held back the rest of the set: see applyStaged). */
  beingDeleted?: boolean;
}

/** What a cache knows of an object about to be applied (see OwnedObjects.lookup). */
export type LiveLookup = { known: false } | { known: true; object?: KubeObject };

/** Where the engine reads what objects are now, instead of a GET each. */
export interface LiveObjects {
  lookup(obj: KubeObject): LiveLookup;
  /**
   * Dry-run verdicts "unchanged", remembered per object id as a hash of
   * (resourceVersion, rendered object): the same object at the same version
   * is not asked about twice.
   */
  verdicts?: VerdictMemory;
}

export interface VerdictMemory {
  has(id: string, hash: string): boolean;
  remember(id: string, hash: string): void;
}

export interface ApplyOptions {
  owner: Owner;
  /**
   * Objects owned by syncs, as a cache has them. Where it knows the kind, no
   * GET is sent: an object it does not hold is nobody's (created or adopted).
   */
  live?: LiveObjects;
  /** Delete and recreate objects whose immutable fields changed. */
  force: boolean;
  concurrency?: number;
  /** How long to wait for a CRD applied in the first stage to be Established. */
  crdTimeoutMs?: number;
}

/**
 * Server-side apply of a set of objects, in stages (CRDs, Namespaces and
 * cluster roles first, then the rest once the CRDs are Established), with
 * concurrency within a stage; unchanged objects are detected with a dry run
 * and not written. Compare fluxcd/pkg ssa's ApplyAllStaged.
 */
export class ApplyEngine {
  readonly discovery: Discovery;

  constructor(
    readonly client: Requester,
    discovery?: Discovery,
  ) {
    this.discovery = discovery ?? new Discovery(client);
  }

  async applyStaged(objects: KubeObject[], opts: ApplyOptions): Promise<ObjectResult[]> {
    const results: ObjectResult[] = [];
    const stages = applyStages(objects);
    for (const [i, stage] of stages.entries()) {
      const staged = await mapLimit(stage, opts.concurrency ?? 16, (obj) => this.applyOne(obj, opts));
      results.push(...staged);
      // A Namespace of the set still being deleted (the set pruned and applied again at once): the rest
      // waits until it is gone (the watch of it wakes the sync), as what the rest holds can keep it from
      // going: an APIService served from it makes discovery fail, and the namespace controller then
      // never finishes (issue 37). Its objects could not be created in it meanwhile anyway.
      const leaving = staged.filter((r) => r.beingDeleted && parseObjectId(r.id).kind === 'Namespace').map((r) => parseObjectId(r.id).name);
      if (leaving.length > 0) {
        results.push(...stages.slice(i + 1).flat().map((obj) => heldBack(obj, leaving)));
        break;
      }
      const crds = staged.filter((r) => r.object?.kind === 'CustomResourceDefinition' && r.action !== 'failed');
      if (crds.length === 0) continue;
      // Only the CRDs whose kinds the rest of the set uses are waited on (Argo CD's are not).
      const later = new Set(stages.slice(i + 1).flat().map((o) => groupKind(o.apiVersion.split('/')[0] ?? '', o.kind)));
      const needed = crds.filter((r) => later.has(crdGroupKind(r.object!)));
      await Promise.all(needed.map((r) => this.waitEstablished(r.object!, opts.crdTimeoutMs ?? 60_000)));
      // Only what the set is about to use is read again (a miss re-reads anyway; this covers a changed CRD).
      for (const r of needed) for (const apiVersion of crdApiVersions(r.object!)) this.discovery.invalidate(apiVersion);
    }
    return results;
  }

  /**
   * Deletes the inventory entries that this owner still owns: dependents
   * first, then Namespaces and CRDs (each group concurrently).
   */
  async prune(entries: InventoryEntry[], owner: Owner, concurrency = 16): Promise<ObjectResult[]> {
    const byId = new Map(entries.map((e) => [e.id, e]));
    const ordered = pruneOrder(entries.map((e) => e.id));
    const last = (id: string): boolean => ['Namespace', 'CustomResourceDefinition'].includes(parseObjectId(id).kind);
    const results: ObjectResult[] = [];
    for (const group of [ordered.filter((id) => !last(id)), ordered.filter(last)]) {
      results.push(...(await mapLimit(group, concurrency, (id) => this.pruneOne(byId.get(id)!, owner))));
    }
    return results;
  }

  private async applyOne(obj: KubeObject, opts: ApplyOptions): Promise<ObjectResult> {
    const id = objectId(obj);
    try {
      const info = await this.discovery.resolve(obj.apiVersion, obj.kind);
      const path = objectPath(info, obj.metadata.name ?? '', obj.metadata.namespace);
      const cached = opts.live?.lookup(obj) ?? { known: false };
      const existing = cached.known ? cached.object : await this.get(path);
      if (existing && ownedByOther(existing, opts.owner)) return conflictWith(id, obj, existing, opts.owner);
      const decision = existing ? await this.decide(id, path, obj, existing, opts) : 'create';
      if (decision === 'unchanged') return { id, action: 'unchanged', object: existing, ...beingDeletedOf(existing) };
      let status = 0;
      const applied = await this.ssaOrRecreate(path, obj, opts.force, (s) => (status = s));
      if (decision === 'differs' && existing && applied.metadata.resourceVersion === existing.metadata.resourceVersion) {
        // Nothing was written: what differed is a value the API server stores in another form (`cpu: 0.5`
        // is kept as `500m`). Remembered as a dry run's verdict is, so the next resync sends nothing.
        opts.live?.verdicts?.remember(id, verdictHash(existing, obj));
        return { id, action: 'unchanged', object: applied };
      }
      return { id, action: status === 201 ? 'created' : 'configured', object: applied, ...beingDeletedOf(applied) };
    } catch (err) {
      return failure(id, obj, err);
    }
  }

  /**
   * Whether applying `obj` would leave `existing` as it is, decided from the
   * object and our managedFields entry where that is certain (no request):
   * `unchanged`; `differs` where the apply certainly changes it (a value of
   * ours differs, a field is not ours, or ours no longer set: applied without
   * a dry run, which would only say so). Else a dry run decides (`unchanged`
   * or `changes`), and its "unchanged" is remembered for this version.
   */
  private async decide(id: string, path: string, obj: KubeObject, existing: KubeObject, opts: ApplyOptions): Promise<'unchanged' | 'differs' | 'changes'> {
    const decision = decideNoop(obj, existing);
    if (decision.noop) return 'unchanged';
    const verdict = verdictHash(existing, obj);
    if (opts.live?.verdicts?.has(id, verdict)) return 'unchanged';
    if (decision.differs.length > 0) return 'differs';
    const dry = await this.ssa(path, obj, true).catch((err: unknown) => {
      if (opts.force && isImmutable(err)) return undefined; // recreated by the caller
      throw err;
    });
    if (!dry || !sameObject(dry, existing)) return 'changes';
    opts.live?.verdicts?.remember(id, verdict);
    return 'unchanged';
  }

  /** What the API server says: whether applying `obj` leaves `existing` as it is (a dry run; for tests of decideNoop). */
  async dryRunUnchanged(obj: KubeObject, existing: KubeObject): Promise<boolean> {
    const info = await this.discovery.resolve(obj.apiVersion, obj.kind);
    const dry = await this.ssa(objectPath(info, obj.metadata.name ?? '', obj.metadata.namespace), obj, true);
    return sameObject(dry, existing);
  }

  /** `onStatus` hears 201 when the object was created, 200 when it was changed. */
  private async ssaOrRecreate(path: string, obj: KubeObject, force: boolean, onStatus: (status: number) => void): Promise<KubeObject> {
    try {
      return await this.ssa(path, obj, false, onStatus);
    } catch (err) {
      if (!force || !isImmutable(err)) throw err;
      await this.client.request({ method: 'DELETE', path, query: { propagationPolicy: 'Background' } });
      await this.waitGone(path, 60_000);
      return this.ssa(path, obj, false, onStatus);
    }
  }

  private ssa(path: string, obj: KubeObject, dryRun: boolean, onStatus?: (status: number) => void): Promise<KubeObject> {
    return this.client.request<KubeObject>({
      method: 'PATCH',
      path,
      query: { fieldManager: FIELD_MANAGER, force: true, dryRun: dryRun ? 'All' : undefined },
      contentType: 'application/apply-patch+yaml',
      body: obj,
      onStatus,
    });
  }

  private async pruneOne(entry: InventoryEntry, owner: Owner): Promise<ObjectResult> {
    const id = entry.id;
    const ref = parseObjectId(id);
    let info: ResourceInfo;
    try {
      info = await this.discovery.resolve(ref.group ? `${ref.group}/${entry.v}` : entry.v, ref.kind);
    } catch (err) {
      if (err instanceof UnknownKindError) return { id, action: 'skipped', message: 'its kind is no longer served' };
      return { id, action: 'failed', reason: 'PruneFailed', message: String(err) };
    }
    const path = objectPath(info, ref.name, ref.namespace || undefined);
    // The delete is conditional on the version we checked: a label or
    // annotation edited between our read and the delete (a hand change of
    // owner, `prune: disabled`) fails it with 409, and the object is read
    // and checked again.
    for (let attempt = 1; ; attempt++) {
      try {
        const existing = await this.get(path);
        const kept = keptFromPrune(existing, owner);
        if (kept !== undefined || !existing) return { id, action: 'skipped', message: kept ?? 'already gone' };
        const { uid, resourceVersion } = existing.metadata;
        // In the body: with a body the API server reads no query options (a Job's default, Orphan, would leave its pods).
        await this.client.request({
          method: 'DELETE',
          path,
          body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background', preconditions: { uid, resourceVersion } },
        });
        return { id, action: 'deleted' };
      } catch (err) {
        const changed = err instanceof ApiError && err.conflict;
        if (changed && attempt < PRUNE_ATTEMPTS) continue;
        return pruneFailure(id, err, changed);
      }
    }
  }

  private get(path: string): Promise<KubeObject | undefined> {
    return getIfExists<KubeObject>(this.client, path);
  }

  private async waitGone(path: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((await this.get(path)) !== undefined) {
      if (Date.now() > deadline) throw new Error(`${path} was not deleted within ${timeoutMs / 1000}s (finalizers?)`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private async waitEstablished(crd: KubeObject, timeoutMs: number): Promise<void> {
    const path = objectPath(CORE.crds, crd.metadata.name ?? '');
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const got = await this.get(path);
      const conditions = (got?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
      if (conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} was not Established within ${timeoutMs / 1000}s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** A delete that did not happen: gone already, changed under us at every try, or refused. */
function pruneFailure(id: string, err: unknown, changed: boolean): ObjectResult {
  if (err instanceof ApiError && err.notFound) return { id, action: 'skipped', message: 'already gone' };
  if (changed) return { id, action: 'failed', reason: 'PruneFailed', message: `delete ${id}: it kept changing while being pruned (${PRUNE_ATTEMPTS} tries); kept, tried again next time` };
  return { id, action: 'failed', reason: reasonOf(err), message: `delete ${id}: ${errorText(err)}`, ...transientOf(err) };
}

/** Reads and conditional deletes of one object before its prune is given up for this reconcile. */
const PRUNE_ATTEMPTS = 3;

function groupKind(group: string, kind: string): string {
  return `${group}/${kind}`;
}

/** The group-versions a CRD serves. */
function crdApiVersions(crd: KubeObject): string[] {
  const spec = crd.spec as { group?: string; versions?: { name?: string }[] } | undefined;
  return (spec?.versions ?? []).map((v) => `${spec?.group ?? ''}/${v.name ?? ''}`);
}

/** The group/kind a CRD defines (`apiVersion` of a core object has no group: "v1" never matches a CRD). */
function crdGroupKind(crd: KubeObject): string {
  const spec = crd.spec as { group?: string; names?: { kind?: string } } | undefined;
  return groupKind(spec?.group ?? '', spec?.names?.kind ?? '');
}

/**
 * Equal once what the server bumps on every write is set aside, and our
 * field manager owning the same fields: an apply that only moves our
 * ownership (a Secret an earlier version applied through `stringData`, a
 * field we no longer set that another manager keeps) is sent, or a later
 * change of those fields by someone else would not be seen as drift.
 */
function sameObject(a: KubeObject, b: KubeObject): boolean {
  return canonicalJson(comparable(a)) === canonicalJson(comparable(b)) && canonicalJson(ourEntry(a)?.fieldsV1 ?? null) === canonicalJson(ourEntry(b)?.fieldsV1 ?? null);
}

function comparable(obj: KubeObject): KubeObject {
  const { managedFields: _m, resourceVersion: _r, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/** A dry run's "unchanged" holds for this resourceVersion of the live object and this rendered object. */
function verdictHash(existing: KubeObject, rendered: KubeObject): string {
  return createHash('sha256').update(`${existing.metadata.resourceVersion ?? ''}\n${canonicalJson(rendered)}`).digest('base64');
}

function isImmutable(err: unknown): boolean {
  return err instanceof ApiError && err.status === 422 && /immutable/i.test(err.message);
}

/** The reason of a failed result whose request got no answer at all: the cluster, not the object, is the problem. */
export const UNREACHABLE = 'Unreachable';

function failure(id: string, obj: KubeObject, err: unknown): ObjectResult {
  if (err instanceof UnknownKindError) {
    return { id, action: 'failed', reason: 'CRDNotInstalled', message: `${display(obj)}: ${err.message}` };
  }
  const hint = isImmutable(err) ? ' (set spec.force: true to delete and recreate it)' : '';
  return { id, action: 'failed', reason: reasonOf(err), message: `${display(obj)}: ${errorText(err)}${hint}`, ...transientOf(err), ...missingNamespaceOf(err) };
}

/** `existing`, owned by another sync: a conflict (one that ends when it is deleted, if it is being deleted). */
function conflictWith(id: string, obj: KubeObject, existing: KubeObject, owner: Owner): ObjectResult {
  const deleting = existing.metadata.deletionTimestamp ? ' and being deleted' : '';
  return { id, action: 'conflict', reason: 'OwnershipConflict', message: `${display(obj)} is owned by ${holderText(existing, owner)}${deleting}`, ...beingDeletedOf(existing) };
}

function beingDeletedOf(obj: KubeObject | undefined): Pick<ObjectResult, 'beingDeleted'> {
  return obj?.metadata.deletionTimestamp ? { beingDeleted: true } : {};
}

/** An object of a later stage, not applied while the set's Namespaces `leaving` are being deleted (see applyStaged). */
function heldBack(obj: KubeObject, leaving: string[]): ObjectResult {
  const which = leaving.length === 1 ? `Namespace ${leaving[0]} is` : `Namespaces ${leaving.join(', ')} are`;
  return { id: objectId(obj), action: 'failed', reason: 'NamespaceBeingDeleted', message: `${display(obj)}: not applied yet: ${which} being deleted (applied again once gone)` };
}

/** The namespace a 404 names as missing (`namespaces "x" not found`), if that is what it says. */
export function missingNamespaceOf(err: unknown): Pick<ObjectResult, 'missingNamespace'> {
  if (!(err instanceof ApiError) || !err.notFound) return {};
  const details = err.details as { kind?: string; name?: string } | undefined;
  return details?.kind === 'namespaces' && details.name ? { missingNamespace: details.name } : {};
}

function transientOf(err: unknown): Pick<ObjectResult, 'transient'> {
  if (!(err instanceof ApiError) || !err.transient) return {};
  return { transient: { retryAfterMs: (err.retryAfterSeconds ?? 0) * 1000 } };
}

function reasonOf(err: unknown): string {
  if (isImmutable(err)) return 'Immutable';
  if (err instanceof TransportError) return UNREACHABLE;
  return err instanceof ApiError ? err.reason : 'Error';
}

/** What the server said, without the request line our errors start with (`PATCH /api/...: `). */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.message.replace(/^[A-Z]+ \S+: /, '');
  return err instanceof Error ? err.message : String(err);
}

/** `Kind namespace/name` or `Kind name`. */
export function display(obj: KubeObject): string {
  const { namespace, name } = obj.metadata;
  return `${obj.kind} ${namespace ? `${namespace}/` : ''}${name}`;
}
