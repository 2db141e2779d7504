// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// Prune safety as a property (issue 15, item 3): random seeded sequences of
// edits to inline sources (objects added, removed, changed, moved between
// syncs), hand changes of the owner labels, the prune-disabled annotation
// added and removed, syncs deleted and the operator SIGKILLed and started
// again, against a real cluster (the own lane's) and a real operator process.
//
// The property, from the API server's audit log and a watch: every DELETE of a
// ConfigMap that the operator sent and that succeeded removed an object that,
// at that moment (its last state, as the watch's DELETED event has it),
// carried the owner labels of the sync that deleted it and no
// `syncprims.dev/prune: disabled`. Each sync applies and prunes as a service
// account of its own (`sa-<sync>`), so the audit log names the deleting sync
// (impersonatedUser), even across a SIGKILL. Besides, after each batch of
// steps the namespace converges to what the model (test/support/prune-model.ts)
// predicts: the objects, their owner labels, and each sync's inventory and
// Ready condition.
//
// `make test` runs the regression seeds and two fresh programs of 12 steps
// (about 20-30 s); `SOAK=1` (make soak) runs PRUNE_STEPS (default 10,000) steps
// in programs of PRUNE_PROGRAM_STEPS (500), batches of up to PRUNE_MAX_BATCH
// steps (10), seeds from PRUNE_SEED or the clock, with a progress line every
// 10 batches (PRUNE_TRACE=1: every batch and how long it took to converge).
// A failing seed is printed with the command that replays it and added to
// test/fixtures/prune-seeds.json (only the steps up to the failing batch),
// whose seeds run first every time. A race's outcome depends on timing, so a
// seed that failed by one fails again only when the timing meets again.
import { readFileSync } from 'node:fs';
import { open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { PRUNE_ANNOTATION, PRUNE_DISABLED, RECONCILE_REQUESTED_AT_ANNOTATION } from '../../src/api/marks.js';
import { objectId } from '../../src/apply/inventory.js';
import type { KubeClient } from '../../src/kube/client.js';
import { ApiError } from '../../src/kube/errors.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { watchEvents } from '../../src/kube/watch-stream.js';
import type { AuditEvent } from '../support/audit.js';
import { closeClients, clusterClient, LOCAL, OWN_LANE_CLUSTER, ROOT } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { releaseSyncFinalizers, TEST_LABEL } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { describeStep, OBJECT_NAMES, program, PruneModel, SYNC_NAMES, type ExpectedSync, type HandEdit, type LiveObject, type Step } from '../support/prune-model.js';
import { applySync, readyOf, syncPath, type SyncObject } from '../support/syncs.js';

const CLUSTER = OWN_LANE_CLUSTER;
const OPERATOR = 'syncprims-operator';
const SEEDS_FILE = path.join(ROOT, 'test', 'fixtures', 'prune-seeds.json');
const SOAK = process.env.SOAK === '1';
/** Steps per program in `make test`; in total with SOAK=1. */
const STEPS = Number(process.env.PRUNE_STEPS ?? (SOAK ? 10_000 : 12));
/** With SOAK=1, the steps are run in programs of this many (each in a fresh namespace, with a seed of its own). */
const STEPS_PER_SOAK_PROGRAM = Number(process.env.PRUNE_PROGRAM_STEPS ?? 500);
/** The largest batch: steps made together before one convergence wait. */
const MAX_BATCH = Number(process.env.PRUNE_MAX_BATCH ?? (SOAK ? 10 : 4));
/** Short, so that a sync that met a conflict an instant before it cleared tries again soon (it is not woken for another's object). */
const INTERVAL = '1s';
const CONVERGE_TIMEOUT_MS = 90_000;

interface SeedCase {
  seed: number;
  steps: number;
  maxBatch?: number;
  note?: string;
}

/** What a program did, for the report (docs/RELIABILITY.md). */
interface Figures {
  steps: number;
  batches: number;
  byOp: Record<string, number>;
  deletesChecked: number;
  refusedDeletes: number;
  violations: number;
}

const totals: Figures = { steps: 0, batches: 0, byOp: {}, deletesChecked: 0, refusedDeletes: 0, violations: 0 };

/** The fresh programs of `make test`: seeds whose first 12 steps hold, between them, every kind of step (and a restart each). */
const MAKE_TEST_SEEDS = [15_022, 15_028];

/** The regression seeds (read when the tests are collected, so each is a test of its own). */
function readSeeds(): SeedCase[] {
  return (JSON.parse(readFileSync(SEEDS_FILE, 'utf8')) as { seeds: SeedCase[] }).seeds;
}

/** Keeps a failing seed as a regression case (once), with the steps up to the failing batch. */
async function keepSeed(c: SeedCase, message: string): Promise<void> {
  const file = JSON.parse(await readFile(SEEDS_FILE, 'utf8').catch(() => '{"seeds":[]}')) as { seeds: SeedCase[] };
  if (file.seeds.some((s) => s.seed === c.seed && (s.maxBatch ?? MAX_BATCH) === (c.maxBatch ?? MAX_BATCH))) return;
  const what = message.split('\n').slice(0, 2).join(' ').slice(0, 400);
  file.seeds.push({ seed: c.seed, steps: c.steps, maxBatch: c.maxBatch ?? MAX_BATCH, note: `${new Date().toISOString()}: ${what}` });
  await writeFile(SEEDS_FILE, `${JSON.stringify(file, null, 2)}\n`);
}

function progress(line: string): void {
  process.stderr.write(`prune-property: ${line}\n`);
}

/**
 * The operator's DELETEs of ConfigMaps in one namespace, read from the
 * cluster's audit log as it grows (from where it was when this started; a
 * rotation of the log is followed into the rotated file).
 */
class AuditTail {
  private offset = 0;
  private ino = 0;
  private rest = '';
  readonly deletes: AuditEvent[] = [];

  constructor(
    private readonly cluster: string,
    private readonly namespace: string,
  ) {}

  private get file(): string {
    return path.join(LOCAL, `${this.cluster}.audit.log`);
  }

  async start(): Promise<void> {
    const s = await stat(this.file);
    this.offset = s.size;
    this.ino = s.ino;
  }

  async read(): Promise<void> {
    const s = await stat(this.file);
    if (s.ino !== this.ino) {
      // Rotated: the rest of the old file is the newest rotated one.
      const rotated = (await readdir(LOCAL)).filter((f) => f.startsWith(`${this.cluster}.audit-`) && f.endsWith('.log'));
      const newest = (await Promise.all(rotated.map(async (f) => ({ f, m: (await stat(path.join(LOCAL, f))).mtimeMs })))).sort((a, b) => b.m - a.m)[0];
      if (newest) this.take(await readFrom(path.join(LOCAL, newest.f), this.offset));
      this.ino = s.ino;
      this.offset = 0;
      this.rest = '';
    }
    const text = await readFrom(this.file, this.offset);
    this.offset += Buffer.byteLength(text);
    this.take(text);
  }

  private take(text: string): void {
    const lines = (this.rest + text).split('\n');
    this.rest = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('"delete"') || !line.includes(this.namespace)) continue;
      const e = JSON.parse(line) as AuditEvent;
      if (e.verb !== 'delete' || e.objectRef?.resource !== 'configmaps' || e.objectRef.namespace !== this.namespace) continue;
      if (!(e.userAgent ?? '').startsWith(OPERATOR)) continue;
      this.deletes.push(e);
    }
  }
}

async function readFrom(file: string, offset: number): Promise<string> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    if (size <= offset) return '';
    const buf = Buffer.alloc(size - offset);
    const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
    // Up to the last full line: a line being written is read next time.
    const text = buf.subarray(0, bytesRead).toString('utf8');
    return text.slice(0, text.lastIndexOf('\n') + 1);
  } finally {
    await fh.close();
  }
}

/** Every ConfigMap deletion in a namespace, with the object's last state, from a watch kept open (resumed where it broke). */
class DeletionWatch {
  readonly deletions: KubeObject[] = [];
  private rv = '';
  private stopped = false;
  private res: Readable | undefined;
  private failure: string | undefined;
  private done: Promise<void> | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
  ) {}

  private get path(): string {
    return `/api/v1/namespaces/${this.namespace}/configmaps`;
  }

  async start(): Promise<void> {
    const list = await this.client.request<{ metadata: { resourceVersion: string } }>({ path: this.path });
    this.rv = list.metadata.resourceVersion;
    this.done = this.loop();
  }

  /** A watch that could not be resumed loses deletions: the property cannot be checked then. */
  check(): void {
    if (this.failure) throw new Error(`the watch of ${this.namespace} broke: ${this.failure}`);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        this.res = await this.client.stream({ path: this.path, query: { watch: 1, resourceVersion: this.rv, allowWatchBookmarks: true }, idleTimeoutMs: 120_000 });
        for await (const e of watchEvents<KubeObject>(this.res)) {
          if (e.type === 'ERROR') {
            this.failure = JSON.stringify(e.object);
            return;
          }
          this.rv = e.object.metadata.resourceVersion ?? this.rv;
          if (e.type === 'DELETED') this.deletions.push(e.object);
        }
      } catch (err) {
        if (err instanceof ApiError && err.status === 410) {
          this.failure = `resourceVersion ${this.rv} expired (410): deletions may have been missed`;
          return;
        }
        if (!this.stopped) await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.res?.destroy();
    await this.done;
  }
}

/** A hand edit as a merge patch of the object's metadata. */
function patchOf(edit: HandEdit): Record<string, unknown> {
  const metadata: Record<string, unknown> = { labels: edit.labels };
  if (edit.disabled !== undefined) metadata.annotations = { [PRUNE_ANNOTATION]: edit.disabled ? PRUNE_DISABLED : null };
  return { metadata };
}

function observe(cm: KubeObject): LiveObject {
  const labels = Object.fromEntries(Object.entries(cm.metadata.labels ?? {}).filter(([k]) => k.startsWith('syncprims.dev/')));
  return { labels, disabled: cm.metadata.annotations?.[PRUNE_ANNOTATION] === PRUNE_DISABLED, data: (cm as { data?: Record<string, string> }).data?.v ?? '' };
}

const same = (a: LiveObject, b: LiveObject): boolean => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
const sorted = (o: LiveObject): unknown => ({ ...o, labels: Object.fromEntries(Object.entries(o.labels).sort()) });

/** One seeded program in a namespace of its own, with an operator of its own. */
class Program {
  private readonly model: PruneModel;
  private readonly audit: AuditTail;
  private readonly watch: DeletionWatch;
  private op: OperatorProcess | undefined;
  private readonly history: string[] = [];
  /** How many of the audit log's successful DELETEs are checked already. */
  private checkedAudit = 0;
  /** The steps up to the end of the batch under way: a failure replays with this many. */
  attempted = 0;
  readonly figures: Figures = { steps: 0, batches: 0, byOp: {}, deletesChecked: 0, refusedDeletes: 0, violations: 0 };

  constructor(
    private readonly client: KubeClient,
    private readonly ns: string,
    private readonly c: SeedCase,
  ) {
    this.model = new PruneModel(ns);
    this.audit = new AuditTail(CLUSTER, ns);
    this.watch = new DeletionWatch(client, ns);
  }

  async setUp(): Promise<void> {
    await this.client.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: this.ns, labels: { [TEST_LABEL]: 'true' } } } });
    const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${this.ns}`;
    await this.client.request({
      method: 'POST',
      path: `${rbac}/roles`,
      body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'configmaps' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }] },
    });
    await this.client.request({
      method: 'POST',
      path: `${rbac}/rolebindings`,
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'configmaps' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'configmaps' },
        subjects: SYNC_NAMES.map((s) => ({ kind: 'ServiceAccount', name: account(s), namespace: this.ns })),
      },
    });
    await this.audit.start();
    await this.watch.start();
    this.op = await OperatorProcess.start(CLUSTER, ['--namespace', this.ns]);
  }

  async tearDown(): Promise<void> {
    await this.watch.stop();
    await this.op?.stop('SIGTERM');
    await this.client.request({ method: 'DELETE', path: `/api/v1/namespaces/${this.ns}` }).catch(() => undefined);
    await releaseSyncFinalizers(this.client, this.ns);
  }

  async run(): Promise<void> {
    const maxBatch = this.c.maxBatch ?? MAX_BATCH;
    const stream = program(this.c.seed);
    // Raw steps that fit nothing in the model's state are passed over; give up after 100 in a row.
    for (let batch = 0, idle = 0; this.figures.steps < this.c.steps && idle < 100; batch++) {
      this.model.startBatch();
      const first = stream.next().value!;
      const size = Math.min(1 + (first.size % maxBatch), this.c.steps - this.figures.steps);
      const steps: Step[] = [];
      for (let raw = first.raw; ; raw = stream.next().value!.raw) {
        const step = this.model.interpret(raw);
        if (step) steps.push(step);
        idle = step ? 0 : idle + 1;
        if (steps.length === size || idle >= 100) break;
      }
      if (steps.length === 0) continue;
      this.model.converge();
      const token = `b${batch}`;
      this.history.push(`batch ${batch}: ${steps.map(describeStep).join('; ')}`);
      this.attempted = this.figures.steps + steps.length;
      const started = Date.now();
      await this.execute(steps, token);
      await this.converged(token);
      if (process.env.PRUNE_TRACE) progress(`batch ${batch} converged in ${Date.now() - started} ms: ${steps.map(describeStep).join('; ')}`);
      await this.checkDeletions();
      this.figures.steps += steps.length;
      this.figures.batches += 1;
      for (const s of steps) this.figures.byOp[s.op] = (this.figures.byOp[s.op] ?? 0) + 1;
      if (SOAK && batch % 10 === 0) progress(this.summary());
    }
    progress(this.summary());
    expect(this.figures.steps).toBe(this.c.steps);
  }

  /** Hand edits first, then the syncs' specs (with the races' edits beside them), deletions and a restart, at once. */
  private async execute(steps: Step[], token: string): Promise<void> {
    for (const s of steps) if (s.op === 'edit') await this.editObject(s.object, s.edit, false);
    const writes: Promise<unknown>[] = [];
    for (const sync of this.model.syncs.keys()) writes.push(applySync(this.client, this.ns, sync, this.specOf(sync), { annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: token } }));
    for (const s of steps) {
      if (s.op === 'delete') writes.push(this.client.request({ method: 'DELETE', path: syncPath(this.ns, s.sync) }));
      // The edit lands while the operator prunes the object (or just before, or after): either end is right.
      if (s.op === 'race') writes.push(sleep(Math.floor(Math.random() * 60)).then(() => this.editObject(s.object, s.edit, true)));
      if (s.op === 'restart') writes.push(sleep(s.delayMs).then(() => this.restart()));
    }
    await Promise.all(writes);
  }

  private async editObject(name: string, edit: HandEdit, mayBeGone: boolean): Promise<void> {
    await this.client
      .request({ method: 'PATCH', path: `/api/v1/namespaces/${this.ns}/configmaps/${name}`, contentType: 'application/merge-patch+json', query: { fieldManager: 'hand' }, body: patchOf(edit) })
      .catch((err: unknown) => {
        if (!(mayBeGone && (err as { notFound?: boolean }).notFound)) throw err;
      });
  }

  private async restart(): Promise<void> {
    const t0 = Date.now();
    await this.op?.stop('SIGKILL');
    this.op = await OperatorProcess.start(CLUSTER, ['--namespace', this.ns]);
    if (process.env.PRUNE_TRACE) progress(`restarted in ${Date.now() - t0} ms`);
  }

  private specOf(sync: string): Record<string, unknown> {
    const set = [...(this.model.syncs.get(sync) ?? new Map<string, string>())].sort(([a], [b]) => a.localeCompare(b));
    return {
      source: { inline: set.map(([name, data]) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: this.ns }, data: { v: data } })) },
      serviceAccountName: account(sync),
      interval: INTERVAL,
    };
  }

  /** Waits until the syncs and objects are as the model says (a timeout names what differs). */
  private async converged(token: string): Promise<void> {
    const observed = await eventually(
      `the namespace to converge to the model (seed ${this.c.seed})`,
      async () => {
        const problems = await this.differences(token);
        if (typeof problems === 'string') throw new Error(problems);
        return problems;
      },
      CONVERGE_TIMEOUT_MS,
      100,
    ).catch(async (err: unknown) => {
      // Who deleted what is told by the property check, which may also fail first.
      await this.checkDeletions();
      throw new Error(`${String(err)}\n${this.story()}`);
    });
    this.model.settleRaces(observed);
  }

  /** What differs from the model, as text; or the objects seen when nothing does. */
  private async differences(token: string): Promise<string | Map<string, LiveObject>> {
    const syncs = (await this.client.request<{ items: SyncObject[] }>({ path: syncPath(this.ns) })).items;
    const cms = (await this.client.request<{ items: KubeObject[] }>({ path: `/api/v1/namespaces/${this.ns}/configmaps` })).items;
    const live = new Map(cms.filter((c) => OBJECT_NAMES.includes(c.metadata.name!)).map((c) => [c.metadata.name!, observe(c)]));
    const problems = [...this.syncDifferences(syncs, token), ...this.objectDifferences(live)];
    return problems.length > 0 ? problems.join('\n') : live;
  }

  /** Each sync reconciled since the batch, Ready (or in conflict) as predicted, with the predicted inventory; deleted ones gone. */
  private syncDifferences(list: SyncObject[], token: string): string[] {
    const syncs = new Map(list.map((s) => [s.metadata.name!, s]));
    const problems = [...this.model.expectedSyncs()].flatMap(([name, want]) => this.syncDifference(name, want, syncs.get(name), token));
    for (const name of syncs.keys()) if (!this.model.syncs.has(name)) problems.push(`${name}: should be gone`);
    return problems;
  }

  private syncDifference(name: string, want: ExpectedSync, s: SyncObject | undefined, token: string): string[] {
    if (!s || s.metadata.deletionTimestamp) return [`${name}: ${s ? 'being deleted' : 'missing'}`];
    const problems: string[] = [];
    const st = s.status ?? {};
    const ready = readyOf(s) ?? { status: 'none', reason: 'none', message: '' };
    const [status, reason] = want.conflict ? ['False', 'OwnershipConflict'] : ['True', 'Succeeded'];
    if (st.observedGeneration !== s.metadata.generation || st.lastHandledReconcileAt !== token) problems.push(`${name}: not reconciled since the batch`);
    else if (ready.status !== status || ready.reason !== reason) problems.push(`${name}: Ready=${ready.status}/${ready.reason} (${ready.message}), want ${status}/${reason}`);
    const inventory = (st.inventory?.entries ?? []).map((e) => e.id).sort();
    const wantInventory = want.inventory.map((o) => objectId({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: o, namespace: this.ns } })).sort();
    if (JSON.stringify(inventory) !== JSON.stringify(wantInventory)) problems.push(`${name}: inventory ${JSON.stringify(inventory)}, want ${JSON.stringify(wantInventory)}`);
    return problems;
  }

  /** The objects present, their owner labels, prune annotation and data, as predicted (a racing one may also be gone). */
  private objectDifferences(live: Map<string, LiveObject>): string[] {
    const problems: string[] = [];
    const expected = this.model.expectedObjects();
    for (const name of OBJECT_NAMES) {
      const want = expected.get(name);
      const got = live.get(name);
      if (!want && got) problems.push(`ConfigMap ${name}: present (${JSON.stringify(got)}), want absent`);
      else if (want && !got && !want.mayBeGone) problems.push(`ConfigMap ${name}: absent, want ${JSON.stringify(want.object)}`);
      else if (want && got && !same(want.object, got)) problems.push(`ConfigMap ${name}: ${JSON.stringify(got)}, want ${JSON.stringify(want.object)}`);
    }
    return problems;
  }

  /**
   * The property: each DELETE of the operator that succeeded removed an
   * object carrying the owner labels of the deleting sync and no prune:
   * disabled. Audit and watch are matched per object name, in order; every
   * deletion the watch saw is one of the operator's (the test deletes none).
   */
  private async checkDeletions(): Promise<void> {
    this.watch.check();
    await eventually(`the audit log and the watch to agree on the deletions (seed ${this.c.seed})`, async () => {
      await this.audit.read();
      return this.audit.deletes.filter(succeeded).length === this.watch.deletions.length ? true : undefined;
    }, 30_000).catch((err: unknown) => {
      throw new Error(`${String(err)}: audit ${this.audit.deletes.filter(succeeded).map((e) => e.objectRef?.name).join(',')} watch ${this.watch.deletions.map((d) => d.metadata.name).join(',')}\n${this.story()}`);
    });
    const deletes = this.audit.deletes.filter(succeeded);
    const byName = new Map<string, KubeObject[]>();
    for (const d of this.watch.deletions) byName.set(d.metadata.name!, [...(byName.get(d.metadata.name!) ?? []), d]);
    const seen = new Map<string, number>();
    const violations: string[] = [];
    for (const [i, e] of deletes.entries()) {
      const name = e.objectRef?.name ?? '';
      const n = seen.get(name) ?? 0;
      seen.set(name, n + 1);
      if (i >= this.checkedAudit) violations.push(...this.judge(e, byName.get(name)?.[n]));
    }
    this.figures.deletesChecked += deletes.length - this.checkedAudit;
    this.figures.refusedDeletes = this.audit.deletes.length - deletes.length;
    this.checkedAudit = deletes.length;
    this.figures.violations += violations.length;
    if (violations.length > 0) throw new Error(`prune safety violated:\n${violations.join('\n')}\n${this.story()}`);
  }

  /** What is wrong with one deletion: `last` is the object's last state (the watch's DELETED event). */
  private judge(e: AuditEvent, last: KubeObject | undefined): string[] {
    const name = e.objectRef?.name ?? '';
    const at = e.requestReceivedTimestamp;
    const deleter = /^system:serviceaccount:[^:]+:sa-(.+)$/.exec(e.impersonatedUser?.username ?? '')?.[1];
    if (!last) return [`DELETE ${name} at ${at}: no deletion of it in the watch`];
    if (!deleter) return [`DELETE ${name} at ${at} not made as a sync's service account (${e.impersonatedUser?.username ?? e.user.username})`];
    const problems: string[] = [];
    const { labels, disabled } = observe(last);
    const owner = PruneModel.ownerOf(labels);
    if (owner !== this.model.ownerKey(deleter)) problems.push(`${deleter} deleted ${name} owned by '${owner}' (labels ${JSON.stringify(labels)}) at ${at}`);
    if (disabled) problems.push(`${deleter} deleted ${name} carrying ${PRUNE_ANNOTATION}: ${PRUNE_DISABLED} at ${at}`);
    return problems;
  }

  private summary(): string {
    const ops = Object.entries(this.figures.byOp).map(([op, n]) => `${n} ${op}`).join(', ');
    return `seed ${this.c.seed}: ${this.figures.steps}/${this.c.steps} steps in ${this.figures.batches} batches (${ops}), ${this.figures.deletesChecked} deletions checked`;
  }

  private story(): string {
    return `seed ${this.c.seed}, steps ${this.figures.steps + 1}-${this.attempted}, batches of at most ${this.c.maxBatch ?? MAX_BATCH}:\n${this.history.slice(-12).join('\n')}`;
  }
}

const account = (sync: string): string => `sa-${sync}`;
const succeeded = (e: AuditEvent): boolean => (e.responseStatus?.code ?? 0) >= 200 && (e.responseStatus?.code ?? 0) < 300;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The programs of this run: regression seeds first, then new ones. */
function programs(): SeedCase[] {
  const given = process.env.PRUNE_SEED ? Number(process.env.PRUNE_SEED) : undefined;
  if (!SOAK) return given !== undefined ? [{ seed: given, steps: STEPS, maxBatch: MAX_BATCH }] : MAKE_TEST_SEEDS.map((seed) => ({ seed, steps: STEPS, maxBatch: MAX_BATCH }));
  const base = given ?? Date.now() % 1_000_000_000;
  const n = Math.ceil(STEPS / STEPS_PER_SOAK_PROGRAM);
  return Array.from({ length: n }, (_, i) => ({ seed: base + i, steps: Math.min(STEPS_PER_SOAK_PROGRAM, STEPS - i * STEPS_PER_SOAK_PROGRAM), maxBatch: MAX_BATCH }));
}

describe('prune safety (property, seeded)', () => {
  let client: KubeClient;
  beforeAll(async () => {
    client = await clusterClient(CLUSTER);
    await installCrds(CLUSTER);
  });
  afterAll(async () => {
    const ops = Object.entries(totals.byOp).map(([op, n]) => `${n} ${op}`).join(', ');
    progress(`${totals.steps} steps in ${totals.batches} batches (${ops}); ${totals.deletesChecked} deletions checked, ${totals.refusedDeletes} refused by a precondition; ${totals.violations} violations`);
    await closeClients();
  });

  const regressions = readSeeds();
  const cases = [...regressions.map((c) => ({ ...c, regression: true })), ...programs().map((c) => ({ ...c, regression: false }))];
  for (const c of cases) {
    test(
      `${c.regression ? 'regression ' : ''}seed ${c.seed}: ${c.steps} steps; no wrong deletion, converges to the model`,
      async () => {
        const ns = `prune-${c.seed}-${Math.random().toString(16).slice(2, 6)}`;
        const run = new Program(client, ns, c);
        try {
          await run.setUp();
          await run.run();
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          const steps = run.attempted || c.steps;
          progress(`FAILED seed ${c.seed} at step ${steps} (batches of at most ${c.maxBatch ?? MAX_BATCH}); replay: PRUNE_SEED=${c.seed} PRUNE_STEPS=${steps} PRUNE_MAX_BATCH=${c.maxBatch ?? MAX_BATCH}\n${message}`);
          if (!c.regression) await keepSeed({ seed: c.seed, steps, maxBatch: c.maxBatch }, message);
          throw err;
        } finally {
          for (const [op, n] of Object.entries(run.figures.byOp)) totals.byOp[op] = (totals.byOp[op] ?? 0) + n;
          totals.steps += run.figures.steps;
          totals.batches += run.figures.batches;
          totals.deletesChecked += run.figures.deletesChecked;
          totals.refusedDeletes += run.figures.refusedDeletes;
          totals.violations += run.figures.violations;
          await run.tearDown();
        }
      },
      c.steps * 3_000 + 120_000,
    );
  }
});
