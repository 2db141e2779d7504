// Waiting on a collection watch for named objects to pass a test (Ready=True
// for their generation, Ready=False for a reason), timed; and the memory of a
// process from /proc. Shared by bench/remote.ts and bench/fleet.ts.
import { readFileSync } from 'node:fs';
import type { KubeObject } from '../src/kube/resources.js';
import type { CollectionWatch, Seen } from './collection-watch.js';
import { statusOf, withTimeout } from './support.js';

export const readyOf = (o: KubeObject) => statusOf(o).conditions?.find((c) => c.type === 'Ready');

/** Ready=True for the current generation. */
export function readyTrue(o: KubeObject): boolean {
  const ready = readyOf(o);
  return ready?.status === 'True' && ready.observedGeneration === o.metadata.generation;
}

/** Ready=False with this reason. */
export const readyFalse =
  (reason?: string) =>
  (o: KubeObject): boolean => {
    const ready = readyOf(o);
    return ready?.status === 'False' && (reason === undefined || ready.reason === reason);
  };

/**
 * The first time each of `names` was seen passing `test` (ms after `t0`), from
 * the latest objects and the events to come; the not-Ready reasons seen on the
 * way, counted per event.
 */
export class Tracker {
  readonly at = new Map<string, number>();
  readonly firstObject = new Map<string, KubeObject>();
  readonly reasons: Record<string, number> = {};
  readonly all: Promise<void>;
  private resolve: (() => void) | undefined;
  private readonly stop: () => void;

  constructor(
    private readonly watch: CollectionWatch,
    private readonly names: Set<string>,
    private readonly test: (o: KubeObject) => boolean,
    private readonly t0: number,
  ) {
    this.all = new Promise((resolve) => (this.resolve = resolve));
    this.stop = watch.listen((seen) => this.see(seen));
    for (const name of names) {
      const seen = watch.latestOf(name);
      if (seen && seen.at >= t0) this.see(seen);
    }
    if (names.size === 0) this.resolve?.();
  }

  private see({ at, object }: Seen): void {
    const name = object.metadata.name ?? '';
    if (!this.names.has(name) || this.at.has(name)) return;
    if (this.test(object)) {
      this.at.set(name, at - this.t0);
      this.firstObject.set(name, object);
      if (this.at.size === this.names.size) this.resolve?.();
      return;
    }
    const ready = readyOf(object);
    if (ready && ready.status !== 'True') {
      const key = `${ready.status}/${ready.reason ?? '?'}`;
      this.reasons[key] = (this.reasons[key] ?? 0) + 1;
    }
  }

  /** Resolves when all passed; on timeout, rejects with how many did and the reasons seen. */
  async wait(what: string, ms: number): Promise<void> {
    const failed = new Promise<never>((_, reject) => {
      const timer = setInterval(() => {
        if (this.watch.failed) reject(this.watch.failed);
      }, 1_000);
      timer.unref();
      void this.all.then(() => clearInterval(timer));
    });
    failed.catch(() => undefined);
    try {
      await withTimeout(what, Promise.race([this.all, failed]), ms);
    } catch (err) {
      throw new Error(`${String(err)}; ${this.at.size} of ${this.names.size} did; not-Ready reasons seen: ${JSON.stringify(this.reasons)}`);
    } finally {
      this.stop();
    }
  }

  /** ms from t0 until `fraction` of them passed. */
  quantile(fraction: number): number {
    const times = [...this.at.values()].sort((a, b) => a - b);
    return times[Math.max(0, Math.ceil(times.length * fraction) - 1)] ?? NaN;
  }

  get last(): number {
    return Math.max(...this.at.values());
  }
}

/** VmRSS and VmHWM (kB) from /proc/<pid>/status. */
export function memoryKiB(pid: number | undefined): { rss: number; hwm: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rss: field('VmRSS'), hwm: field('VmHWM') };
  } catch {
    return { rss: NaN, hwm: NaN };
  }
}

