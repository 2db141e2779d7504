// The model of the prune property test (test/integration/prune-property.test.ts):
// what a namespace of Syncs and ConfigMaps should look like once the operator
// has converged after a batch of random steps, and the turning of generated
// numbers into steps that are valid for the model's state. Pure: no I/O.
//
// The steps are chosen so that the converged state is decided: an object is
// listed by at most one sync at a time, and an object edited by hand in a
// batch is not moved, nor is a sync that lists or owns it deleted in the same
// batch (either order of the two would be right, and they end differently).
// The one exception, a `race`, is on purpose: an object leaves its sync's set
// while it is edited by hand, so that the prune and the edit meet; either
// end is accepted there, and the safety property (checked from the audit log,
// not from this model) says which deletions were allowed.
import fc from 'fast-check';
import { OWNER_KIND_LABEL, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL } from '../../src/api/marks.js';

export const OBJECT_NAMES = Array.from({ length: 8 }, (_, i) => `o${i}`);
export const SYNC_NAMES = ['s0', 's1', 's2', 's3'];
/** A namespace no sync of the test lives in (a relabel to it makes the object another's). */
export const ELSEWHERE = 'elsewhere';

/** A ConfigMap as the model has it: its syncprims labels, whether prune is disabled, its data. */
export interface LiveObject {
  labels: Record<string, string>;
  disabled: boolean;
  data: string;
}

/** A hand edit of an object: labels set (a string) or removed (null), and the prune annotation. */
export interface HandEdit {
  labels: Record<string, string | null>;
  disabled?: boolean;
  /** For logs and failures. */
  what: string;
}

export type Step =
  | { op: 'assign'; object: string; sync: string | null; data: string }
  | { op: 'data'; object: string; sync: string; data: string }
  | { op: 'edit'; object: string; edit: HandEdit }
  | { op: 'delete'; sync: string }
  | { op: 'restart'; delayMs: number }
  | { op: 'race'; object: string; sync: string; edit: HandEdit };

/** The raw material of one step: fast-check generates these; `interpret` makes a step of them (or none). */
export interface RawStep {
  k: number;
  a: number;
  b: number;
  c: number;
}

/** Unbiased: fast-check favours small numbers by default, which would make most steps moves. */
export const rawStep: fc.Arbitrary<RawStep> = fc.noBias(
  fc.record({
    k: fc.integer({ min: 0, max: 99 }),
    a: fc.nat(1000),
    b: fc.nat(1000),
    c: fc.nat(1000),
  }),
);

const CHUNK = 64;

/**
 * The raw steps and batch sizes of a seed, as an endless stream made in
 * chunks of 64 (each from its own seed), so that a program of n steps is the
 * start of every longer one: a failure is replayed by its first steps alone.
 */
export function* program(seed: number): Generator<{ raw: RawStep; size: number }> {
  for (let chunk = 0; ; chunk++) {
    const [part] = fc.sample(
      fc.record({
        steps: fc.array(rawStep, { minLength: CHUNK, maxLength: CHUNK }),
        sizes: fc.array(fc.noBias(fc.integer({ min: 1, max: 1000 })), { minLength: CHUNK, maxLength: CHUNK }),
      }),
      { seed: (seed * 7919 + chunk) | 0, numRuns: 1 },
    );
    for (let i = 0; i < CHUNK; i++) yield { raw: part!.steps[i]!, size: part!.sizes[i]! };
  }
}

/** One object at the end of a batch: exactly this, or (after a race) absent or this. */
export interface Expected {
  object: LiveObject;
  mayBeGone: boolean;
}

/** What the syncs should report once converged. */
export interface ExpectedSync {
  inventory: string[];
  conflict: boolean;
}

/** What a batch changes, so that later steps of it can keep the end decided. */
interface Batch {
  edited: Set<string>;
  /** The owners (`Kind/namespace/name`) of edited objects, before and after the edit. */
  editedOwners: Set<string>;
  moved: Set<string>;
  changed: Set<string>;
  deleted: Set<string>;
  /** Objects the sets of the syncs deleted this batch listed. */
  listedByDeleted: Set<string>;
  restart: boolean;
}

export class PruneModel {
  /** The spec of each sync that exists: object name to its data. */
  readonly syncs = new Map<string, Map<string, string>>();
  /** What each sync's status.inventory lists once converged (object names). */
  readonly inventory = new Map<string, Set<string>>();
  readonly live = new Map<string, LiveObject>();
  /** Syncs with an object of their set owned by another: Ready=False, OwnershipConflict. */
  readonly conflicted = new Set<string>();
  /** Objects in a race this batch: absent, or as given here. */
  private readonly racing = new Map<string, LiveObject>();
  private batch: Batch = newBatch();
  /** Syncs deleted this batch, with their inventories (what their finalizer prunes). */
  private readonly deleting = new Map<string, Set<string>>();

  constructor(readonly namespace: string) {}

  ownerLabels(sync: string): Record<string, string> {
    return { [OWNER_KIND_LABEL]: 'Sync', [OWNER_NAMESPACE_LABEL]: this.namespace, [OWNER_NAME_LABEL]: sync };
  }

  /** As the engine reads the labels: `Kind/namespace/name`, or '' without the kind label. */
  static ownerOf(labels: Record<string, string>): string {
    if (!labels[OWNER_KIND_LABEL]) return '';
    return `${labels[OWNER_KIND_LABEL]}/${labels[OWNER_NAMESPACE_LABEL] ?? ''}/${labels[OWNER_NAME_LABEL] ?? ''}`;
  }

  ownerKey(sync: string): string {
    return `Sync/${this.namespace}/${sync}`;
  }

  /** The sync whose set lists `object`, if any. */
  assignedTo(object: string): string | undefined {
    for (const [sync, set] of this.syncs) if (set.has(object)) return sync;
    return undefined;
  }

  startBatch(): void {
    this.batch = newBatch();
    this.racing.clear();
    this.deleting.clear();
  }

  /**
   * Turns raw numbers into a step valid now, and applies it to the model;
   * undefined when none fits. The kind of step is kept and the other objects
   * are tried in turn, so that edits are not crowded out by moves while few
   * objects exist.
   */
  interpret(raw: RawStep): Step | undefined {
    for (let i = 0; i < OBJECT_NAMES.length; i++) {
      const step = this.interpretOne({ ...raw, a: raw.a + i });
      if (step) return step;
    }
    return undefined;
  }

  /** The kinds of step, by the share of `k` (0-99) each takes. */
  private readonly kinds: [number, (raw: RawStep, object: string) => Step | undefined][] = [
    [36, (raw, object) => this.assign(raw, object)],
    [42, (raw, object) => this.changeData(raw, object)],
    [72, (raw, object) => this.edit(raw, object)],
    [80, (raw) => this.deleteSync(raw)],
    // A restart costs seconds (a new process primes its caches): rare, so that a soak of 10,000 steps fits its time.
    [81, (raw) => this.restart(raw)],
    [100, (raw, object) => this.race(raw, object)],
  ];

  private interpretOne(raw: RawStep): Step | undefined {
    const object = OBJECT_NAMES[raw.a % OBJECT_NAMES.length]!;
    return this.kinds.find(([upTo]) => raw.k < upTo)![1](raw, object);
  }

  /** Moves an object to a sync's set (creating the sync), or out of every set. */
  private assign(raw: RawStep, object: string): Step | undefined {
    const b = this.batch;
    const pick = raw.b % (SYNC_NAMES.length + 1);
    const target = pick === SYNC_NAMES.length ? null : SYNC_NAMES[pick]!;
    const from = this.assignedTo(object);
    if (b.edited.has(object) || (from ?? null) === target) return undefined;
    if ((target && b.deleted.has(target)) || (from && b.deleted.has(from))) return undefined;
    const data = `v${raw.c % 4}`;
    if (from) this.syncs.get(from)!.delete(object);
    if (target) {
      if (!this.syncs.has(target)) this.syncs.set(target, new Map());
      this.syncs.get(target)!.set(object, data);
    }
    for (const s of [from, target]) if (s) b.changed.add(s);
    b.moved.add(object);
    return { op: 'assign', object, sync: target, data };
  }

  /** Changes an object's data in the set that lists it. */
  private changeData(raw: RawStep, object: string): Step | undefined {
    const sync = this.assignedTo(object);
    if (!sync || this.batch.deleted.has(sync)) return undefined;
    const data = `v${raw.c % 4}`;
    this.syncs.get(sync)!.set(object, data);
    this.batch.changed.add(sync);
    return { op: 'data', object, sync, data };
  }

  /** Owner labels removed or changed, or prune disabled or enabled, on a live object. */
  private edit(raw: RawStep, object: string): Step | undefined {
    const live = this.live.get(object);
    if (!live || !this.editable(object, live)) return undefined;
    // Edits that make an object another's (partial strips, relabels) are outweighed by those that let a sync
    // have it again (full strips, labels put back), or objects would pile up that no sync may touch (nor delete).
    let edit: HandEdit;
    if (raw.k < 48) edit = this.strip(0);
    else if (raw.k < 50) edit = this.strip(1 + (raw.b % 3));
    else if (raw.k < 55) edit = this.relabel(live, raw.b, raw.c);
    else if (raw.k < 64) edit = this.putBack(object);
    else if (raw.k < 66) edit = { labels: {}, disabled: !live.disabled, what: live.disabled ? 'prune enabled' : 'prune disabled' };
    else edit = { labels: {}, disabled: false, what: 'prune enabled' };
    const edited = applyEdit(live, edit);
    // An edit that changes nothing is passed over: the next object is tried (interpret), which is one it changes.
    if (JSON.stringify(edited) === JSON.stringify(live)) return undefined;
    this.live.set(object, edited);
    this.markEdited(object, live, edited);
    return { op: 'edit', object, edit };
  }

  private deleteSync(raw: RawStep): Step | undefined {
    const b = this.batch;
    const sync = SYNC_NAMES[raw.a % SYNC_NAMES.length]!;
    if (!this.syncs.has(sync) || b.changed.has(sync) || b.deleted.has(sync)) return undefined;
    // Its finalizer would meet an object edited by hand this batch (owned by it before or after the edit).
    if (b.editedOwners.has(this.ownerKey(sync)) || [...b.edited].some((o) => this.assignedTo(o) === sync)) return undefined;
    for (const o of this.syncs.get(sync)!.keys()) b.listedByDeleted.add(o);
    this.syncs.delete(sync);
    this.deleting.set(sync, this.inventory.get(sync) ?? new Set());
    this.inventory.delete(sync);
    b.deleted.add(sync);
    return { op: 'delete', sync };
  }

  private restart(raw: RawStep): Step | undefined {
    if (this.batch.restart) return undefined;
    this.batch.restart = true;
    return { op: 'restart', delayMs: raw.a % 400 };
  }

  /** An owned object leaves its sync's set while its owner labels are removed or changed, or prune is disabled. */
  private race(raw: RawStep, object: string): Step | undefined {
    const b = this.batch;
    const live = this.live.get(object);
    const sync = this.assignedTo(object);
    if (!live || !sync || PruneModel.ownerOf(live.labels) !== this.ownerKey(sync) || live.disabled) return undefined;
    if (b.edited.has(object) || b.moved.has(object) || b.deleted.has(sync)) return undefined;
    let edit: HandEdit;
    if (raw.b % 3 === 0) edit = this.strip(0);
    else if (raw.b % 3 === 1) edit = this.relabel(live, 0, raw.c);
    else edit = { labels: {}, disabled: true, what: 'prune disabled' };
    this.syncs.get(sync)!.delete(object);
    const edited = applyEdit(live, edit);
    this.racing.set(object, edited);
    b.changed.add(sync);
    this.markEdited(object, live, edited);
    b.moved.add(object);
    return { op: 'race', object, sync, edit };
  }

  private markEdited(object: string, before: LiveObject, after: LiveObject): void {
    this.batch.edited.add(object);
    this.batch.editedOwners.add(PruneModel.ownerOf(before.labels));
    this.batch.editedOwners.add(PruneModel.ownerOf(after.labels));
  }

  /** Whether `object` may be edited by hand in this batch: not moved, not met by a finalizer (see the header). */
  private editable(object: string, live: LiveObject): boolean {
    const b = this.batch;
    if (b.edited.has(object) || b.moved.has(object)) return false;
    const owner = PruneModel.ownerOf(live.labels);
    if ([...b.deleted].some((s) => this.ownerKey(s) === owner)) return false;
    // A sync being deleted may still apply its set (a resync) before its finalizer runs: an edit that makes
    // an object it lists adoptable would end either way.
    if (b.listedByDeleted.has(object)) return false;
    return ![...this.deleting.values()].some((inventory) => inventory.has(object));
  }

  /** All owner labels, or one of them, removed. */
  private strip(b: number): HandEdit {
    const which = [undefined, OWNER_KIND_LABEL, OWNER_NAMESPACE_LABEL, OWNER_NAME_LABEL][b % 4];
    if (!which) return { labels: { [OWNER_KIND_LABEL]: null, [OWNER_NAMESPACE_LABEL]: null, [OWNER_NAME_LABEL]: null }, what: 'owner labels removed' };
    return { labels: { [which]: null }, what: `${which} removed` };
  }

  /** The owner labels of the sync whose set lists the object put back by hand (none when no set lists it). */
  private putBack(object: string): HandEdit {
    const sync = this.assignedTo(object);
    if (!sync) return { ...this.strip(0), what: 'owner labels removed (no set lists it)' };
    return { labels: this.ownerLabels(sync), what: `owner labels put back (${sync})` };
  }

  /** The owner labels made to name another sync, another namespace or another kind. */
  private relabel(live: LiveObject, b: number, c: number): HandEdit {
    if (PruneModel.ownerOf(live.labels) === '') {
      const to = SYNC_NAMES[c % SYNC_NAMES.length]!;
      return { labels: this.ownerLabels(to), what: `labelled as owned by ${to}` };
    }
    if (b % 3 === 0) {
      const current = live.labels[OWNER_NAME_LABEL];
      const others = SYNC_NAMES.filter((s) => s !== current);
      const to = others[c % others.length]!;
      return { labels: { [OWNER_NAME_LABEL]: to }, what: `${OWNER_NAME_LABEL}=${to}` };
    }
    if (b % 3 === 1) return { labels: { [OWNER_NAMESPACE_LABEL]: ELSEWHERE }, what: `${OWNER_NAMESPACE_LABEL}=${ELSEWHERE}` };
    return { labels: { [OWNER_KIND_LABEL]: 'RemoteSync' }, what: `${OWNER_KIND_LABEL}=RemoteSync` };
  }

  /**
   * Where the operator should end: finalizers of deleted syncs and prunes
   * delete what the pruning sync still owns (by its labels) unless prune is
   * disabled; then each sync applies its set, adopting what nobody owns, and
   * reports a conflict for what another owns.
   */
  converge(): void {
    for (const [sync, inventory] of this.deleting) for (const o of inventory) this.prune(o, sync);
    for (const [sync, set] of this.syncs) for (const o of this.inventory.get(sync) ?? []) if (!set.has(o)) this.prune(o, sync);
    this.conflicted.clear();
    for (const [sync, set] of this.syncs) this.inventory.set(sync, this.apply(sync, set));
  }

  /** A prune by `sync` (a racing object is settled by what is seen). */
  private prune(object: string, sync: string): void {
    if (this.racing.has(object)) return;
    const live = this.live.get(object);
    if (live && PruneModel.ownerOf(live.labels) === this.ownerKey(sync) && !live.disabled) this.live.delete(object);
  }

  /** A sync applies its set: what it now owns (its inventory); a conflict for what another owns. */
  private apply(sync: string, set: Map<string, string>): Set<string> {
    const inventory = new Set<string>();
    for (const [o, data] of set) {
      const live = this.live.get(o);
      const owner = live ? PruneModel.ownerOf(live.labels) : '';
      if (owner !== '' && owner !== this.ownerKey(sync)) {
        this.conflicted.add(sync);
        continue;
      }
      this.live.set(o, { labels: { ...(live?.labels ?? {}), ...this.ownerLabels(sync) }, disabled: live?.disabled ?? false, data });
      inventory.add(o);
    }
    return inventory;
  }

  /** The expected objects (converge() first). */
  expectedObjects(): Map<string, Expected> {
    const out = new Map<string, Expected>();
    for (const [o, live] of this.live) if (!this.racing.has(o)) out.set(o, { object: live, mayBeGone: false });
    for (const [o, edited] of this.racing) out.set(o, { object: edited, mayBeGone: true });
    return out;
  }

  expectedSyncs(): Map<string, ExpectedSync> {
    return new Map([...this.syncs.keys()].map((s) => [s, { inventory: [...(this.inventory.get(s) ?? [])].sort(), conflict: this.conflicted.has(s) }]));
  }

  /** A race ended: what was seen (absent, or the edited object) becomes the model. */
  settleRaces(observed: Map<string, LiveObject>): void {
    for (const o of this.racing.keys()) {
      const seen = observed.get(o);
      if (seen) this.live.set(o, seen);
      else this.live.delete(o);
    }
    this.racing.clear();
  }
}

function newBatch(): Batch {
  return { edited: new Set(), editedOwners: new Set(), moved: new Set(), changed: new Set(), deleted: new Set(), listedByDeleted: new Set(), restart: false };
}

export function applyEdit(live: LiveObject, edit: HandEdit): LiveObject {
  const labels = { ...live.labels };
  for (const [k, v] of Object.entries(edit.labels)) {
    if (v === null) delete labels[k];
    else labels[k] = v;
  }
  return { labels, disabled: edit.disabled ?? live.disabled, data: live.data };
}

/** One line per step, for progress and failures. */
export function describeStep(step: Step): string {
  switch (step.op) {
    case 'assign':
      return `${step.object} -> ${step.sync ?? 'no sync'} (${step.data})`;
    case 'data':
      return `${step.object} in ${step.sync} = ${step.data}`;
    case 'edit':
      return `${step.object}: ${step.edit.what}`;
    case 'delete':
      return `delete ${step.sync}`;
    case 'restart':
      return `SIGKILL + restart after ${step.delayMs} ms`;
    case 'race':
      return `${step.object} leaves ${step.sync} while ${step.edit.what}`;
  }
}
