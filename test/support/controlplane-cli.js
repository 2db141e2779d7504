// The controlplane binary as the tests see it. Plain JavaScript because
// jest's globalSetup and globalTeardown load it outside the TypeScript transform.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const LOCAL = path.join(ROOT, '.local');
export const CONTROLPLANE = path.join(LOCAL, 'bin', 'controlplane');
/** Clusters this test run started (one name per line), for the global teardown. */
export const STARTED_FILE = path.join(LOCAL, 'test-run.started');
/** "ours" when this run started the supervisor, "reused" when it was already up. */
export const SUPERVISOR_FILE = path.join(LOCAL, 'test-run.supervisor');

/**
 * @typedef {{ name: string, port: number, featureGates?: string, kubeconfig: string, running: boolean }} ClusterStatus
 * @typedef {{ dir?: string, etcdPort?: number }} ControlPlaneOptions
 */

/**
 * Runs the controlplane binary; rejects with its stderr when it fails.
 * @param {string[]} args
 * @param {ControlPlaneOptions} [opts]
 * @returns {Promise<string>} its standard output
 */
export async function controlplane(args, opts = {}) {
  if (!existsSync(CONTROLPLANE)) {
    throw new Error(`${CONTROLPLANE} is missing: run 'make controlplane' (make test does it)`);
  }
  const globals = ['--dir', opts.dir ?? LOCAL];
  if (opts.etcdPort !== undefined) globals.push('--etcd-port', String(opts.etcdPort));
  try {
    const { stdout } = await run(CONTROLPLANE, [...globals, ...args], { timeout: 300_000 });
    return stdout;
  } catch (err) {
    const e = /** @type {{ stderr?: string, message: string }} */ (err);
    throw new Error(`controlplane ${args.join(' ')}: ${e.stderr?.trim() || e.message}`);
  }
}

/**
 * @param {ControlPlaneOptions} [opts]
 * @returns {Promise<{ running: boolean, clusters: ClusterStatus[] }>}
 */
export async function controlPlaneStatus(opts = {}) {
  return JSON.parse(await controlplane(['status', '--json'], opts));
}

/** @returns {Promise<string[]>} the clusters this test run started */
export async function startedByThisRun() {
  const text = await readFile(STARTED_FILE, 'utf8').catch(() => '');
  return [...new Set(text.split('\n').filter(Boolean))];
}
