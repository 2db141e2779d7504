import { z } from 'zod';
import { CEL_KEY } from './cel.js';

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

/** The shortest `interval`: a shorter one (`0s`) re-reads the source and re-checks every object without pause. */
export const MIN_INTERVAL = '1s';
const MIN_INTERVAL_MESSAGE = `must be at least ${MIN_INTERVAL}: a shorter interval re-reads the source and re-checks every object without pause`;

/**
 * A duration whose numbers have at most 5 digits of hours, 7 of minutes, 9
 * of seconds (12 of ms, 15 of us, 18 of ns). Within 64 characters no sum of
 * such parts exceeds what a Go duration holds (about 2,562,047h), which CEL's
 * `duration()` refuses with a type conversion error instead of our message.
 */
const BOUNDED_DURATION_PATTERN =
  '^([0-9]{1,5}([.][0-9]+)?h|[0-9]{1,7}([.][0-9]+)?m|[0-9]{1,9}([.][0-9]+)?s|[0-9]{1,12}([.][0-9]+)?ms|[0-9]{1,15}([.][0-9]+)?(us|µs)|[0-9]{1,18}([.][0-9]+)?ns)+$';
const BOUNDED_DURATION_RE = new RegExp(BOUNDED_DURATION_PATTERN);
const BOUNDED_DURATION_MESSAGE = 'is too long: at most 5 digits of hours (99999h, over 11 years), 7 of minutes or 9 of seconds';

const PATTERN_RULE = { rule: `self.matches('${DURATION_PATTERN}')`, message: DURATION_MESSAGE };
const BOUND_RULE = { rule: `!self.matches('${DURATION_PATTERN}') || self.matches('${BOUNDED_DURATION_PATTERN}')`, message: BOUNDED_DURATION_MESSAGE };

const boundedDuration = () =>
  z
    .string()
    .max(64)
    .refine(isDuration, { message: DURATION_MESSAGE })
    .refine((s) => !isDuration(s) || BOUNDED_DURATION_RE.test(s), { message: BOUNDED_DURATION_MESSAGE });

/**
 * A duration field such as `timeout`: Go's syntax, and no longer than a Go
 * duration holds (a longer one would mean "never", and Flux's Go types refuse
 * it). In the CRD, a CEL rule each, so each refusal has its own message (it
 * reads better than the API server's "should match '<regex>'").
 */
export const boundedDurationSchema = boundedDuration().meta({ [CEL_KEY]: [PATTERN_RULE, BOUND_RULE] });

/**
 * The `interval` field: a bounded duration of at least MIN_INTERVAL. In the
 * CRD, the minimum's CEL rule follows the bound's (CEL's `duration()` reads
 * Go's syntax, and is only called on a duration it can hold).
 */
export const intervalSchema = boundedDuration()
  .refine((s) => !BOUNDED_DURATION_RE.test(s) || parseDuration(s) >= parseDuration(MIN_INTERVAL), { message: MIN_INTERVAL_MESSAGE })
  .meta({
    [CEL_KEY]: [PATTERN_RULE, BOUND_RULE, { rule: `!self.matches('${BOUNDED_DURATION_PATTERN}') || duration(self) >= duration('${MIN_INTERVAL}')`, message: MIN_INTERVAL_MESSAGE }],
  });
