// A CPU profile of `node --cpu-prof` (a .cpuprofile file) summed up: self time
// by function and by package or source directory, idle and GC apart. Used by
// bench/many-syncs.ts and bench/fleet.ts.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export interface ProfileSummary {
  totalMs: number;
  /** (idle), (program), (garbage collector), in ms. */
  idleMs: number;
  gcMs: number;
  /** The functions with the most self time: `name (file:line)` → ms. */
  top: [string, number][];
  /** Self time by package or source directory → ms. */
  byArea: [string, number][];
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

function areaOf(url: string): string {
  const mod = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (mod) return mod;
  const src = /dist\/([^/]+)\//.exec(url)?.[1];
  if (src) return `src/${src}`;
  return url.startsWith('node:') ? 'node internals' : url === '' ? '(native, gc, idle)' : 'other';
}

export function summarizeProfile(file: string): ProfileSummary {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  let totalUs = 0;
  let idle = 0;
  let gc = 0;
  p.samples.forEach((id, i) => {
    const us = p.timeDeltas[i] ?? 0;
    totalUs += us;
    const f = byId.get(id);
    const name = f?.functionName || '(anonymous)';
    if (name === '(idle)') idle += us;
    if (name === '(garbage collector)') gc += us;
    const key = f?.url ? `${name} (${f.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${f.lineNumber + 1})` : name;
    self.set(key, (self.get(key) ?? 0) + us);
    const area = areaOf(f?.url ?? '');
    areas.set(area, (areas.get(area) ?? 0) + us);
  });
  const sorted = (m: Map<string, number>, n: number): [string, number][] =>
    [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => [k, v / 1000]);
  return { totalMs: totalUs / 1000, idleMs: idle / 1000, gcMs: gc / 1000, top: sorted(self, 15), byArea: sorted(areas, 10) };
}

/** The main thread's profile in `dir` (one per thread; a worker thread would write its own): the largest. */
export function largestProfile(dir: string): string | undefined {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(dir, f))
    .sort((a, b) => statSync(b).size - statSync(a).size)[0];
}
