// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// API server faults that a watch-driven operator must live through without a
// restart of its own (issue 15, item 2): the API server restarted mid-watch
// and mid-apply (a cluster of this file's own: the shared ones serve other
// tests), and a watch that falls behind an etcd compaction, answered 410
// Gone for real, relisted, and missing no change made while it was blind.
// With SOAK=1 (make soak), 60 more rounds of random changes (GAP_ROUNDS,
// GAP_SEED) alternate blind spells with compactions and API server restarts.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { OWNER_NAME_LABEL } from '../../src/api/marks.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { writesSince } from '../support/audit.js';
import { controlplane, LOCAL, OWN_LANE_CLUSTER } from '../support/controlplane.js';
import { PrivateControlPlane } from '../support/etcd.js';
import { eventually } from '../support/eventually.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { OperatorProcess, type LogLine } from '../support/operator.js';
import { StallingProxy } from '../support/stalling-proxy.js';
import { applySync, find, getSync, readyOf, syncPath, waitForReady, type SyncObject } from '../support/syncs.js';

const CLUSTER = OWN_LANE_CLUSTER;
const GONE_LOG = 'resource version too old (410 Gone): reading the whole set again';
/** `make soak` (SOAK=1): more rounds of random changes made while the operator is blind or its API server restarts. */
const SOAK = process.env.SOAK === '1';
const SOAK_ROUNDS = Number(process.env.GAP_ROUNDS ?? (SOAK ? 60 : 0));
const SOAK_SEED = Number(process.env.GAP_SEED ?? Date.now() % 1_000_000);

const cm = (namespace: string, name: string, data: Record<string, string> = {}): KubeObject & { data: Record<string, string> } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data,
});
const cmPath = (namespace: string, name: string): string => `/api/v1/namespaces/${namespace}/configmaps/${name}`;

/** Sets `data` of a ConfigMap as `kubectl edit` would (an Update under another field manager). */
function handEdit(client: KubeClient, namespace: string, name: string, data: Record<string, string>): Promise<KubeObject> {
  return client.request<KubeObject>({
    method: 'PATCH',
    path: cmPath(namespace, name),
    query: { fieldManager: 'kubectl-edit' },
    contentType: 'application/merge-patch+json',
    body: { data },
  });
}

/** Waits until a ConfigMap's data equals `data`. */
function dataBecomes(client: KubeClient, namespace: string, name: string, data: Record<string, string>, what: string): Promise<true> {
  return eventually(what, async () => {
    const got = await find<{ data?: Record<string, string> }>(client, cmPath(namespace, name));
    return JSON.stringify(got?.data) === JSON.stringify(data) ? true : undefined;
  });
}

/** The informers (cluster, resource) that logged `cache primed` among `lines`. */
const primedInformers = (lines: LogLine[]): string[] =>
  lines.filter((l) => l.msg === 'cache primed').map((l) => `${String(l.cluster)}/${String(l.informer)}`);

describe('the API server restarted (watch cache on, as in any real cluster)', () => {
  let client: KubeClient;
  let op: OperatorProcess;
  const ns = useOperatedNamespace(CLUSTER, 'apiserver-restart', (o) => ({ client, op } = o));

  /** The names of the ConfigMaps the sync `owner` owns now (one list of their metadata). */
  async function ownedNames(owner: string): Promise<string[]> {
    const list = await client.request<{ items: KubeObject[] }>({
      path: `/api/v1/namespaces/${ns()}/configmaps`,
      query: { labelSelector: `${OWNER_NAME_LABEL}=${owner}` },
      accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
    });
    return list.items.map((o) => o.metadata.name ?? '').sort();
  }

  test('mid-watch: the operator keeps its informers, and a hand edit and a new Sync made right after are acted on', async () => {
    await applySync(client, ns(), 'before', { interval: '1h', source: { inline: [cm(ns(), 'before', { a: '1' })] } });
    await waitForReady(client, ns(), 'before', 'True');
    const primedBefore = primedInformers(op.logs);
    const goneBefore = await op.metric('syncprims_watch_restarts_total', { cluster: CLUSTER, reason: 'gone' });
    const pid = op.child.pid;

    await controlplane(['restart', CLUSTER]);
    // Right after: the API server is ready again, the operator's watches are reconnecting.
    await handEdit(client, ns(), 'before', { a: '9' });
    await applySync(client, ns(), 'after', { interval: '1h', source: { inline: [cm(ns(), 'after', { b: '2' })] } });

    await dataBecomes(client, ns(), 'before', { a: '1' }, 'the hand edit made after the restart to be corrected');
    await waitForReady(client, ns(), 'after', 'True');
    expect(await find(client, cmPath(ns(), 'after'))).toBeDefined();

    // The same process, its informers kept: none of those primed before was primed again (rebuilt).
    expect(op.child.exitCode).toBeNull();
    expect(op.child.pid).toBe(pid);
    const primedAfter = primedInformers(op.logs).slice(primedBefore.length);
    expect(primedAfter.filter((i) => primedBefore.includes(i))).toEqual([]);
    // The new API server's watch cache starts at the current revision, so the old
    // resource versions were refused (410) and the sets read again, not assumed.
    const gone = op.logs.filter((l) => l.msg === GONE_LOG && l.cluster === CLUSTER);
    expect(gone.length).toBeGreaterThan(0);
    expect(gone.every((l) => String(l.err).includes('too old resource version'))).toBe(true);
    expect(await op.metric('syncprims_watch_restarts_total', { cluster: CLUSTER, reason: 'gone' })).toBeGreaterThan(goneBefore);
    console.info(`mid-watch restart: ${gone.length} informers relisted after 410 from the new watch cache`);
  });

  test('mid-apply: a Sync of 500 ConfigMaps being applied converges to Ready with all 500, nothing pruned', async () => {
    const neighbour = Array.from({ length: 3 }, (_, i) => cm(ns(), `neighbour-${i}`, { i: String(i) }));
    await applySync(client, ns(), 'neighbour', { interval: '1h', source: { inline: neighbour } });
    await waitForReady(client, ns(), 'neighbour', 'True');

    const since = new Date();
    const bulk = Array.from({ length: 500 }, (_, i) => cm(ns(), `bulk-${i}`, { i: String(i) }));
    await applySync(client, ns(), 'bulk', { interval: '1h', source: { inline: bulk } });
    await eventually('the apply to be under way', async () => ((await ownedNames('bulk')).length >= 20 ? true : undefined), 60_000, 50);
    const restartAt = new Date();
    await controlplane(['restart', CLUSTER]);
    // The new kube-apiserver's pid file is written as it starts, once the old one has exited.
    const newServerAt = (await stat(path.join(LOCAL, `${CLUSTER}.pid`))).mtime;

    const ready = await waitForReady(client, ns(), 'bulk', 'True', undefined, 120_000);
    // The restart hit the apply: part of the objects were written before it, the rest by the new API server
    // (which serves, and takes the operator's retries, a moment before `restart` sees it ready).
    const bulkWrites = (await writesSince(CLUSTER, since, 'syncprims-operator')).filter(
      (w) => w.objectRef?.resource === 'configmaps' && w.objectRef.name?.startsWith('bulk-'),
    );
    const writesBeforeRestart = bulkWrites.filter((w) => new Date(w.requestReceivedTimestamp) < restartAt);
    expect(new Set(writesBeforeRestart.map((w) => w.objectRef?.name)).size).toBeGreaterThan(0);
    const writesAfterRestart = bulkWrites.filter((w) => new Date(w.requestReceivedTimestamp) >= newServerAt);
    expect(new Set(writesAfterRestart.map((w) => w.objectRef?.name)).size).toBeGreaterThan(0);

    expect(ready.status?.inventory?.entries).toHaveLength(500);
    expect(await ownedNames('bulk')).toEqual(bulk.map((o) => o.metadata.name).sort());
    // Nothing pruned: the neighbour's objects are all there, and the operator deleted nothing at all.
    expect(await ownedNames('neighbour')).toEqual(['neighbour-0', 'neighbour-1', 'neighbour-2']);
    expect((await getSync(client, ns(), 'neighbour')).status?.inventory?.entries).toHaveLength(3);
    const writes = await writesSince(CLUSTER, since, 'syncprims-operator');
    expect(writes.filter((w) => w.verb === 'delete' || w.verb === 'deletecollection')).toEqual([]);
    console.info(
      `mid-apply restart: ${new Set(writesBeforeRestart.map((w) => w.objectRef?.name)).size}/500 written before it, ${new Set(writesAfterRestart.map((w) => w.objectRef?.name)).size} by the new API server; ` +
        `${bulkWrites.length} writes to the 500 in all (${bulkWrites.filter((w) => (w.responseStatus?.code ?? 0) >= 300).length} failed); 0 deletes`,
    );
  });
});

// The control plane of the compaction scenario boots while the restarts run (it takes seconds);
// stopped at the end of the file whatever ran.
let privatePlane: Promise<PrivateControlPlane> | undefined;
beforeAll(() => {
  // Without the watch cache, watches are served by etcd, so its compaction is what expires them.
  privatePlane = PrivateControlPlane.start('compaction', ['--watch-cache=false']);
  privatePlane.catch(() => undefined); // awaited (and its failure reported) by the scenario
});
afterAll(async () => {
  await (await privatePlane?.catch(() => undefined))?.down();
});

describe('410 Gone after an etcd compaction (a control plane of its own, watch cache off)', () => {
  const NS = 'gap';
  let cp: PrivateControlPlane;
  let proxy: StallingProxy;
  let op: OperatorProcess;
  let client: KubeClient;

  beforeAll(async () => {
    cp = await privatePlane!;
    await cp.installCrds();
    client = await cp.client();
    await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
    // The operator reaches the API server through a proxy that can hold every connection silent.
    proxy = await StallingProxy.start(await cp.apiserverPort());
    const kubeconfig = await cp.kubeconfigViaPort(proxy.port);
    op = await OperatorProcess.start(cp.cluster, ['--kubeconfig', kubeconfig, '--namespace', NS]);
  });

  afterAll(async () => {
    await op?.stop('SIGTERM');
    await proxy?.close();
  });

  test('a watch blind while changes were made and etcd compacted gets 410, relists, and misses none of the changes (SOAK=1: then rounds of random ones)', async () => {
    const syncs = ['kept', 'emptied', 'doomed'];
    for (const name of syncs) await applySync(client, NS, name, { interval: '1h', source: { inline: [cm(NS, name, { v: '1' })] } });
    for (const name of syncs) await waitForReady(client, NS, name, 'True');
    const goneBefore = await op.metric('syncprims_watch_restarts_total', { reason: 'gone' });

    // Blind: every connection of the operator, open or new, goes silent.
    proxy.blackHole();
    await handEdit(client, NS, 'kept', { v: 'edited by hand' });
    await client.request({ method: 'DELETE', path: cmPath(NS, 'emptied') });
    await client.request({ method: 'DELETE', path: syncPath(NS, 'doomed') });
    await applySync(client, NS, 'born', { interval: '1h', source: { inline: [cm(NS, 'born', { v: '1' })] } });
    // Every resource version the operator holds is now older than etcd's history.
    const revision = await cp.etcd.compact();
    proxy.restore();

    // It was told so, by etcd (not a watch cache: there is none), and read the sets again.
    const gone = await op.waitForLog('a 410 Gone from the compaction', (l) => l.msg === GONE_LOG);
    expect(String(gone.err)).toContain('The resourceVersion for the provided watch is too old');
    expect(Number(gone.resourceVersion)).toBeLessThan(revision);
    const relisted = await eventually('the Syncs and the owned objects relisted', async () => {
      const informers = new Set(op.logs.filter((l) => l.msg === GONE_LOG).map((l) => String(l.informer)));
      return informers.has('syncs.syncprims.dev') && informers.has('configmaps') ? informers : undefined;
    });

    // Every change made while it was blind is acted on.
    await dataBecomes(client, NS, 'kept', { v: '1' }, 'the hand edit made while blind to be corrected');
    // An owned object deleted by hand is not drift (docs/sync.md): the next full reconcile creates it
    // again, here one requested. That reconcile decides from the cache what needs no request: had the
    // relist left the deleted object in the cache, it would send nothing. (The relist of the owned
    // objects is done: the correction of 'kept' above came from it, and a relist replaces the store at once.)
    await applySync(client, NS, 'emptied', { interval: '1h', source: { inline: [cm(NS, 'emptied', { v: '1' })] } }, { annotations: { 'syncprims.dev/reconcile-requested-at': 'after-the-gap' } });
    await dataBecomes(client, NS, 'emptied', { v: '1' }, 'the owned object deleted while blind to be created again by the requested reconcile');
    await waitForReady(client, NS, 'born', 'True');
    expect(await find(client, cmPath(NS, 'born'))).toBeDefined();
    await eventually('the Sync deleted while blind to be gone, its object pruned', async () =>
      !(await find(client, syncPath(NS, 'doomed'))) && !(await find(client, cmPath(NS, 'doomed'))) ? true : undefined,
    );
    expect(op.child.exitCode).toBeNull();
    const goneAfter = await op.metric('syncprims_watch_restarts_total', { reason: 'gone' });
    expect(goneAfter).toBeGreaterThan(goneBefore);
    console.info(`410 after compaction to revision ${revision}: ${goneAfter - goneBefore} informers relisted (${[...relisted].join(', ')}); 4 changes made while blind, 4 seen and acted on`);

    if (SOAK_ROUNDS > 0) await soakRounds(['kept', 'emptied', 'born']);
  }, SOAK_ROUNDS > 0 ? 60 * 60_000 : undefined);

  /**
   * With SOAK=1: rounds of random changes (new Syncs, changed sources, hand
   * edits, deleted Syncs), made while the operator is blind and followed by a
   * compaction (odd rounds), or just before its API server restarts (even
   * rounds); after each, every change must be acted on. Seeded: GAP_SEED replays.
   */
  async function soakRounds(initial: string[]): Promise<void> {
    const rand = mulberry32(SOAK_SEED);
    const live = new Map(initial.map((n) => [n, '1']));
    const deleted = new Set<string>();
    let changes = 0;
    const goneAt = await op.metric('syncprims_watch_restarts_total', { reason: 'gone' });
    console.info(`soak: ${SOAK_ROUNDS} rounds, GAP_SEED=${SOAK_SEED}`);
    for (let round = 1; round <= SOAK_ROUNDS; round++) {
      const restart = round % 2 === 0;
      const settled = new Set(live.keys());
      if (!restart) proxy.blackHole();
      const n = 2 + Math.floor(rand() * 5);
      for (let i = 0; i < n; i++, changes++) {
        const names = [...live.keys()];
        const pick = names[Math.floor(rand() * names.length)];
        const r = rand();
        if (!pick || r < 0.3 || (live.size < 3 && r < 0.8)) {
          const name = `s${round}-${i}`;
          live.set(name, `${round}`);
          await applySync(client, NS, name, { interval: '1h', source: { inline: [cm(NS, name, { v: `${round}` })] } });
        } else if (r < 0.55 && settled.has(pick)) {
          await handEdit(client, NS, pick, { v: 'by hand' });
        } else if (r < 0.8 || live.size < 3) {
          live.set(pick, `${round}-${i}`);
          await applySync(client, NS, pick, { interval: '1h', source: { inline: [cm(NS, pick, { v: `${round}-${i}` })] } });
        } else {
          live.delete(pick);
          deleted.add(pick);
          await client.request({ method: 'DELETE', path: syncPath(NS, pick) });
        }
      }
      if (restart) {
        await controlplane(['restart', cp.cluster], { dir: cp.dir });
      } else {
        await cp.etcd.compact();
        proxy.restore();
      }
      await converged(round, live, deleted);
    }
    expect(op.child.exitCode).toBeNull();
    const relists = (await op.metric('syncprims_watch_restarts_total', { reason: 'gone' })) - goneAt;
    console.info(`soak: ${SOAK_ROUNDS} rounds (${Math.ceil(SOAK_ROUNDS / 2)} compactions, ${Math.floor(SOAK_ROUNDS / 2)} API server restarts), ${changes} changes, all acted on; ${relists} relists after 410; ${live.size} Syncs live, ${deleted.size} deleted and pruned`);
  }

  /** Waits until the Syncs in `live` are Ready with their ConfigMap's `v` as given, and those `deleted` are gone with their ConfigMaps. */
  async function converged(round: number, live: Map<string, string>, deleted: Set<string>): Promise<void> {
    let last = '';
    await eventually(
      `round ${round} (GAP_SEED=${SOAK_SEED}) to converge`,
      async () => {
        const syncs = await client.request<{ items: SyncObject[] }>({ path: syncPath(NS) });
        const cms = await client.request<{ items: (KubeObject & { data?: Record<string, string> })[] }>({ path: `/api/v1/namespaces/${NS}/configmaps`, query: { labelSelector: OWNER_NAME_LABEL } });
        const v = new Map(cms.items.map((c) => [c.metadata.name, c.data?.v]));
        const ready = new Set(syncs.items.filter((x) => x.status?.observedGeneration === x.metadata.generation && readyOf(x)?.status === 'True').map((x) => x.metadata.name));
        const present = new Set(syncs.items.map((x) => x.metadata.name));
        const wrong = [
          ...[...live].filter(([name, want]) => !ready.has(name) || v.get(name) !== want).map(([name, want]) => `${name}: want ${want}, ready ${ready.has(name)}, v ${v.get(name)}`),
          ...[...deleted].filter((name) => present.has(name) || v.has(name)).map((name) => `${name}: deleted, still there`),
        ];
        last = wrong.join('; ');
        return wrong.length === 0 ? true : undefined;
      },
      90_000,
      250,
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}; not yet: ${last}`);
    });
  }
});

/** A small seeded PRNG (mulberry32): the soak's choices, replayable from the seed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
