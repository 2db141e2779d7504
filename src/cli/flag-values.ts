import { parseDuration } from '../api/duration.js';

/** A duration flag's milliseconds; throws naming the flag and its value. */
export function durationFlag(flag: string, text: string): number {
  try {
    return parseDuration(text);
  } catch (err) {
    throw new Error(`${flag} ${text}: ${(err as Error).message}`);
  }
}

/** A flag that is a whole number of `unit`, at least `min`; throws naming the flag and its value. */
export function wholeNumberFlag(flag: string, text: string, unit: string, min = 1): number {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n) || n < min) throw new Error(`${flag} ${text}: want a whole number of ${unit}, at least ${min}`);
  return n;
}
