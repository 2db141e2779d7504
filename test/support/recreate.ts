// Issue 37's sequence, for test/integration/recreate.test.ts (a few rounds in
// `make test`, RECREATE_ROUNDS of them in `make soak`): the real corpus
// (kube-prometheus, a .tar.gz over http with `paths: [manifests]`, and Argo
// CD's install.yaml with `defaultNamespace: argocd`, both `wait: false`)
// applied by two Syncs in a fresh namespace with a fresh operator, the Syncs
// deleted (pruning everything: CRDs, the monitoring namespace), the operator
// stopped, and the same again at once, while the last round's CRDs and
// namespaces are still terminating; some rounds right after an API server
// restart. Each round is timed from the Syncs' creation to both Ready.
//
// What a round prunes is held terminating for the next (a finalizer of the
// test's on kube-prometheus's Prometheus, which keeps its CRD and the
// monitoring namespace from going) until the next round's kube-prometheus Sync
// has met it and waits: without it, on a quiet API server, all of it may be
// gone before the next round begins, and the round would not be the issue's.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { controlplane, LOCAL, ROOT } from './controlplane.js';
import { eventually } from './eventually.js';
import { OperatorProcess } from './operator.js';
import { applySync, deleteSyncAndWait, getSync, readyOf } from './syncs.js';
import { tarGz } from './tarball.js';
import { timerWakes } from './wakes.js';

const CORPUS = path.join(ROOT, 'test', 'fixtures', 'corpus');
/** Where the operator's debug log of a slow round is kept. */
export const RECREATE_LOGS = path.join(LOCAL, 'recreate');
/** The namespace Argo CD's install.yaml is applied to: created once, not by the syncs (as its docs say). */
const ARGOCD = 'argocd';
/** What the previous round leaves terminating: kube-prometheus's namespace and the two sets' CRD groups. */
const LEFT_NAMESPACES = ['monitoring'];
const LEFT_CRD_GROUPS = ['monitoring.coreos.com', 'argoproj.io'];
/** What a round holds terminating for the next one: kube-prometheus's Prometheus (its CRD and namespace wait for it). */
export const HELD_FOR_NEXT = '/apis/monitoring.coreos.com/v1/namespaces/monitoring/prometheuses/k8s';
const HOLD = 'recreate.test/hold';

/** The corpus served over http from 127.0.0.1: kube-prometheus as a .tar.gz, Argo CD as its one file. */
export interface CorpusServer {
  kubePrometheus: string;
  argoCd: string;
  close(): void;
}

export async function serveCorpus(): Promise<CorpusServer> {
  const dir = path.join(CORPUS, 'kube-prometheus', 'manifests');
  const yamls = (sub: string): { name: string; data: Buffer }[] =>
    readdirSync(path.join(dir, sub))
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .map((f) => ({ name: path.posix.join('manifests', sub, f), data: readFileSync(path.join(dir, sub, f)) }));
  const files = new Map<string, Buffer>([
    ['/kube-prometheus.tar.gz', await tarGz([...yamls('setup'), ...yamls('')])],
    ['/install.yaml', readFileSync(path.join(CORPUS, 'argo-cd', 'install.yaml'))],
  ]);
  const server = http.createServer((req, res) => {
    const file = files.get(req.url ?? '');
    if (!file) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': file.length }).end(file);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { kubePrometheus: `${base}/kube-prometheus.tar.gz`, argoCd: `${base}/install.yaml`, close: () => server.close() };
}

export interface Round {
  round: number;
  /** The API server was restarted just before it. */
  restarted: boolean;
  /** From the Syncs' creation to both Ready. */
  readyMs: number;
  /** What the previous round left terminating when this one created its Syncs. */
  terminating: string[];
  /** Its Syncs' reconciles that a timer brought after a wait, not a watch event (wakes.ts). */
  timerWakes: string[];
  /** The operator's log (JSON lines), kept until the run is judged. */
  log: string;
}

/** The two Syncs of a round: kube-prometheus and Argo CD. */
function specs(server: CorpusServer): Record<string, Record<string, unknown>> {
  return {
    'kube-prometheus': { source: { http: { url: server.kubePrometheus } }, paths: ['manifests'], wait: false, interval: '1h' },
    'argo-cd': { source: { http: { url: server.argoCd } }, defaultNamespace: ARGOCD, wait: false, interval: '1h' },
  };
}

/** How a round meets the last one's objects and leaves its own. */
export interface RoundOptions {
  /** Right after an API server restart. */
  restart: boolean;
  /** Let go what the last round held terminating (HELD_FOR_NEXT) once this round's kube-prometheus Sync waits for it. */
  release: boolean;
  /** Hold what this round prunes terminating for the next one (HELD_FOR_NEXT). */
  holdForNext: boolean;
}

/**
 * One round on `cluster`: (an API server restart,) a fresh operator with
 * debug logs, both Syncs created in a fresh namespace, timed to Ready, then
 * deleted (their prune done) and the operator stopped. What they pruned is
 * not waited for: the next round meets it terminating (held so, see above).
 */
export async function runRound(client: KubeClient, cluster: string, server: CorpusServer, round: number, opts: RoundOptions): Promise<Round> {
  const { restart } = opts;
  if (restart) await controlplane(['restart', cluster]);
  await ensureNamespace(client, ARGOCD);
  const namespace = `recreate-${round}-${Date.now().toString(36)}`;
  await ensureNamespace(client, namespace);
  const terminating = await stillTerminating(client);
  const op = await OperatorProcess.start(cluster, ['--log-level', 'debug']);
  try {
    const started = performance.now();
    const syncs = Object.entries(specs(server));
    await Promise.all(syncs.map(([name, spec]) => applySync(client, namespace, name, spec)));
    if (opts.release) await releaseOnceWaiting(client, namespace);
    const ready = await Promise.all(syncs.map(([name]) => readyTrue(client, namespace, name)));
    if (!ready.every(Boolean)) {
      const why = await hungRound(client, namespace, syncs.map(([name]) => name), round, op, terminating);
      // Deleted (pruned) as a round ends, or a later run on this cluster would meet their objects owned by syncs nobody runs.
      await Promise.all(syncs.map(([name]) => deleteSyncAndWait(client, namespace, name))).catch(() => undefined);
      throw new Error(why);
    }
    const readyMs = Math.round(performance.now() - started);
    if (opts.holdForNext) await holdTerminating(client, HELD_FOR_NEXT, [HOLD]);
    await Promise.all(syncs.map(([name]) => deleteSyncAndWait(client, namespace, name)));
    await client.request({ method: 'DELETE', path: `/api/v1/namespaces/${namespace}` });
    const ours = op.logs.filter((l) => l.namespace === namespace);
    return { round, restarted: restart, readyMs, terminating, timerWakes: timerWakes(ours), log: op.logs.map((l) => JSON.stringify(l)).join('\n') };
  } finally {
    await op.stop('SIGTERM');
  }
}

/** Sets (or, with null, clears) the finalizers of the object at `path`. */
export function holdTerminating(client: KubeClient, path: string, finalizers: string[] | null): Promise<unknown> {
  return client.request({ method: 'PATCH', path, contentType: 'application/merge-patch+json', body: { metadata: { finalizers } } });
}

/**
 * Lets the last round's held object (HELD_FOR_NEXT) go once this round's kube-prometheus Sync
 * has met what it holds (reconciled at its generation, and not Ready: its
 * namespace is still being deleted), so that the Sync is woken by its going.
 */
async function releaseOnceWaiting(client: KubeClient, namespace: string): Promise<void> {
  await eventually(
    `sync ${namespace}/kube-prometheus to wait for the last round's objects`,
    async () => {
      const s = await getSync(client, namespace, 'kube-prometheus');
      return s.status?.observedGeneration === s.metadata.generation && readyOf(s)?.status === 'False' ? true : undefined;
    },
    HUNG_AFTER_MS,
    100,
  );
  await holdTerminating(client, HELD_FOR_NEXT, null);
}

/**
 * How long a round may wait for its syncs to be Ready before it is called
 * hung: well past the slowest round seen (about 28 s), and short enough that
 * the round's diagnosis is written before jest's timeout. Only catches hangs.
 */
const HUNG_AFTER_MS = Number(process.env.RECREATE_HUNG_AFTER_MS ?? 90_000);

/** Ready=True at the current generation, or false after HUNG_AFTER_MS. */
function readyTrue(client: KubeClient, namespace: string, name: string): Promise<boolean> {
  return eventually(
    `sync ${namespace}/${name} Ready=True`,
    async () => {
      const s = await getSync(client, namespace, name);
      return s.status?.observedGeneration === s.metadata.generation && readyOf(s)?.status === 'True' ? true : undefined;
    },
    HUNG_AFTER_MS,
    100,
  ).catch(() => false);
}

/**
 * What to tell of a round whose syncs were not Ready in time: each one's Ready
 * condition, what still terminates, and where its operator's debug log is kept.
 */
async function hungRound(client: KubeClient, namespace: string, names: string[], round: number, op: OperatorProcess, terminating: string[]): Promise<string> {
  const conditions = await Promise.all(
    names.map(async (name) => {
      const ready = await getSync(client, namespace, name).then(readyOf, () => undefined);
      return `${name}: Ready=${ready?.status ?? '?'} ${ready?.reason ?? ''}: ${ready?.message ?? ''}`;
    }),
  );
  mkdirSync(RECREATE_LOGS, { recursive: true });
  const file = path.join(RECREATE_LOGS, `${Date.now()}-round-${round}-hung.log`);
  writeFileSync(file, `${op.logs.map((l) => JSON.stringify(l)).join('\n')}\n`);
  return [
    `round ${round}: not Ready after ${HUNG_AFTER_MS} ms (the last round's objects terminating when it began: ${terminating.join(', ') || 'none'}; now: ${(await stillTerminating(client)).join(', ') || 'none'})`,
    ...conditions,
    `its operator's debug log: ${file}`,
  ].join('\n');
}

export async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } }).catch((err: unknown) => {
    if ((err as { status?: number }).status !== 409) throw err;
  });
}

/** The namespaces and CRDs of the sets that are being deleted now. */
async function stillTerminating(client: KubeClient): Promise<string[]> {
  const namespaces = await client.request<{ items: KubeObject[] }>({ path: '/api/v1/namespaces' });
  const crds = await client.request<{ items: (KubeObject & { spec: { group: string } })[] }>({ path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions' });
  return [
    ...namespaces.items.filter((n) => LEFT_NAMESPACES.includes(n.metadata.name ?? '')),
    ...crds.items.filter((c) => LEFT_CRD_GROUPS.includes(c.spec.group)),
  ]
    .filter((o) => o.metadata.deletionTimestamp)
    .map((o) => `${o.kind ?? ''} ${o.metadata.name ?? ''}`.trim());
}

/**
 * The rounds in which a Sync waited for a timer rather than being woken by
 * what it waited for (a namespace or CRD of the last round gone, a CRD
 * established): each one's operator log is written to
 * RECREATE_LOGS/<run>-round-<n>.log (its `reconciled` lines and their causes
 * say what it waited for); returns what to tell of them.
 */
export function roundsWokenByTimers(rounds: Round[], run: string): string[] {
  const late = rounds.filter((r) => r.timerWakes.length > 0);
  // RECREATE_KEEP_LOGS=1 keeps every round's (to compare a slow round with a fast one).
  const kept = process.env.RECREATE_KEEP_LOGS === '1' ? rounds : late;
  if (kept.length > 0) mkdirSync(RECREATE_LOGS, { recursive: true });
  const fileOf = (r: Round): string => path.join(RECREATE_LOGS, `${run}-round-${r.round}.log`);
  for (const r of kept) writeFileSync(fileOf(r), `${r.log}\n`);
  return late.map((r) => `round ${r.round}${r.restarted ? ' (after an API server restart)' : ''}: ${r.timerWakes.join('; ')}; its operator's debug log: ${fileOf(r)}`);
}

/** One line per round, for the test's output. */
export function describeRound(r: Round): string {
  const left = r.terminating.length > 0 ? `, ${r.terminating.length} of the last round's objects still terminating` : '';
  const timers = r.timerWakes.length > 0 ? `, ${r.timerWakes.length} reconciles brought by a timer after a wait` : '';
  return `round ${r.round}: Ready in ${r.readyMs} ms${r.restarted ? ' (right after an API server restart)' : ''}${left}${timers}`;
}
