// Runs `syncprims run` (dist/cli/main.js) as a real process and reads its
// JSON logs, /metrics and /readyz.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import { clusterClient, closeClients, kubeconfigPath, ROOT } from './controlplane.js';
import { installCrds } from './crds.js';
import { eventually, steady } from './eventually.js';
import { sampleValue } from './prometheus.js';

export interface LogLine {
  level: string;
  msg: string;
  [key: string]: unknown;
}

/** An operator process a test can stop. */
type Stoppable = { stop(signal: NodeJS.Signals): Promise<unknown> };

/** The operators this test file started that still run: their cluster and the namespace they watch (`--namespace`; '' for all). */
const running = new Map<Stoppable, { cluster: string; namespace: string }>();

/**
 * Counts an operator process (`child`, run on `cluster` with `args`) among
 * those that stopOperatorsWatching stops: every operator a test file starts
 * must be, OperatorProcess or not.
 */
export function trackOperator(op: Stoppable, child: ChildProcess, cluster: string, args: string[]): void {
  const at = args.indexOf('--namespace');
  running.set(op, { cluster, namespace: at >= 0 ? (args[at + 1] ?? '') : '' });
  child.once('exit', () => running.delete(op));
}

/** Short leases for operators a test starts, in the proportions of the defaults (15 s, 10 s, 2 s): a takeover within seconds. */
export const SHORT_LEASE = ['--leader-election-lease-duration', '4s', '--leader-election-renew-deadline', '3s', '--leader-election-retry-period', '500ms'];

/**
 * Stops the operators of this test file that watch `namespace` of `cluster`
 * (with `--namespace`, or all namespaces): a test namespace is deleted after
 * them, so none can put a finalizer back on a sync whose finalizer the
 * cleanup has just released (the namespace would then stay Terminating for ever).
 */
export async function stopOperatorsWatching(cluster: string, namespace: string): Promise<void> {
  const watching = [...running].filter(([, w]) => w.cluster === cluster && (w.namespace === namespace || w.namespace === ''));
  await Promise.all(watching.map(([op]) => op.stop('SIGTERM')));
}

export class OperatorProcess {
  readonly logs: LogLine[] = [];
  readonly stderr: string[] = [];
  private exitCode: Promise<number | null>;
  ports: { metrics?: number; health?: number; debug?: number } = {};

  private constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const parsed = JSON.parse(line) as LogLine;
        this.logs.push(parsed);
        if (parsed.msg === 'endpoints listening') this.ports = parsed.ports as typeof this.ports;
      } catch {
        this.stderr.push(line);
      }
    });
    createInterface({ input: child.stderr! }).on('line', (line) => this.stderr.push(line));
    this.exitCode = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  /** Starts the operator on a cluster; resolves once its endpoints listen. */
  static async start(cluster: string, args: string[] = []): Promise<OperatorProcess> {
    const child = spawn(
      'node',
      [
        path.join(ROOT, 'dist', 'cli', 'main.js'),
        'run',
        '--kubeconfig',
        kubeconfigPath(cluster),
        '--metrics-addr',
        '127.0.0.1:0',
        '--health-addr',
        '127.0.0.1:0',
        // (only with --enable-debug-endpoints; a test's own --debug-addr comes later and wins)
        '--debug-addr',
        '127.0.0.1:0',
        ...args,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const op = new OperatorProcess(child);
    trackOperator(op, child, cluster, args);
    await eventually(`the operator's endpoints (stderr: ${op.stderr.join('\n')})`, async () =>
      op.ports.health ? true : undefined,
    );
    return op;
  }

  async waitForLog(what: string, match: (l: LogLine) => boolean, timeoutMs = 60_000): Promise<LogLine> {
    return eventually(what, async () => this.logs.find(match), timeoutMs);
  }

  /**
   * A reconcile of one object, since `since` (epoch ms), with `cause` among its causes (start the operator
   * with `--log-level debug`). Its line trails the status it wrote, so it is waited for; one that ended in a
   * retry with backoff ('reconciled; retrying with backoff', as when discovery had not caught up with a CRD) counts.
   */
  async waitForCause(kind: string, namespace: string, name: string, cause: string, since = 0): Promise<LogLine> {
    return this.waitForLog(`a reconcile of ${kind} ${namespace}/${name} caused by "${cause}"`, (l) =>
      String(l.msg).startsWith('reconciled') &&
      l.kind === kind &&
      l.namespace === namespace &&
      l.name === name &&
      Date.parse(String(l.time)) >= since &&
      ((l.causes as string[] | undefined) ?? []).includes(cause),
    );
  }

  /** Reconciles of one object so far (the `reconciled` debug lines: start it with `--log-level debug`). */
  reconcilesOf(kind: string, namespace: string, name: string): number {
    return this.logs.filter((l) => l.msg === 'reconciled' && l.kind === kind && l.namespace === namespace && l.name === name).length;
  }

  /** The reconciles of an object once none has been logged for `quietMs` (the echoes of its own writes handled). */
  async settledReconciles(kind: string, namespace: string, name: string, quietMs = 1_000): Promise<number> {
    return steady(() => this.reconcilesOf(kind, namespace, name), quietMs);
  }

  async readyz(): Promise<number> {
    const res = await fetch(`http://127.0.0.1:${this.ports.health}/readyz`);
    await res.text();
    return res.status;
  }

  /** Waits for /readyz to answer 200; a timeout says the operator's last warning (what it waits for, e.g. a missing CRD). */
  async waitReady(what = 'the operator ready', timeoutMs = 60_000): Promise<void> {
    await eventually(what, async () => {
      if ((await this.readyz()) === 200) return true;
      const warned = [...this.logs].reverse().find((l) => l.level === 'warn' || l.level === 'error');
      throw new Error(`/readyz says 503${warned ? `; its last warning: ${String(warned.msg)}` : ''}`);
    }, timeoutMs);
  }

  async metrics(): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${this.ports.metrics}/metrics`);
    return res.text();
  }

  /** The value of one sample, e.g. `metric('controller_runtime_reconcile_total', {controller: 'sync', result: 'success'})`. */
  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    return sampleValue(await this.metrics(), name, labels);
  }

  /** Its exit code, once it has exited (by itself, or stopped). */
  get exited(): Promise<number | null> {
    return this.exitCode;
  }

  /** Sends a signal and waits for the exit code. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill(signal);
    return this.exitCode;
  }
}


/**
 * For a test file that drives syncs: installs the CRDs, starts one operator
 * watching the file's namespace before its tests, and stops it after them.
 * `ready` receives an admin client and the operator; `args` are more flags.
 */
export function useSyncOperator(
  cluster: string,
  namespace: () => string,
  ready: (client: KubeClient, op: OperatorProcess) => void,
  args: string[] = [],
): void {
  let op: OperatorProcess | undefined;
  beforeAll(async () => {
    const client = await clusterClient(cluster);
    await installCrds(cluster);
    op = await OperatorProcess.start(cluster, ['--namespace', namespace(), ...args]);
    ready(client, op);
  });
  afterAll(async () => {
    await op?.stop('SIGTERM');
    await closeClients();
  });
}
