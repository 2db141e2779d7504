// A chart's hooks on the real API server (docs/helm-hooks.md): the hook phase
// runner (apply/hook-runner.ts) and the pipeline's hook stages
// (controllers/sync-hooks.ts) given ChartHooks directly, as the chart render
// will give them, applied to mgmt as a Sync's hooks. No job controller or
// kubelet runs here: the test writes a Job's or a Pod's status itself, as
// they would. Groups by weight, the record written before each step (a
// restart runs nothing again), before-hook-creation, hook-succeeded and
// hook-failed, a failure and a timeout, Ready False HookFailed with its
// Event, and no request at all for a set without hooks.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { API_VERSION, HOOK_RUN_ANNOTATION, KIND_NAMES } from '../../src/api/index.js';
import type { HooksStatus } from '../../src/api/status.js';
import { runHookPhase, type HookRunOptions } from '../../src/apply/hook-runner.js';
import type { ChartHook, HookDeletePolicy } from '../../src/apply/hooks.js';
import { ownerLabels, type Owner } from '../../src/apply/owner.js';
import { SyncHooks, type HookContext } from '../../src/controllers/sync-hooks.js';
import { SyncPipeline, type ApplyTarget, type PipelineDeps } from '../../src/controllers/sync-pipeline.js';
import type { SyncSpec } from '../../src/api/sync-spec.js';
import type { SyncStatusDraft } from '../../src/controllers/sync-status.js';
import type { KubeClient, Requester, RequestOptions } from '../../src/kube/client.js';
import { getIfExists } from '../../src/kube/client.js';
import { Discovery } from '../../src/kube/discovery.js';
import type { KubeObject, ResourceInfo } from '../../src/kube/resources.js';
import { EventRecorder } from '../../src/runtime/events.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { ObjectWriter } from '../../src/runtime/object-writer.js';
import { clusterClient, closeClients } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { useTestNamespace } from '../support/namespace.js';
import { eventOf, syncPath } from '../support/syncs.js';
import { finishJob as finishJobOf } from '../support/workloads.js';

const CLUSTER = 'mgmt';
const SYNCS: ResourceInfo = { group: 'syncprims.dev', version: 'v1alpha1', kind: 'Sync', resource: KIND_NAMES.Sync.plural, namespaced: true };
const ns = useTestNamespace(CLUSTER, 'hooks');
let client: KubeClient;
let discovery: Discovery;

beforeAll(async () => {
  client = await clusterClient(CLUSTER);
  discovery = new Discovery(client);
  await installCrds(CLUSTER);
});
afterAll(closeClients);

const owner = (): Owner => ({ kind: 'Sync', namespace: ns(), name: 'web' });
const marks = (): KubeObject['metadata'] => ({ namespace: ns(), labels: ownerLabels(owner()) });

function configMapHook(name: string, phase: 'pre' | 'post', weight: number, deletePolicies: HookDeletePolicy[] = []): ChartHook {
  return { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...marks() }, data: { hook: name } }, phase, weight, deletePolicies };
}

function jobHook(name: string, phase: 'pre' | 'post', weight: number, deletePolicies: HookDeletePolicy[] = []): ChartHook {
  const spec = { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'run', image: 'busybox', command: ['true'] }] } } };
  return { object: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name, ...marks() }, spec }, phase, weight, deletePolicies };
}

function podHook(name: string, weight: number): ChartHook {
  return { object: { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...marks() }, spec: { restartPolicy: 'Never', containers: [{ name: 'run', image: 'busybox' }] } }, phase: 'pre', weight, deletePolicies: [] };
}

const pathOf = (h: ChartHook): string => {
  const { kind, metadata } = h.object;
  const plural = { ConfigMap: 'configmaps', Job: 'jobs', Pod: 'pods' }[kind]!;
  return `${kind === 'Job' ? '/apis/batch/v1' : '/api/v1'}/namespaces/${metadata.namespace}/${plural}/${metadata.name}`;
};
const live = (h: ChartHook): Promise<KubeObject | undefined> => getIfExists<KubeObject>(client, pathOf(h));

/** What a job controller writes when the Job's pod succeeded, or failed past its backoff limit. */
const finishJob = (h: ChartHook, outcome: 'Complete' | 'Failed'): Promise<void> => finishJobOf(client, h.object.metadata.namespace!, h.object.metadata.name!, outcome);

/** The runner's options, its saved records kept in `saved`. */
function runOptions(saved: HooksStatus[], more: Partial<HookRunOptions> = {}): HookRunOptions {
  return { client, discovery, owner: owner(), timeoutMs: 60_000, save: async (r) => void saved.push(r), ...more };
}

const fresh = (revision: string): HooksStatus => ({ revision, phase: 'Pre', entries: [] });

describe('runHookPhase: one phase of hooks against the API server', () => {
  test('groups in weight order; a Job waited for until Complete (recorded first: a second call, as after a restart, creates nothing again); hook-succeeded deleted', async () => {
    const config = configMapHook('a-config', 'pre', -1);
    const migrate = jobHook('a-migrate', 'pre', 0, ['hook-succeeded']);
    const saved: HooksStatus[] = [];
    const first = await runHookPhase('pre', [migrate, config], fresh('r1'), runOptions(saved));
    expect(first.outcome).toBe('waiting');
    expect(first.outcome === 'waiting' && first.message).toBe(`waiting for hook Job ${ns()}/a-migrate: not started`);
    // Each group recorded before it was applied: weight -1, then 0.
    expect(saved.map((r) => [r.phase, r.weight])).toEqual([['Pre', -1], ['Pre', 0]]);
    expect(saved[1]!.entries.map((e) => e.id).sort()).toEqual([`${ns()}_a-config__ConfigMap`, `${ns()}_a-migrate_batch_Job`]);
    const job = await live(migrate);
    expect(job?.metadata.annotations?.[HOOK_RUN_ANNOTATION]).toBe(saved[1]!.since);
    expect(job?.metadata.labels).toEqual(expect.objectContaining(ownerLabels(owner())));
    expect((job?.metadata.managedFields as { manager?: string; operation?: string }[] | undefined)?.some((m) => m.manager === 'syncprims' && m.operation === 'Apply')).toBe(true);

    // Called again from what was recorded (a restart): the same Job is waited for, not created again.
    const again = await runHookPhase('pre', [migrate, config], first.record, runOptions(saved));
    expect(again.outcome).toBe('waiting');
    expect((await live(migrate))?.metadata.uid).toBe(job?.metadata.uid);

    await finishJob(migrate, 'Complete');
    const done = await runHookPhase('pre', [migrate, config], again.record, runOptions(saved));
    expect(done).toEqual({ outcome: 'done', record: expect.objectContaining({ revision: 'r1', phase: 'Set' }) });
    expect(done.record.weight).toBeUndefined();
    expect(await live(migrate)).toBeUndefined(); // hook-succeeded
    expect((await live(config))?.data).toEqual({ hook: 'a-config' }); // before-hook-creation only: it stays, listed
    expect(done.record.entries.map((e) => e.id)).toContain(`${ns()}_a-config__ConfigMap`);
  });

  test('before-hook-creation: a new revision deletes the old copy (and waits for it to go) before creating it again', async () => {
    const config = configMapHook('b-config', 'pre', 0);
    const first = await runHookPhase('pre', [config], fresh('r1'), runOptions([]));
    expect(first.outcome).toBe('done');
    const before = await live(config);
    const second = await runHookPhase('pre', [config], { ...fresh('r2'), entries: first.record.entries }, runOptions([]));
    expect(second.outcome).toBe('done');
    const after = await live(config);
    expect(after?.metadata.uid).toBeDefined();
    expect(after?.metadata.uid).not.toBe(before?.metadata.uid);
    // Without before-hook-creation the object is applied over, as it is.
    const kept = configMapHook('b-config', 'pre', 0, ['hook-failed']);
    expect((await runHookPhase('pre', [kept], fresh('r3'), runOptions([]))).outcome).toBe('done');
    expect((await live(kept))?.metadata.uid).toBe(after?.metadata.uid);
  });

  test('a failed Job: failed, naming the hook and the condition message; hook-failed deletes it; recorded before it is deleted', async () => {
    const migrate = jobHook('c-migrate', 'pre', 0, ['hook-failed']);
    const later = configMapHook('c-later', 'pre', 5);
    const saved: HooksStatus[] = [];
    const first = await runHookPhase('pre', [migrate, later], fresh('r1'), runOptions(saved));
    expect(first.outcome).toBe('waiting');
    await finishJob(migrate, 'Failed');
    const failed = await runHookPhase('pre', [migrate, later], first.record, runOptions(saved));
    const message = `pre-install/pre-upgrade hook Job ${ns()}/c-migrate failed: failed: Job has reached the specified backoff limit (1 pods failed)`;
    expect(failed).toEqual({ outcome: 'failed', message, record: expect.objectContaining({ failed: message, weight: 0 }) });
    expect(saved.at(-1)?.failed).toBe(message);
    expect(await live(migrate)).toBeUndefined();
    expect(await live(later)).toBeUndefined(); // the group after a failure never starts
  });

  test('a hook not done within the timeout fails, saying what it waited for', async () => {
    const slow = jobHook('d-slow', 'post', 0);
    const first = await runHookPhase('post', [slow], { revision: 'r1', phase: 'Set', entries: [] }, runOptions([]));
    expect(first.outcome).toBe('waiting');
    expect(first.record.phase).toBe('Post');
    const late = await runHookPhase('post', [slow], first.record, runOptions([], { timeoutMs: 1_000, now: () => Date.now() + 5_000 }));
    expect(late.outcome).toBe('failed');
    expect(late.outcome === 'failed' && late.message).toBe(`post-install/post-upgrade hook Job ${ns()}/d-slow did not succeed within 1s: not started`);
    expect(await live(slow)).toBeDefined(); // no hook-failed policy: it stays
  });

  test('a Pod hook is done once Succeeded, not once Running and Ready', async () => {
    const pod = podHook('e-pod', 0);
    const first = await runHookPhase('pre', [pod], fresh('r1'), runOptions([]));
    expect(first.outcome).toBe('waiting');
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const running = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }] };
    await client.request({ method: 'PATCH', path: `${pathOf(pod)}/status`, contentType: 'application/merge-patch+json', body: { status: running } });
    const ready = await runHookPhase('pre', [pod], first.record, runOptions([]));
    expect(ready.outcome === 'waiting' && ready.message).toContain('a hook Pod is done once Succeeded');
    await client.request({ method: 'PATCH', path: `${pathOf(pod)}/status`, contentType: 'application/merge-patch+json', body: { status: { phase: 'Succeeded' } } });
    expect((await runHookPhase('pre', [pod], ready.record, runOptions([]))).outcome).toBe('done');
  });
});

/** A requester that counts what goes through it to the real API server. */
function counting(inner: Requester): Requester & { sent: string[] } {
  const sent: string[] = [];
  return { name: inner.name, sent, request: <T>(opts: RequestOptions) => (sent.push(`${opts.method ?? 'GET'} ${opts.path}`), inner.request<T>(opts)) };
}

describe('SyncHooks: the pipeline stages on a Sync', () => {
  async function makeSync(name: string): Promise<KubeObject> {
    return client.request<KubeObject>({ method: 'POST', path: syncPath(ns()), body: { apiVersion: API_VERSION, kind: 'Sync', metadata: { name }, spec: { source: { inline: [] } } } });
  }
  const context = (obj: KubeObject, hooks: ChartHook[], requester: Requester, revision = 'r1'): HookContext => ({
    obj,
    spec: { timeout: '5m', interval: '10m' },
    revision,
    hooks,
    client: requester,
    discovery: new Discovery(requester),
    owner: owner(),
    watch: () => undefined,
    log: silentLogger,
  });

  test('a set without hooks: no request, no write, the status passed through as it is', async () => {
    const obj = await makeSync('plain');
    const requester = counting(client);
    const writes: KubeObject[] = [];
    const hooks = new SyncHooks({ writer: new ObjectWriter(client, SYNCS, (w) => writes.push(w)), events: new EventRecorder(client), concurrency: 4 });
    const base: SyncStatusDraft = { observedGeneration: 1, lastAppliedRevision: 'r0' };
    expect(await hooks.beforeSet(context(obj, [], requester), base)).toEqual({ go: base });
    expect(await hooks.afterReady(context(obj, [], requester), { ...base, lastAppliedRevision: 'r1' })).toEqual({ go: { ...base, lastAppliedRevision: 'r1' } });
    expect(requester.sent).toEqual([]);
    expect(writes).toEqual([]);
  });

  test('a failed pre hook: Ready False HookFailed naming it, status.hooks recorded, a Warning Event; the same attempt runs nothing again', async () => {
    const obj = await makeSync('failing');
    const migrate = jobHook('f-migrate', 'pre', 0);
    // What is written, as written (an operator of another test may reconcile this Sync and write its own status over it).
    const written: SyncStatusDraft[] = [];
    const real = new ObjectWriter(client, SYNCS);
    const writer = { updateStatus: (o: KubeObject, st: Record<string, unknown>) => (written.push(st as SyncStatusDraft), real.updateStatus(o, st)) };
    const hooks = new SyncHooks({ writer, events: new EventRecorder(client), concurrency: 4 });
    const first = await hooks.beforeSet(context(obj, [migrate], client), { observedGeneration: 1 });
    expect('result' in first).toBe(true);
    const running = written.at(-1)!;
    expect(running.hooks).toEqual(expect.objectContaining({ revision: 'r1', phase: 'Pre', weight: 0 }));
    expect(running.lastAttemptedRevision).toBe('r1');
    expect(running.conditions?.find((c) => c.type === 'Ready')).toEqual(expect.objectContaining({ status: 'Unknown', message: `waiting for hook Job ${ns()}/f-migrate: not started` }));

    await finishJob(migrate, 'Failed');
    const again = await hooks.beforeSet(context(obj, [migrate], client), running);
    expect('result' in again).toBe(true);
    const failed = written.at(-1)!;
    const ready = failed.conditions?.find((c) => c.type === 'Ready');
    expect(ready).toEqual(expect.objectContaining({ status: 'False', reason: 'HookFailed' }));
    expect(ready?.message).toBe(`pre-install/pre-upgrade hook Job ${ns()}/f-migrate failed: failed: Job has reached the specified backoff limit (1 pods failed)`);
    expect((failed.hooks as HooksStatus).failed).toBe(ready?.message);
    const event = await eventOf(client, ns(), 'failing', 'HookFailed', 'Warning');
    expect(event.message).toBe(ready?.message);
    // The same attempt again: it stays failed, nothing applied, nothing read.
    const requester = counting(client);
    const still = await hooks.beforeSet(context(obj, [migrate], requester), failed);
    expect('result' in still).toBe(true);
    expect(requester.sent).toEqual([]);
    // A reconcile request (a new attempt) runs the revision's hooks again, from the start.
    const requested = { ...obj, metadata: { ...obj.metadata, annotations: { 'syncprims.dev/reconcile-requested-at': 'now' } } };
    const retried = await hooks.beforeSet(context(requested, [migrate], client), failed);
    expect('result' in retried).toBe(true);
    expect(written.at(-1)?.hooks).toEqual(expect.objectContaining({ revision: 'r1', phase: 'Pre', weight: 0, requestedAt: 'now' }));
    expect((written.at(-1)?.hooks as HooksStatus).failed).toBeUndefined();
  });
});

describe('a Sync deleted: its hooks still there go with it', () => {
  test('finalize deletes what status.hooks.entries lists that carries its owner labels (the inventory never lists hooks)', async () => {
    const left = configMapHook('g-left', 'post', 0);
    const done = await runHookPhase('post', [left], { revision: 'r1', phase: 'Set', entries: [] }, runOptions([]));
    expect(done.outcome).toBe('done');
    expect(await live(left)).toBeDefined();
    // Another owner's object of an entry is not deleted: only what carries this Sync's labels goes.
    const other = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'g-other', namespace: ns(), labels: ownerLabels({ ...owner(), name: 'other' }) } };
    await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/configmaps`, body: other });
    const entries = [...done.record.entries, { id: `${ns()}_g-other__ConfigMap`, v: 'v1' }];
    const sync: KubeObject = {
      apiVersion: API_VERSION,
      kind: 'Sync',
      metadata: { name: 'web', namespace: ns() },
      status: { lastAppliedRevision: 'r1', inventory: { entries: [] }, hooks: { ...done.record, entries } },
    };
    // finalize reads the status and prunes through the target's client: nothing else of the pipeline is used.
    const pipeline = new SyncPipeline({ home: client, homeDiscovery: discovery, concurrency: 4 } as PipelineDeps);
    const target = { id: CLUSTER, client, discovery } as ApplyTarget;
    await pipeline.finalize(sync, { deletionPolicy: 'Delete' } as SyncSpec, target, silentLogger);
    expect(await live(left)).toBeUndefined();
    expect(await getIfExists(client, `/api/v1/namespaces/${ns()}/configmaps/g-other`)).toBeDefined();
  });
});
