import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what its last full GC kept,
 * in percent. V8's own factor goes up to 4x while a program allocates fast:
 * an operator applying thousands of objects at once promotes short-lived
 * request state (in-flight HTTP/2 streams, responses) out of the young
 * generation quicker than it frees it, and its resident set grew to more
 * than twice its live heap (bench/many-syncs.ts: 1,000 Syncs x 10 objects,
 * docs/runtime.md#memory). 1.3x bounds that for a few more full GCs (their
 * marking runs concurrently).
 */
export const HEAP_GROWING_PERCENT = 30;

/**
 * Sets V8's heap growing factor for this process (it is read at every full
 * GC, so it takes effect at run time), unless node was started with
 * `--heap-growing-percent` of its own; returns the percent in force.
 */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): number | undefined {
  const given = execArgv.find((a) => /^--heap[-_]growing[-_]percent(=|$)/.test(a));
  if (given !== undefined) {
    const value = Number(given.split('=')[1]);
    return Number.isFinite(value) ? value : undefined;
  }
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return HEAP_GROWING_PERCENT;
}
