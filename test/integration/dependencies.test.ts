// dependsOn through a running operator on the real control plane: waiting as
// a state, waking the moment a dependency is met (counted in reconciles, not
// timed), revisions, cycles across kinds, diamonds and deletion order.
import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { API_VERSION } from '../../src/api/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { writesSince } from '../support/audit.js';
import { ROOT } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { markDeploymentAvailable } from '../support/workloads.js';
import { OperatorProcess } from '../support/operator.js';
import { applySync, eventsFor, find, getSync, readyOf, syncPath, waitForReady, type SyncObject } from '../support/syncs.js';

const CLUSTER = 'mgmt';
const OPERATOR = 'syncprims-operator';
let client: KubeClient;
let op: OperatorProcess;
const ns = useOperatedNamespace(CLUSTER, 'deps', (o) => ({ client, op } = o), ['--log-level', 'debug']);

type Dep = { name: string; kind?: string; namespace?: string; requiredStatus?: string };

const configMap = (name: string, data: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns() },
  data,
});

/**
 * A Deployment that stays InProgress until `openGate` writes its status (this
 * control plane runs no deployment controller): a dependency whose readiness
 * the test decides.
 */
const gate = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: ns() },
  spec: {
    replicas: 0,
    selector: { matchLabels: { gate: name } },
    template: { metadata: { labels: { gate: name } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/none' }] } },
  },
});

/** A gate opens when its Deployment (of no replicas) is available, as a kubelet would say. */
const openGate = (name: string): Promise<void> => markDeploymentAvailable(client, ns(), name, 0);

const spec = (objects: unknown[], dependsOn: Dep[] = []): Record<string, unknown> => ({
  source: { inline: objects },
  ...(dependsOn.length > 0 ? { dependsOn } : {}),
});

async function createAll(syncs: [string, Record<string, unknown>][]): Promise<void> {
  await Promise.all(syncs.map(([name, s]) => applySync(client, ns(), name, s)));
}

/** When the operator first wrote each ConfigMap, from the audit log. */
async function firstWrites(since: Date, names: string[]): Promise<Map<string, number>> {
  const writes = await writesSince(CLUSTER, since, OPERATOR);
  const first = new Map<string, number>();
  for (const w of writes) {
    const name = w.objectRef?.name;
    if (w.objectRef?.resource !== 'configmaps' || !name || !names.includes(name) || first.has(name)) continue;
    first.set(name, new Date(w.requestReceivedTimestamp).getTime() * 1000 + microseconds(w.requestReceivedTimestamp));
  }
  return first;
}

/** Audit timestamps carry microseconds that Date drops. */
function microseconds(ts: string): number {
  const m = /\.\d{3}(\d{3})/.exec(ts);
  return m ? Number(m[1]) : 0;
}

function pendingOf(s: SyncObject): unknown {
  return (s.status as { pendingDependencies?: unknown } | undefined)?.pendingDependencies;
}

function conditionOf(s: SyncObject, type: string) {
  return s.status?.conditions?.find((c) => c.type === type);
}

describe('waiting for dependencies', () => {
  test('a dependent waits as a state, is woken only by its dependency, and applies once it is Ready', async () => {
    const since = new Date();
    await applySync(client, ns(), 'w-app', spec([configMap('w-app')], [{ name: 'w-db' }]));
    const waiting = await waitForReady(client, ns(), 'w-app', 'False', 'DependencyNotReady');
    // Its finalizer patch goes out alongside the dependency check and lands before the status that says it waits:
    // no 409 on the way. (The writer holds a status write until the patch has landed; this run does not show that
    // the hold is needed, only that the order holds.)
    const own = (await writesSince(CLUSTER, since, OPERATOR)).filter((w) => w.objectRef?.resource === 'syncs' && w.objectRef.name === 'w-app');
    expect(own.map((w) => [w.objectRef?.subresource ?? 'finalizer', w.responseStatus?.code])).toEqual([
      ['finalizer', 200],
      ['status', 200],
    ]);
    expect(pendingOf(waiting)).toEqual([{ kind: 'Sync', name: 'w-db', reason: 'NotFound' }]);
    expect(conditionOf(waiting, 'Reconciling')).toMatchObject({ status: 'True', reason: 'DependencyNotReady' });
    expect(readyOf(waiting)?.message).toBe('waiting for Sync/w-db (NotFound)');
    expect(await find(client, `/api/v1/namespaces/${ns()}/configmaps/w-app`)).toBeUndefined();
    const event = await eventually('a DependencyNotReady Event', async () =>
      (await eventsFor(client, ns(), 'w-app')).find((e) => e.reason === 'DependencyNotReady'),
    );
    expect(event.type).toBe('Normal');

    // Nothing polls: while nothing changes, the waiting dependent is not reconciled again
    // (counted once the echoes of its own writes, finalizer and status, have been handled).
    const before = await op.settledReconciles('Sync', ns(), 'w-app');
    await new Promise((r) => setTimeout(r, 3000));
    expect(op.reconcilesOf('Sync', ns(), 'w-app')).toBe(before);

    // The dependency appears and takes its time: the dependent sees each step, no more.
    await applySync(client, ns(), 'w-db', spec([configMap('w-db'), gate('w-db-gate')]));
    const progressing = await eventually('w-app waiting on a Progressing w-db', async () => {
      const s = await getSync(client, ns(), 'w-app');
      return JSON.stringify(pendingOf(s)) === JSON.stringify([{ kind: 'Sync', name: 'w-db', reason: 'Progressing' }]) ? s : undefined;
    });
    expect(readyOf(progressing)?.reason).toBe('DependencyNotReady');
    await new Promise((r) => setTimeout(r, 1000));
    expect(await find(client, `/api/v1/namespaces/${ns()}/configmaps/w-app`)).toBeUndefined();
    await openGate('w-db-gate');
    const ready = await waitForReady(client, ns(), 'w-app', 'True', 'Succeeded');
    expect(pendingOf(ready)).toBeUndefined();
    expect(conditionOf(ready, 'Reconciling')).toBeUndefined();
    expect(await find(client, `/api/v1/namespaces/${ns()}/configmaps/w-app`)).toBeDefined();
    // From "not found" to Ready: a handful of reconciles (one per readiness step of
    // w-db, the finalizer, its own apply), not one per second of waiting.
    expect(op.reconcilesOf('Sync', ns(), 'w-app') - before).toBeLessThanOrEqual(6);
    expect(await op.metric('syncprims_dependency_wait_seconds_count', { controller: 'sync' })).toBeGreaterThanOrEqual(1);
  });

  test('a ProxySync waits for a Sync like a Sync does, and stops waiting once it is Ready', async () => {
    const proxy = {
      apiVersion: API_VERSION,
      kind: 'ProxySync',
      metadata: { name: 'px-edge', namespace: ns() },
      spec: { clusterRef: { name: 'edge-1' }, dependsOn: [{ kind: 'Sync', name: 'px-base' }], template: { spec: { source: { inline: [] } } } },
    };
    await client.request({ method: 'POST', path: syncPath(ns(), '', 'proxysyncs'), body: proxy });
    const proxyStatus = () => client.request<SyncObject>({ path: syncPath(ns(), 'px-edge', 'proxysyncs') });
    const waiting = await eventually('the ProxySync waiting', async () => {
      const s = await proxyStatus();
      return readyOf(s)?.reason === 'DependencyNotReady' ? s : undefined;
    });
    expect(pendingOf(waiting)).toEqual([{ kind: 'Sync', name: 'px-base', reason: 'NotFound' }]);
    await applySync(client, ns(), 'px-base', spec([configMap('px-base')]));
    await waitForReady(client, ns(), 'px-base', 'True', 'Succeeded');
    await eventually('the ProxySync no longer waiting', async () => {
      const s = await proxyStatus();
      return pendingOf(s) === undefined && readyOf(s)?.reason !== 'DependencyNotReady' ? s : undefined;
    });
  });

  test('requiredStatus InProgress is met once the revision is applied, before its objects are healthy', async () => {
    await createAll([
      // Its gate stays shut to the end of the file: a health timeout (5m by default) must not fall inside the restart test's window.
      ['ip-base', { ...spec([gate('ip-gate')]), timeout: '1h' }],
      ['ip-app', spec([configMap('ip-app')], [{ name: 'ip-base', requiredStatus: 'InProgress' }])],
    ]);
    await waitForReady(client, ns(), 'ip-app', 'True', 'Succeeded');
    expect(readyOf(await getSync(client, ns(), 'ip-base'))).toMatchObject({ status: 'Unknown', reason: 'Progressing' });
  });

  test('a dependency in another namespace is Forbidden without --allow-cross-namespace-refs', async () => {
    await applySync(client, ns(), 'x-app', spec([configMap('x-app')], [{ name: 'shared', namespace: 'kube-system' }]));
    const s = await waitForReady(client, ns(), 'x-app', 'False', 'DependencyNotReady');
    expect(pendingOf(s)).toEqual([{ kind: 'Sync', name: 'shared', namespace: 'kube-system', reason: 'Forbidden' }]);
    expect(readyOf(s)?.message).toBe('waiting for Sync/kube-system/shared (Forbidden)');
  });
});

describe('ordering', () => {
  test('a chain created at once applies in order, each step the moment the previous is Ready', async () => {
    const names = Array.from({ length: 6 }, (_, i) => `chain-${i}`);
    const since = new Date(Date.now() - 1000);
    // Created last-first, so no step is in order by luck.
    await createAll(names.map((n, i) => [n, spec([configMap(n)], i === 0 ? [] : [{ name: names[i - 1]! }])] as [string, Record<string, unknown>]).reverse());
    for (const n of names) await waitForReady(client, ns(), n, 'True', 'Succeeded');
    const first = await firstWrites(since, names);
    const times = names.map((n) => first.get(n));
    expect(times.every((t) => t !== undefined)).toBe(true);
    for (let i = 1; i < times.length; i++) expect(times[i]!).toBeGreaterThan(times[i - 1]!);
    // Per link: the finalizer, one per readiness step of its dependency (NotObserved,
    // NotReady, Progressing, Ready), its own apply, its own objects' events: about 6.
    for (const n of names) expect(op.reconcilesOf('Sync', ns(), n)).toBeLessThanOrEqual(8);
  });

  test('a diamond (A <- B, A <- C, B,C <- D) applies D exactly once, after both B and C', async () => {
    const since = new Date(Date.now() - 1000);
    await createAll([
      ['dia-d', spec([configMap('dia-d')], [{ name: 'dia-b' }, { name: 'dia-c' }])],
      ['dia-c', spec([configMap('dia-c')], [{ name: 'dia-a' }])],
      ['dia-b', spec([configMap('dia-b'), gate('dia-b-gate')], [{ name: 'dia-a' }])],
      ['dia-a', spec([configMap('dia-a')])],
    ]);
    await waitForReady(client, ns(), 'dia-c', 'True', 'Succeeded');
    // D waits on B alone once B, held by its gate, reports Progressing (on a busy machine that can take more than a second).
    const d = await eventually('dia-d waiting on dia-b alone', async () => {
      const got = await getSync(client, ns(), 'dia-d');
      const pending = pendingOf(got) as { name?: string; reason?: string }[] | undefined;
      return pending?.length === 1 && pending[0]?.name === 'dia-b' && pending[0].reason === 'Progressing' ? got : undefined;
    }, 30_000);
    expect(pendingOf(d)).toEqual([{ kind: 'Sync', name: 'dia-b', reason: 'Progressing' }]);
    await openGate('dia-b-gate');
    await waitForReady(client, ns(), 'dia-d', 'True', 'Succeeded');
    const writes = (await writesSince(CLUSTER, since, OPERATOR)).filter((w) => w.objectRef?.resource === 'configmaps' && w.objectRef.name === 'dia-d');
    expect(writes).toHaveLength(1);
    const first = await firstWrites(since, ['dia-a', 'dia-b', 'dia-c', 'dia-d']);
    expect(first.get('dia-d')!).toBeGreaterThan(first.get('dia-b')!);
    expect(first.get('dia-d')!).toBeGreaterThan(first.get('dia-c')!);
    expect(first.get('dia-b')!).toBeGreaterThan(first.get('dia-a')!);
    // The Event goes out alongside the Ready status: it may land a moment after.
    const applied = await eventually('the Applied Event', async () => {
      const found = (await eventsFor(client, ns(), 'dia-d')).filter((e) => e.reason === 'Applied');
      return found.length > 0 ? found : undefined;
    });
    expect(applied).toHaveLength(1);
  });

  test('a dependent does not apply while its dependency applies a new revision', async () => {
    await createAll([
      ['rev-base', spec([configMap('rev-base', { v: '1' })])],
      ['rev-app', spec([configMap('rev-app', { v: '1' })], [{ name: 'rev-base' }])],
    ]);
    await waitForReady(client, ns(), 'rev-app', 'True', 'Succeeded');
    // A new revision of both at once; the base's includes an object that is not healthy yet.
    await applySync(client, ns(), 'rev-base', spec([configMap('rev-base', { v: '2' }), gate('rev-gate')]));
    await applySync(client, ns(), 'rev-app', spec([configMap('rev-app', { v: '2' })], [{ name: 'rev-base' }]));
    const waiting = await waitForReady(client, ns(), 'rev-app', 'False', 'DependencyNotReady');
    expect(pendingOf(waiting)).toEqual([{ kind: 'Sync', name: 'rev-base', reason: 'Progressing' }]);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await find(client, `/api/v1/namespaces/${ns()}/configmaps/rev-app`)).toMatchObject({ data: { v: '1' } });
    await openGate('rev-gate');
    await waitForReady(client, ns(), 'rev-app', 'True', 'Succeeded');
    expect(await find(client, `/api/v1/namespaces/${ns()}/configmaps/rev-app`)).toMatchObject({ data: { v: '2' } });
  });

  test('examples/sync-dependencies.yaml applies database, app, dashboards in that order', async () => {
    const docs = parseAllDocuments(readFileSync(path.join(ROOT, 'examples', 'sync-dependencies.yaml'), 'utf8'), { version: '1.1' });
    const examples = docs.map((d) => d.toJS() as SyncObject);
    const since = new Date(Date.now() - 1000);
    // Into this test's namespace, last first.
    await createAll(examples.reverse().map((e) => [e.metadata.name!, { ...e.spec, defaultNamespace: ns() }]));
    for (const e of examples) await waitForReady(client, ns(), e.metadata.name!, 'True', 'Succeeded');
    const first = await firstWrites(since, ['database-config', 'app-config', 'shop-dashboards']);
    expect(first.get('app-config')!).toBeGreaterThan(first.get('database-config')!);
    expect(first.get('shop-dashboards')!).toBeGreaterThan(first.get('app-config')!);
  });
});

describe('cycles', () => {
  test('a cycle of 2 stalls both with the whole path, and recovers when broken', async () => {
    await createAll([
      ['cy-a', spec([configMap('cy-a')], [{ name: 'cy-b' }])],
      ['cy-b', spec([configMap('cy-b')], [{ name: 'cy-a' }])],
    ]);
    const a = await waitForReady(client, ns(), 'cy-a', 'False', 'DependencyCycle');
    const b = await waitForReady(client, ns(), 'cy-b', 'False', 'DependencyCycle');
    expect(readyOf(a)?.message).toBe('dependency cycle: Sync/cy-a -> Sync/cy-b -> Sync/cy-a');
    expect(readyOf(b)?.message).toBe('dependency cycle: Sync/cy-b -> Sync/cy-a -> Sync/cy-b');
    expect(conditionOf(a, 'Stalled')).toMatchObject({ status: 'True', reason: 'DependencyCycle' });
    expect(pendingOf(a)).toEqual([{ kind: 'Sync', name: 'cy-b', reason: 'Cycle' }]);
    const event = await eventually('a DependencyCycle Event', async () =>
      (await eventsFor(client, ns(), 'cy-a')).find((e) => e.reason === 'DependencyCycle'),
    );
    expect(event.type).toBe('Warning');

    await applySync(client, ns(), 'cy-b', spec([configMap('cy-b')]));
    await waitForReady(client, ns(), 'cy-b', 'True', 'Succeeded');
    const recovered = await waitForReady(client, ns(), 'cy-a', 'True', 'Succeeded');
    expect(conditionOf(recovered, 'Stalled')).toBeUndefined();
    expect(pendingOf(recovered)).toBeUndefined();
  });

  test('a cycle of 3 across kinds is reported on every member, and breaking it un-stalls them', async () => {
    const remote = {
      apiVersion: API_VERSION,
      kind: 'RemoteSync',
      metadata: { name: 'tri-b', namespace: ns() },
      spec: { clusterRef: { name: 'edge-1' }, source: { inline: [] }, dependsOn: [{ kind: 'Sync', name: 'tri-c' }] },
    };
    await client.request({ method: 'POST', path: syncPath(ns(), '', 'remotesyncs'), body: remote });
    await createAll([
      ['tri-a', spec([configMap('tri-a')], [{ kind: 'RemoteSync', name: 'tri-b' }])],
      ['tri-c', spec([configMap('tri-c')], [{ name: 'tri-a' }])],
    ]);
    const a = await waitForReady(client, ns(), 'tri-a', 'False', 'DependencyCycle');
    expect(readyOf(a)?.message).toBe('dependency cycle: Sync/tri-a -> RemoteSync/tri-b -> Sync/tri-c -> Sync/tri-a');
    const c = await waitForReady(client, ns(), 'tri-c', 'False', 'DependencyCycle');
    expect(readyOf(c)?.message).toBe('dependency cycle: Sync/tri-c -> Sync/tri-a -> RemoteSync/tri-b -> Sync/tri-c');
    const b = await eventually('the RemoteSync stalled on the cycle', async () => {
      const s = await client.request<SyncObject>({ path: syncPath(ns(), 'tri-b', 'remotesyncs') });
      return readyOf(s)?.reason === 'DependencyCycle' ? s : undefined;
    });
    expect(readyOf(b)?.message).toBe('dependency cycle: RemoteSync/tri-b -> Sync/tri-c -> Sync/tri-a -> RemoteSync/tri-b');
    expect(conditionOf(b, 'Stalled')).toMatchObject({ status: 'True' });

    // tri-c drops its dependency: it applies; the RemoteSync is no longer stalled;
    // tri-a waits on the RemoteSync (whose own pipeline is not there yet) without stalling.
    await applySync(client, ns(), 'tri-c', spec([configMap('tri-c')]));
    await waitForReady(client, ns(), 'tri-c', 'True', 'Succeeded');
    const waiting = await waitForReady(client, ns(), 'tri-a', 'False', 'DependencyNotReady');
    expect(conditionOf(waiting, 'Stalled')).toBeUndefined();
    expect(pendingOf(waiting)).toEqual([{ kind: 'RemoteSync', name: 'tri-b', reason: 'NotReady' }]);
    await eventually('the RemoteSync no longer stalled', async () => {
      const s = await client.request<SyncObject>({ path: syncPath(ns(), 'tri-b', 'remotesyncs') });
      return conditionOf(s, 'Stalled') === undefined && pendingOf(s) === undefined ? s : undefined;
    });
  });
});

describe('deletion order', () => {
  test('deleted together, a dependency keeps its objects until its dependents have pruned', async () => {
    await createAll([
      ['del-base', spec([configMap('del-base')])],
      ['del-app', spec([configMap('del-app')], [{ name: 'del-base' }])],
    ]);
    await waitForReady(client, ns(), 'del-app', 'True', 'Succeeded');
    const since = new Date(Date.now() - 1000);
    // The dependency first, so only the finalizer's wait can put it second.
    await client.request({ method: 'DELETE', path: syncPath(ns(), 'del-base') });
    await client.request({ method: 'DELETE', path: syncPath(ns(), 'del-app') });
    await eventually('both Syncs gone', async () =>
      !(await find(client, syncPath(ns(), 'del-base'))) && !(await find(client, syncPath(ns(), 'del-app'))) ? true : undefined,
    );
    const deletes = (await writesSince(CLUSTER, since, OPERATOR)).filter((w) => w.verb === 'delete' && w.objectRef?.resource === 'configmaps');
    expect(deletes.map((d) => d.objectRef?.name)).toEqual(['del-app', 'del-base']);
  });

  test('deleted together, the syncs of a cycle do not wait for each other: both prune and go', async () => {
    // Applied first (b on a), so that there is something to prune; then a made to depend on b: a cycle.
    await createAll([
      ['del-cy-a', spec([configMap('del-cy-a')])],
      ['del-cy-b', spec([configMap('del-cy-b')], [{ name: 'del-cy-a' }])],
    ]);
    await waitForReady(client, ns(), 'del-cy-b', 'True', 'Succeeded');
    await applySync(client, ns(), 'del-cy-a', spec([configMap('del-cy-a')], [{ name: 'del-cy-b' }]));
    await waitForReady(client, ns(), 'del-cy-a', 'False', 'DependencyCycle');
    const objects = ['del-cy-a', 'del-cy-b'].map((name) => `/api/v1/namespaces/${ns()}/configmaps/${name}`);
    for (const p of objects) expect(await find(client, p)).toBeDefined();
    const since = new Date(Date.now() - 1000);
    // Each waits for dependents being deleted to prune first; here each is the other's dependent.
    for (const name of ['del-cy-a', 'del-cy-b']) {
      await client.request({ method: 'DELETE', path: syncPath(ns(), name) });
    }
    await eventually('both Syncs of the cycle gone', async () =>
      !(await find(client, syncPath(ns(), 'del-cy-a'))) && !(await find(client, syncPath(ns(), 'del-cy-b'))) ? true : undefined,
    );
    // Both pruned what they had applied, each object deleted once (in either order: neither waits for the other).
    for (const p of objects) expect(await find(client, p)).toBeUndefined();
    // Of this test's objects only: `since` reaches a second back, into the deletions of the test before.
    const ours = (w: { objectRef?: { namespace?: string; name?: string } }): boolean => w.objectRef?.namespace === ns() && (w.objectRef.name ?? '').startsWith('del-cy-');
    const deletes = (await writesSince(CLUSTER, since, OPERATOR)).filter((w) => w.verb === 'delete' && w.objectRef?.resource === 'configmaps' && ours(w));
    expect(deletes.map((d) => d.objectRef?.name).sort()).toEqual(['del-cy-a', 'del-cy-b']);
  });

  test('a dependent that is not being deleted does not hold its dependency up', async () => {
    await createAll([
      ['keep-base', spec([configMap('keep-base')])],
      ['keep-app', spec([configMap('keep-app')], [{ name: 'keep-base' }])],
    ]);
    await waitForReady(client, ns(), 'keep-app', 'True', 'Succeeded');
    await client.request({ method: 'DELETE', path: syncPath(ns(), 'keep-base') });
    await eventually('keep-base gone', async () => (!(await find(client, syncPath(ns(), 'keep-base'))) ? true : undefined));
    expect(await find(client, `/api/v1/namespaces/${ns()}/configmaps/keep-base`)).toBeUndefined();
    // NotReady while keep-base was being deleted, then NotFound.
    const waiting = await eventually('keep-app waiting on a missing keep-base', async () => {
      const s = await getSync(client, ns(), 'keep-app');
      return JSON.stringify(pendingOf(s)) === JSON.stringify([{ kind: 'Sync', name: 'keep-base', reason: 'NotFound' }]) ? s : undefined;
    });
    expect(readyOf(waiting)).toMatchObject({ status: 'False', reason: 'DependencyNotReady' });
    // Waiting keeps what it applied.
    expect(await find(client, `/api/v1/namespaces/${ns()}/configmaps/keep-app`)).toBeDefined();
  });
});

describe('restart', () => {
  test('a restart over everything above (chains, waits, cycles, a Forbidden reference, three kinds) writes nothing', async () => {
    const syncs = (await client.request<{ items: SyncObject[] }>({ path: syncPath(ns()) })).items;
    const remote = (await client.request<{ items: SyncObject[] }>({ path: syncPath(ns(), '', 'remotesyncs') })).items;
    const proxy = (await client.request<{ items: SyncObject[] }>({ path: syncPath(ns(), '', 'proxysyncs') })).items;
    expect(syncs.length).toBeGreaterThan(20);
    await op.stop('SIGTERM');
    const since = new Date();
    const again = await OperatorProcess.start(CLUSTER, ['--namespace', ns(), '--log-level', 'debug']);
    try {
      await eventually('every object reconciled again', async () =>
        [...syncs.map((s) => ['Sync', s] as const), ...remote.map((s) => ['RemoteSync', s] as const), ...proxy.map((s) => ['ProxySync', s] as const)].every(
          ([kind, s]) => again.reconcilesOf(kind, ns(), s.metadata.name!) >= 1,
        )
          ? true
          : undefined,
      );
      await eventually('the queues to drain', async () =>
        (await again.metric('workqueue_depth')) === 0 ? true : undefined,
      );
      // Dependents deferred on a dependency in flight run again once it is done.
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      expect(await again.stop('SIGTERM')).toBe(0);
    }
    const writes = await writesSince(CLUSTER, since, OPERATOR);
    expect(writes.map((w) => `${w.verb} ${w.requestURI}`)).toEqual([]);
  });
});
