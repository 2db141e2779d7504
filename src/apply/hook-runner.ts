// Runs a phase of a chart's hooks against a cluster (docs/helm-hooks.md): the
// groups of equal weight in turn, each applied as the set is (server-side, by
// the apply engine, as the sync's owner) and waited for without blocking: a
// call does what can be done now and says what it waits for; the watch of a
// hook (it carries the owner labels) or the caller's requeue calls it again.
// Every step is recorded (`save`, status.hooks) before it is taken, so a
// restart carries on where it stopped rather than running a hook again.
import { HOOK_RUN_ANNOTATION } from '../api/marks.js';
import type { HooksStatus, InventoryEntry } from '../api/status.js';
import { getIfExists, type Requester } from '../kube/client.js';
import type { Discovery } from '../kube/discovery.js';
import { objectPath, type KubeObject } from '../kube/resources.js';
import { ApplyEngine, UNREACHABLE, type LiveLookup, type Owner } from './engine.js';
import { hookGroups, hookName, hookState, type HookGroup, type HookState } from './hook-plan.js';
import type { ChartHook, HookDeletePolicy, HookPhase } from './hooks.js';
import { inventoryOf, mergeInventories, objectId } from './inventory.js';
import { mapLimit } from './map-limit.js';

export interface HookRunOptions {
  client: Requester;
  discovery?: Discovery;
  owner: Owner;
  concurrency?: number;
  /** How long a group may take from when it was applied (the sync's `timeout`). */
  timeoutMs: number;
  /** Records `status.hooks` (the sync's status): called before the step it records is taken. */
  save: (record: HooksStatus) => Promise<void>;
  now?: () => number;
  /** How long the deletion of a hook to be created again is waited for within one call (then: waiting). */
  deletionWaitMs?: number;
}

export type HookOutcome =
  /** Every group succeeded; `record` is in the next phase (Set after pre, Done after post). */
  | { outcome: 'done'; record: HooksStatus }
  /** A group is running: `hooks` are what it waits for (watched by the caller). */
  | { outcome: 'waiting'; record: HooksStatus; message: string; hooks: ChartHook[] }
  /** A hook failed (or timed out): `record.failed` says which and why. */
  | { outcome: 'failed'; record: HooksStatus; message: string };

/** One hook of the running group, as read (and applied) now. */
interface HookRead {
  hook: ChartHook;
  state: HookState;
}

const PHASE_OF = { pre: 'Pre', post: 'Post' } as const;
const NEXT_OF = { pre: 'Set', post: 'Done' } as const;
const EVENTS_OF = { pre: 'pre-install/pre-upgrade', post: 'post-install/post-upgrade' } as const;

/**
 * Takes the hooks of `phase` as far as they go now, from `record` (the
 * sync's status.hooks for this revision). A group not started yet is
 * recorded, its hooks with `before-hook-creation` deleted (and their
 * deletion waited for, as Helm does), then applied; a group running is
 * read. A group that succeeded lets the next start (its `hook-succeeded`
 * hooks deleted once that is recorded); one that failed stops the phase
 * (its `hook-failed` hooks deleted, and its succeeded `hook-succeeded` ones).
 */
export async function runHookPhase(phase: HookPhase, hooks: readonly ChartHook[], record: HooksStatus, opts: HookRunOptions): Promise<HookOutcome> {
  const runner = new PhaseRun(phase, record, opts);
  const groups = hookGroups(hooks, phase);
  for (const group of groups.slice(runner.startIndex(groups))) {
    const reads = await runner.runGroup(group);
    if ('waiting' in reads) return runner.waiting(reads.waiting, group.hooks);
    const failure = runner.failureOf(reads);
    if (failure) return runner.fail(failure, reads);
    const running = reads.filter((r) => r.state.status !== 'Succeeded');
    if (running.length > 0) return runner.waiting(`waiting for ${describe(running[0]!)}${more(running)}`, group.hooks);
    runner.deleteLater(reads.filter((r) => has(r.hook, 'hook-succeeded')).map((r) => r.hook));
  }
  return runner.finish();
}

/** One call's run of a phase: the record as it goes, and the deletions it owes once the next step is recorded. */
class PhaseRun {
  private readonly engine: ApplyEngine;
  private readonly now: () => number;
  private owed: ChartHook[] = [];
  private readonly deleted = new Set<string>();

  constructor(
    private readonly phase: HookPhase,
    private record: HooksStatus,
    private readonly opts: HookRunOptions,
  ) {
    this.engine = new ApplyEngine(opts.client, opts.discovery);
    this.now = opts.now ?? Date.now;
    if (record.phase !== PHASE_OF[phase]) this.record = withoutRun({ ...record, phase: PHASE_OF[phase] });
  }

  /** The group to go on with: the one recorded as running, else the first heavier than it (a restart), else the first. */
  startIndex(groups: HookGroup[]): number {
    const weight = this.record.weight;
    if (weight === undefined) return 0;
    const at = groups.findIndex((g) => g.weight >= weight);
    return at < 0 ? groups.length : at;
  }

  /** The group read, started first if it is not the one running (recorded, old copies deleted, applied). */
  async runGroup(group: HookGroup): Promise<HookRead[] | { waiting: string }> {
    if (this.record.weight !== group.weight || this.record.since === undefined) {
      const entries = mergeInventories(this.entries(), inventoryOf(group.hooks.map((h) => h.object)));
      await this.save({ ...this.record, weight: group.weight, since: new Date(this.now()).toISOString(), entries });
    }
    const run = this.record.since!;
    const lives = await mapLimit(group.hooks, this.opts.concurrency ?? 16, (h) => this.read(h.object));
    const reads = group.hooks.map((hook, i) => ({ hook, live: lives[i], state: hookState(lives[i], run) }));
    const missing = reads.filter((r) => r.state.status === 'Missing');
    if (missing.length === 0) return reads;
    const stale = missing.filter((r) => r.live && has(r.hook, 'before-hook-creation'));
    const left = await this.deleteAndWait(stale.map((r) => r.hook));
    if (left.length > 0) return { waiting: `waiting for ${left.map(hookName).join(', ')} to be deleted before it is created again` };
    const gone = new Set(stale.map((r) => objectId(r.hook.object)));
    const applied = await this.apply(missing.map((r) => ({ hook: r.hook, live: gone.has(objectId(r.hook.object)) ? undefined : r.live })), run);
    return reads.map((r) => applied.get(r.hook) ?? r);
  }

  /** The first hook that failed, or that is still running past the timeout. */
  failureOf(reads: HookRead[]): string | undefined {
    const failed = reads.find((r) => r.state.status === 'Failed');
    if (failed) return `${EVENTS_OF[this.phase]} hook ${hookName(failed.hook)} failed: ${failed.state.message}`;
    const waited = this.now() - Date.parse(this.record.since ?? '');
    const running = reads.find((r) => r.state.status !== 'Succeeded');
    if (!running || waited < this.opts.timeoutMs) return undefined;
    return `${EVENTS_OF[this.phase]} hook ${hookName(running.hook)} did not succeed within ${Math.round(this.opts.timeoutMs / 1000)}s: ${running.state.message}`;
  }

  async fail(message: string, reads: HookRead[]): Promise<HookOutcome> {
    await this.save({ ...this.record, failed: message });
    const succeeded = reads.filter((r) => r.state.status === 'Succeeded' && has(r.hook, 'hook-succeeded'));
    const failed = reads.filter((r) => r.state.status !== 'Succeeded' && has(r.hook, 'hook-failed'));
    await this.deleteOwed([...succeeded, ...failed].map((r) => r.hook));
    return { outcome: 'failed', record: this.record, message };
  }

  async waiting(message: string, hooks: ChartHook[]): Promise<HookOutcome> {
    await this.deleteOwed([]);
    return { outcome: 'waiting', record: this.record, message, hooks };
  }

  deleteLater(hooks: ChartHook[]): void {
    this.owed.push(...hooks);
  }

  async finish(): Promise<HookOutcome> {
    await this.save(withoutRun({ ...this.record, phase: NEXT_OF[this.phase] }));
    await this.deleteOwed([]);
    return { outcome: 'done', record: this.record };
  }

  private async save(record: HooksStatus): Promise<void> {
    this.record = { ...record, entries: this.entries(record.entries) };
    await this.opts.save(this.record);
    // What it owed is deleted once the step after it is recorded: a restart meanwhile does not run it again.
    await this.deleteOwed([]);
  }

  /** The hooks that may still be there: what was recorded, less what this run deleted. */
  private entries(entries: InventoryEntry[] = this.record.entries): InventoryEntry[] {
    return entries.filter((e) => !this.deleted.has(e.id));
  }

  private async deleteOwed(more: ChartHook[]): Promise<void> {
    const hooks = [...this.owed.splice(0), ...more];
    if (hooks.length === 0) return;
    const results = await this.engine.prune(inventoryOf(hooks.map((h) => h.object)), this.opts.owner, this.opts.concurrency);
    for (const r of results) if (r.action !== 'failed') this.deleted.add(r.id);
  }

  /**
   * Deletes the old copies of hooks about to be created again, and waits for them to go: the ones still there
   * after `deletionWaitMs`. One that is not the sync's own is left (its apply then says whose it is).
   */
  private async deleteAndWait(hooks: ChartHook[]): Promise<ChartHook[]> {
    if (hooks.length === 0) return [];
    const results = await this.engine.prune(inventoryOf(hooks.map((h) => h.object)), this.opts.owner, this.opts.concurrency);
    const refused = results.find((r) => r.action === 'failed');
    if (refused) throw new Error(`deleting the old copy of a hook before it is created again: ${refused.message ?? ''}`);
    const deleting = new Set(results.filter((r) => r.action === 'deleted').map((r) => r.id));
    const deadline = this.now() + (this.opts.deletionWaitMs ?? 10_000);
    let left = hooks.filter((h) => deleting.has(objectId(h.object)));
    for (;;) {
      const lives = await Promise.all(left.map((h) => this.read(h.object)));
      left = left.filter((_, i) => lives[i] !== undefined);
      if (left.length === 0 || this.now() >= deadline) return left;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Applies hooks (marked with this run) as the set is applied; each one's state from what the server returned. */
  private async apply(hooks: { hook: ChartHook; live: KubeObject | undefined }[], run: string): Promise<Map<ChartHook, HookRead>> {
    const byId = new Map(hooks.map((h) => [objectId(h.hook.object), h]));
    const objects = hooks.map(({ hook }) => marked(hook.object, run));
    const live = { lookup: (obj: KubeObject): LiveLookup => ({ known: true, object: byId.get(objectId(obj))?.live }) };
    const results = await this.engine.applyStaged(objects, { owner: this.opts.owner, force: false, concurrency: this.opts.concurrency, live });
    const reads = new Map<ChartHook, HookRead>();
    for (const r of results) {
      // A cluster that did not answer, or asked us to come back later, is not the hook's failure: the reconcile is tried again.
      if (r.action === 'failed' && (r.transient || r.reason === UNREACHABLE)) throw new Error(`applying a hook: ${r.message ?? ''}`);
      const hook = byId.get(r.id)!.hook;
      const state: HookState = r.object && r.action !== 'failed' && r.action !== 'conflict' ? hookState(r.object, run) : { status: 'Failed', message: `not applied: ${r.message ?? r.action}` };
      reads.set(hook, { hook, state });
    }
    return reads;
  }

  private async read(obj: KubeObject): Promise<KubeObject | undefined> {
    const info = await this.engine.discovery.resolve(obj.apiVersion, obj.kind);
    return getIfExists<KubeObject>(this.opts.client, objectPath(info, obj.metadata.name ?? '', obj.metadata.namespace));
  }
}

/** A record with no group running (a phase not started, or over). */
function withoutRun({ weight: _w, since: _s, ...rest }: HooksStatus): HooksStatus {
  return rest;
}

/** Whether a hook has a delete policy (`before-hook-creation` when it names none, as Helm). */
function has(hook: ChartHook, policy: HookDeletePolicy): boolean {
  return hook.deletePolicies.length === 0 ? policy === 'before-hook-creation' : hook.deletePolicies.includes(policy);
}

/** The hook as applied: marked with the run of its group (hook-plan.ts hookState). */
function marked(obj: KubeObject, run: string): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, annotations: { ...obj.metadata.annotations, [HOOK_RUN_ANNOTATION]: run } } };
}

function describe({ hook, state }: HookRead): string {
  return `hook ${hookName(hook)}: ${state.message}`;
}

function more(reads: HookRead[]): string {
  return reads.length > 1 ? ` (and ${reads.length - 1} more)` : '';
}
