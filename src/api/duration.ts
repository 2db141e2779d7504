import { z } from 'zod';
import { CEL_KEY, matchingString } from './cel.js';

/**
 * Go duration syntax without sign: one or more `<number><unit>`, units ns, us
 * (or µs), ms, s, m, h, e.g. `30s`, `5m`, `1h30m`, `1.5h`. Also used, as is, in
 * the CRD's CEL rule (RE2), so it avoids backslashes.
 */
export const DURATION_PATTERN = '^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$';
const DURATION_RE = new RegExp(DURATION_PATTERN);
const PART_RE = /([0-9]+(?:[.][0-9]+)?)(ns|us|µs|ms|s|m|h)/g;

const UNIT_NS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

export const DURATION_MESSAGE = 'must be a duration such as 30s, 5m or 1h30m (units: ns, us, ms, s, m, h)';

export function isDuration(text: string): boolean {
  return DURATION_RE.test(text);
}

/**
 * Milliseconds in a Go-style duration (`1h30m` → 5_400_000; `1500us` → 1.5);
 * throws, saying what is expected, on anything else.
 */
export function parseDuration(text: string): number {
  if (!isDuration(text)) throw new Error(`invalid duration ${JSON.stringify(text)}: ${DURATION_MESSAGE}`);
  let ns = 0;
  for (const [, amount, unit] of text.matchAll(PART_RE)) ns += Number(amount) * (UNIT_NS[unit ?? ''] ?? NaN);
  return ns / 1e6;
}

/**
 * A duration field. The CRD checks it with a CEL rule (its message reads
 * better than the API server's "should match '<regex>'").
 */
export const durationSchema = matchingString(DURATION_PATTERN, DURATION_MESSAGE, 64);

/** The shortest `interval`: a shorter one (`0s`) re-reads the source and re-checks every object without pause. */
export const MIN_INTERVAL = '1s';
const MIN_INTERVAL_MESSAGE = `must be at least ${MIN_INTERVAL}: a shorter interval re-reads the source and re-checks every object without pause`;

/**
 * The `interval` field: a duration of at least MIN_INTERVAL. In the CRD, a
 * second CEL rule beside the pattern's (CEL's `duration()` reads Go's syntax).
 */
export const intervalSchema = z
  .string()
  .max(64)
  .refine(isDuration, { message: DURATION_MESSAGE })
  .refine((s) => !isDuration(s) || parseDuration(s) >= parseDuration(MIN_INTERVAL), { message: MIN_INTERVAL_MESSAGE })
  .meta({
    [CEL_KEY]: [
      { rule: `self.matches('${DURATION_PATTERN}')`, message: DURATION_MESSAGE },
      { rule: `!self.matches('${DURATION_PATTERN}') || duration(self) >= duration('${MIN_INTERVAL}')`, message: MIN_INTERVAL_MESSAGE },
    ],
  });
