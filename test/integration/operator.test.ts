// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// `syncprims run` as a process on the real control plane: caches primed before
// the first reconcile, zero writes on restart, metrics, graceful SIGTERM, and
// leader election between two operators.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { API_VERSION, FINALIZER } from '../../src/api/index.js';
import { OPERATOR_USER_AGENT } from '../../src/cli/run/run.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { requestsSince, writesSince } from '../support/audit.js';
import { closeClients, clusterClient, OWN_LANE_CLUSTER } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { createSyncs, oneConfigMap } from '../support/syncs.js';

const CLUSTER = OWN_LANE_CLUSTER;
const running: OperatorProcess[] = [];
let client: KubeClient;

beforeAll(async () => {
  client = await clusterClient(CLUSTER);
  await installCrds(CLUSTER);
});

afterAll(async () => {
  await Promise.all(running.map((op) => op.stop('SIGKILL')));
  await closeClients();
});

async function start(args: string[]): Promise<OperatorProcess> {
  const op = await OperatorProcess.start(CLUSTER, args);
  running.push(op);
  return op;
}

async function syncs(namespace: string): Promise<(KubeObject & { status?: { observedGeneration?: number } })[]> {
  const list = await client.request<{ items: (KubeObject & { status?: { observedGeneration?: number } })[] }>({
    path: `/apis/${API_VERSION}/namespaces/${namespace}/syncs`,
  });
  return list.items;
}

async function allObserved(namespace: string, count: number): Promise<true | undefined> {
  const items = await syncs(namespace);
  const done = items.filter(
    (s) => s.metadata.finalizers?.includes(FINALIZER) && s.status?.observedGeneration === s.metadata.generation,
  );
  return done.length === count ? true : undefined;
}

async function allReady(namespace: string, count: number): Promise<true | undefined> {
  const items = (await syncs(namespace)) as (KubeObject & { status?: { conditions?: { type: string; status: string }[] } })[];
  const ready = items.filter((s) => s.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  return ready.length === count ? true : undefined;
}

describe('operator start and restart over 1,000 Syncs', () => {
  const ns = useTestNamespace(CLUSTER, 'operator');
  const names = Array.from({ length: 1000 }, (_, i) => `s-${String(i).padStart(4, '0')}`);

  test('the first reconcile sees all 1,000 in the cache, and /readyz turns ready only once they are', async () => {
    await createSyncs(client, ns(), names);
    const op = await start(['--namespace', ns(), '--concurrency', '8']);
    let cachedWhenReady = -1;
    await eventually('/readyz to answer 200', async () => {
      if ((await op.readyz()) !== 200) return undefined;
      cachedWhenReady = await op.metric('syncprims_cache_objects', { resource: 'syncs.syncprims.dev' });
      return true;
    });
    expect(cachedWhenReady).toBe(1000);
    const first = await op.waitForLog('the first reconcile', (l) => l.msg.startsWith('first reconcile') && l.controller === 'sync');
    expect(first.cached).toBe(1000);
    expect(await op.metric('syncprims_first_reconcile_cache_objects', { controller: 'sync' })).toBe(1000);
    await eventually('every Sync to be Ready', () => allReady(ns(), 1000), 300_000, 1000);
    // The full pipeline ran: each Sync applied its ConfigMap.
    const applied = await client.request<{ items: unknown[] }>({
      path: `/api/v1/namespaces/${ns()}/configmaps`,
      query: { labelSelector: 'syncprims.dev/owner-kind=Sync' },
    });
    expect(applied.items).toHaveLength(1000);
    expect(await op.stop('SIGTERM')).toBe(0);
  }, 400_000);

  test('a restart over unchanged, reconciled objects writes nothing and sends no dry run', async () => {
    const since = new Date();
    const op = await start(['--namespace', ns()]);
    await op.waitForLog('the first reconcile', (l) => l.msg.startsWith('first reconcile') && l.controller === 'sync');
    await eventually('all 1,000 to be reconciled again', async () =>
      (await op.metric('controller_runtime_reconcile_total', { controller: 'sync' })) >= 1000 ? true : undefined,
    );
    // Let anything queued behind the count finish.
    await eventually('the queue to drain', async () =>
      (await op.metric('workqueue_depth', { name: 'sync' })) === 0 ? true : undefined,
    );
    expect(await op.stop('SIGTERM')).toBe(0);
    const writes = await writesSince(CLUSTER, since, OPERATOR_USER_AGENT);
    expect(writes.map((w) => `${w.verb} ${w.requestURI}`)).toEqual([]);
    // Unchanged objects are decided from the cache (our managedFields entry): not one dry run.
    expect(await dryRunsSince(since)).toEqual([]);
  });
});

/** The operator's dry-run requests since `since`, from the audit log. */
async function dryRunsSince(since: Date): Promise<string[]> {
  const requests = await requestsSince(CLUSTER, since, OPERATOR_USER_AGENT);
  return requests.filter((r) => r.requestURI.includes('dryRun=')).map((r) => `${r.verb} ${r.requestURI}`);
}

describe('no-op resync', () => {
  const ns = useTestNamespace(CLUSTER, 'operator-resync');

  test('resyncs at the interval over unchanged objects write nothing', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `r-${i}`);
    const created = new Date(Date.now() - 1000);
    await createSyncs(client, ns(), names, oneConfigMap(ns(), { interval: '2s' }));
    const op = await start(['--namespace', ns()]);
    await eventually('all Ready', () => allReady(ns(), 20));
    // The first pass's Applied Events (sent without waiting for them: they may trail the statuses) land before counting.
    await eventually('the first pass\'s 20 Applied Events', async () =>
      (await writesSince(CLUSTER, created, OPERATOR_USER_AGENT)).filter((w) => w.objectRef?.resource === 'events' && w.objectRef.namespace === ns()).length >= 20 ? true : undefined,
    );
    const since = new Date();
    const before = await op.metric('controller_runtime_reconcile_total', { controller: 'sync' });
    await eventually('two more resyncs of each', async () =>
      (await op.metric('controller_runtime_reconcile_total', { controller: 'sync' })) >= before + 40 ? true : undefined,
    );
    expect(await op.stop('SIGTERM')).toBe(0);
    const writes = await writesSince(CLUSTER, since, OPERATOR_USER_AGENT);
    expect(writes.map((w) => `${w.verb} ${w.requestURI}`)).toEqual([]);
    expect(await dryRunsSince(since)).toEqual([]);
  });
});

describe('metrics and graceful shutdown', () => {
  const ns = useTestNamespace(CLUSTER, 'operator-metrics');

  test('/metrics carries the names of the API contract', async () => {
    await createSyncs(client, ns(), ['m-1', 'm-2']);
    const op = await start(['--namespace', ns()]);
    await eventually('both reconciled', () => allObserved(ns(), 2));
    // A status lands before its reconcile ends; the counters move at the end.
    await eventually('both reconciles counted', async () =>
      (await op.metric('controller_runtime_reconcile_total', { controller: 'sync' })) >= 2 ? true : undefined,
    );
    const text = await op.metrics();
    for (const name of [
      'controller_runtime_reconcile_total{controller="sync",result="',
      'controller_runtime_reconcile_errors_total',
      'controller_runtime_reconcile_time_seconds_bucket{le="0.005",controller="sync"}',
      'workqueue_depth{name="sync"}',
      'workqueue_adds_total{name="sync"}',
      'workqueue_queue_duration_seconds_bucket',
      'workqueue_work_duration_seconds_bucket',
      'workqueue_retries_total',
      `syncprims_cache_objects{cluster="${CLUSTER}",resource="syncs.syncprims.dev"} 2`,
      `syncprims_cluster_requests_total{cluster="${CLUSTER}",method="PATCH",code="200"}`,
      'process_resident_memory_bytes',
      'syncprims_dependency_wait_seconds',
      'syncprims_dependency_wakes_total',
    ]) {
      expect(text).toContain(name);
    }
    expect(await op.stop('SIGTERM')).toBe(0);
  });

  test('SIGTERM during work finishes the reconciles in flight and exits cleanly', async () => {
    const names = Array.from({ length: 300 }, (_, i) => `t-${i}`);
    await createSyncs(client, ns(), names);
    const op = await start(['--namespace', ns(), '--concurrency', '2']);
    await op.waitForLog('the first reconcile', (l) => l.msg.startsWith('first reconcile') && l.controller === 'sync');
    expect(await op.stop('SIGTERM')).toBe(0);
    expect(op.logs.map((l) => l.msg)).toEqual(expect.arrayContaining(['signal received', 'shutdown complete']));
    expect(op.logs.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
    // It stopped part-way: some Syncs are still to do, and none was left half-written by an abort.
    const items = await syncs(ns());
    const finished = items.filter((s) => s.status?.observedGeneration === s.metadata.generation);
    expect(finished.length).toBeLessThan(items.length);
    // A second operator finishes the rest.
    const next = await start(['--namespace', ns()]);
    await eventually('the rest to be reconciled', () => allObserved(ns(), 302), 120_000);
    expect(await next.stop('SIGTERM')).toBe(0);
  });
});

describe('leader election', () => {
  const ns = useTestNamespace(CLUSTER, 'operator-le');

  test('of two operators exactly one reconciles; when it stops the other takes over', async () => {
    const args = ['--namespace', ns(), '--leader-elect', '--leader-election-namespace', ns()];
    const a = await start(args);
    const b = await start(args);
    const leader = await eventually('one leader', async () => {
      const leaders = [a, b].filter((op) => op.logs.some((l) => l.msg.startsWith('became leader')));
      return leaders.length > 0 ? leaders : undefined;
    });
    expect(leader).toHaveLength(1);
    const [first] = leader as [OperatorProcess];
    const standby = first === a ? b : a;
    // A standby has primed caches and is ready, but reconciles nothing.
    await standby.waitReady('the standby to be ready');
    await createSyncs(client, ns(), ['le-1']);
    await eventually('le-1 reconciled', () => allObserved(ns(), 1));
    await eventually('the leader to count its reconcile', async () =>
      (await first.metric('controller_runtime_reconcile_total', { controller: 'sync' })) > 0 ? true : undefined,
    );
    expect(await standby.metric('controller_runtime_reconcile_total', { controller: 'sync' })).toBe(0);
    expect(await standby.metric('syncprims_leader')).toBe(0);
    expect(standby.logs.some((l) => l.msg.startsWith('became leader'))).toBe(false);

    expect(await first.stop('SIGTERM')).toBe(0);
    await standby.waitForLog('the standby to take over', (l) => l.msg.startsWith('became leader'), 30_000);
    await createSyncs(client, ns(), ['le-2']);
    await eventually('le-2 reconciled by the new leader', () => allObserved(ns(), 2));
    await eventually('the new leader to count its reconcile', async () =>
      (await standby.metric('controller_runtime_reconcile_total', { controller: 'sync' })) > 0 ? true : undefined,
    );
    expect(await standby.metric('syncprims_leader')).toBe(1);
    expect(await standby.stop('SIGTERM')).toBe(0);
  });
});
