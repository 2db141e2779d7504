// What the TypeScript benchmarks share: the local control plane, the CRDs,
// waiting, and the small statistics they report.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { customResourceDefinitions } from '../src/api/crds.js';
import { GROUP, KIND_NAMES, VERSION } from '../src/api/kinds.js';
import { FIELD_MANAGER } from '../src/api/marks.js';
import { serverSideApply } from '../src/kube/apply.js';
import type { KubeClient } from '../src/kube/client.js';
import { Discovery } from '../src/kube/discovery.js';
import { collectionPath, type ResourceInfo } from '../src/kube/resources.js';

const run = promisify(execFile);
/** USER_HZ: the unit of utime and stime in /proc/<pid>/stat. */
const CLOCK_TICKS_PER_SECOND = 100;

export const ROOT = process.cwd();
export const LOCAL = path.join(ROOT, '.local');
export const CONTROLPLANE = path.join(LOCAL, 'bin', 'controlplane');
export const SYNCS: ResourceInfo = { group: GROUP, version: VERSION, kind: 'Sync', resource: KIND_NAMES.Sync.plural, namespaced: true };

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function controlplane(args: string[]): Promise<string> {
  const { stdout } = await run(CONTROLPLANE, ['--dir', LOCAL, ...args], { timeout: 300_000 });
  return stdout;
}

export async function serverVersion(client: KubeClient): Promise<string> {
  const v = await client.request<{ gitVersion: string }>({ path: '/version' });
  return v.gitVersion;
}

export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 300_000, everyMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await check().catch(() => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

export function median(values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}

export function processCpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

export async function installCrds(client: KubeClient): Promise<void> {
  const discovery = new Discovery(client);
  for (const crd of customResourceDefinitions()) {
    await serverSideApply(client, discovery, crd, { fieldManager: FIELD_MANAGER, force: true });
  }
  for (const crd of customResourceDefinitions()) {
    await until(`CRD ${crd.metadata.name} to be Established`, () => crdEstablished(client, crd.metadata.name));
  }
  await until('Syncs to be served', async () => {
    await client.request({ path: collectionPath(SYNCS), query: { limit: 1 } });
    return true;
  });
}

export async function crdEstablished(client: KubeClient, name: string): Promise<boolean> {
  const crd = await client.request<{ status?: { conditions?: { type: string; status: string }[] } }>({
    path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
  });
  return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
}
