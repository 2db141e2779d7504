import { FIELD_MANAGER } from '../../api/marks.js';
import type { InventoryEntry } from '../../api/status.js';
import { display, type Owner } from '../../apply/engine.js';
import { displayName, entryApiVersion, parseObjectId } from '../../apply/inventory.js';
import { mapLimit } from '../../apply/map-limit.js';
import { applyStages, pruneOrder } from '../../apply/order.js';
import { holderText, keptFromPrune, ownedByOther, unowned } from '../../apply/owner.js';
import { serverSideApply } from '../../kube/apply.js';
import { getIfExists, type Requester } from '../../kube/client.js';
import { UnknownKindError, type Discovery } from '../../kube/discovery.js';
import { ApiError } from '../../kube/errors.js';
import { createNamespace } from '../../kube/namespaces.js';
import { CORE, objectPath, splitApiVersion, type KubeObject } from '../../kube/resources.js';
import type { ObjectChange } from './diff-render.js';

/**
 * The server-side dry run behind `syncprims diff`: each object of the set is
 * applied as the operator applies it (src/kube/apply.ts: field manager
 * `syncprims`, forced, in the apply engine's stages) with `dryRun=All`, and
 * what the inventory holds that the set no longer does is checked as the
 * engine's prune checks it (still there, ours, not `prune: disabled`).
 */

/** The cluster the sync applies to. */
export interface DiffTarget {
  /** Applies (as the sync's service account when it names one, as the operator does). */
  applier: Requester;
  /** Reads what is there now. */
  reader: Requester;
  discovery: Discovery;
}

/** What the operator would do: apply `objects`, ensure `namespaces` exist, prune `stale` (when `prune`). */
export interface DesiredSet {
  owner: Owner;
  objects: KubeObject[];
  /** Namespaces created (POST) before the set when missing: a ProxySync's remote namespace. */
  namespaces?: string[];
  stale: InventoryEntry[];
  prune: boolean;
  force: boolean;
  /** Whether the operator leaves a live object as it is (a ProxySync's: when it already carries what is wanted). */
  matches?: (live: KubeObject, desired: KubeObject) => boolean;
  /** Whether an object without owner labels is taken over (default: yes; a ProxySync's only with spec.adopt). */
  adopt?: boolean;
}

export interface DryRun {
  /** In apply order, then the prunes in prune order; unchanged objects too (compare with `differs`). */
  changes: ObjectChange[];
  /** One line each: what applying would fail on, or leave alone (another sync's objects). */
  problems: string[];
}

const CONCURRENCY = 8;

/** Errors that are not the object's (the cluster does not answer) are thrown. */
export async function dryRun(target: DiffTarget, set: DesiredSet): Promise<DryRun> {
  const out: DryRun = { changes: [], problems: [] };
  const fresh: Fresh = { namespaces: new Set(), crdKinds: crdKindsOf(set.objects) };
  for (const name of set.namespaces ?? []) {
    const created = await ensureNamespace(target, name);
    if (created) keep(out, fresh, created);
  }
  let failed = false;
  for (const stage of applyStages(set.objects)) {
    for (const r of await mapLimit(stage, CONCURRENCY, (obj) => dryRunOne(target, obj, set, fresh))) {
      keep(out, fresh, r);
      failed ||= 'problem' in r && !r.conflict;
    }
  }
  // As the engine: a half-applied set does not prune what it was to replace (another sync's objects left alone do not count).
  if (set.prune && !failed) {
    const byId = new Map(set.stale.map((e) => [e.id, e]));
    const pruned = await mapLimit(pruneOrder([...byId.keys()]), CONCURRENCY, (id) => wouldPrune(target, byId.get(id)!, set.owner));
    for (const p of pruned) if (p) out.changes.push(p);
  }
  return out;
}

/** Records a result; a Namespace that would be created makes its objects "not dry-run" ones. */
function keep(out: DryRun, fresh: Fresh, r: Outcome): void {
  if ('problem' in r) {
    out.problems.push(r.problem);
    return;
  }
  out.changes.push(r);
  if (r.action === 'created' && r.merged?.kind === 'Namespace' && r.merged.apiVersion === 'v1') fresh.namespaces.add(r.merged.metadata.name ?? '');
}

/** What the dry run of one object says: a change (perhaps none), or why it would not apply (`conflict`: another sync's, left alone). */
type Outcome = ObjectChange | { problem: string; conflict?: boolean };

/** What applying creates in the same breath, so that the objects inside cannot be dry-run yet. */
interface Fresh {
  namespaces: Set<string>;
  /** `apiVersion|kind` of every version the set's CRDs define. */
  crdKinds: Set<string>;
}

async function dryRunOne(target: DiffTarget, obj: KubeObject, set: DesiredSet, fresh: Fresh): Promise<Outcome> {
  const object = display(obj);
  const path = await pathOf(target, obj);
  if (typeof path !== 'string') {
    if (fresh.crdKinds.has(`${obj.apiVersion}|${obj.kind}`)) {
      return { action: 'created', object, merged: obj, notes: ['not dry-run: its CustomResourceDefinition is created by the same apply'] };
    }
    return { problem: `${object}: ${path.unknown.message}` };
  }
  const live = await getIfExists<KubeObject>(target.reader, path);
  const leftAlone = live && ownershipProblem(live, set, object);
  if (leftAlone) return { problem: leftAlone, conflict: true };
  if (live && set.matches?.(live, obj)) return { action: 'configured', object, live, merged: live };
  const notes = live && unowned(live) ? ['would be adopted'] : [];
  try {
    const merged = await serverSideApply(target.applier, target.discovery, obj, { fieldManager: FIELD_MANAGER, force: true, dryRun: true });
    return { action: live ? 'configured' : 'created', object, live, merged, notes };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return refused(err, obj, live, set.force, fresh);
  }
}

/** Why the operator leaves `live` alone (OwnershipConflict): another sync's, or without owner labels where the set adopts nothing. */
function ownershipProblem(live: KubeObject, set: DesiredSet, object: string): string | undefined {
  if (ownedByOther(live, set.owner)) return `${object} is owned by ${holderText(live, set.owner)}: left alone (OwnershipConflict)`;
  if (unowned(live) && set.adopt === false) return `${object} carries no syncprims owner labels: left alone (OwnershipConflict; spec.adopt: true takes it over)`;
  return undefined;
}

/** The object's path, or the kind the server does not serve. */
async function pathOf(target: DiffTarget, obj: KubeObject): Promise<string | { unknown: UnknownKindError }> {
  try {
    return objectPath(await target.discovery.resolve(obj.apiVersion, obj.kind), obj.metadata.name ?? '', obj.metadata.namespace);
  } catch (err) {
    if (err instanceof UnknownKindError) return { unknown: err };
    throw err;
  }
}

/** A dry run the server refused: expected (its namespace is new, a forced recreate), or a problem. */
function refused(err: ApiError, obj: KubeObject, live: KubeObject | undefined, force: boolean, fresh: Fresh): Outcome {
  const object = display(obj);
  const namespace = obj.metadata.namespace;
  if (!live && namespace && fresh.namespaces.has(namespace) && missingNamespace(err)) {
    return { action: 'created', object, merged: obj, notes: [`not dry-run: namespace ${namespace} is created by the same apply`] };
  }
  if (live && force && immutable(err)) {
    return { action: 'configured', object, live, merged: obj, notes: ['would be deleted and recreated (spec.force): not dry-run'] };
  }
  const hint = immutable(err) ? ' (set spec.force: true to delete and recreate it)' : '';
  return { problem: `${object}: ${err.message.replace(/^[A-Z]+ \S+: /, '')}${hint}` };
}

/** A namespace the operator creates when missing (a ProxySync's), dry-run; undefined when it exists. */
async function ensureNamespace(target: DiffTarget, name: string): Promise<ObjectChange | undefined> {
  if (await getIfExists(target.reader, objectPath(CORE.namespaces, name))) return undefined;
  const merged = await createNamespace(target.applier, name, { dryRun: true });
  return merged && { action: 'created', object: `Namespace ${name}`, merged };
}

/** A stale inventory entry that the prune would delete, or undefined when it would skip it (gone, not ours, kept). */
async function wouldPrune(target: DiffTarget, entry: InventoryEntry, owner: Owner): Promise<ObjectChange | undefined> {
  const ref = parseObjectId(entry.id);
  const path = await pathOf(target, { apiVersion: entryApiVersion(entry), kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace || undefined } });
  if (typeof path !== 'string') return undefined;
  const live = await getIfExists<KubeObject>(target.reader, path);
  if (!live || keptFromPrune(live, owner) !== undefined) return undefined;
  const apiVersion = live.apiVersion || entryApiVersion(entry);
  return { action: 'pruned', object: displayName(ref).replace('/', ' '), live: { ...live, apiVersion, kind: live.kind || ref.kind } };
}

function crdKindsOf(objects: readonly KubeObject[]): Set<string> {
  const kinds = new Set<string>();
  for (const crd of objects) {
    if (crd.kind !== 'CustomResourceDefinition' || splitApiVersion(crd.apiVersion).group !== 'apiextensions.k8s.io') continue;
    const spec = (crd.spec ?? {}) as { group?: string; names?: { kind?: string }; versions?: { name?: string }[] };
    for (const v of spec.versions ?? []) kinds.add(`${spec.group}/${v.name}|${spec.names?.kind}`);
  }
  return kinds;
}

function missingNamespace(err: ApiError): boolean {
  return err.notFound && (err.details as { kind?: string } | undefined)?.kind === 'namespaces';
}

function immutable(err: ApiError): boolean {
  return err.status === 422 && /immutable/i.test(err.message);
}
