import type { Command } from 'commander';
import { parseDuration } from '../api/duration.js';
import { DEFAULT_SOURCE_LIMITS, setSourceLimits, SOURCE_LIMIT_FLAGS, type SourceLimits } from '../source/limits.js';
import { UsageError } from './errors.js';

/** The flags of the source limits (API.md "Source limits": flags change them). */
export interface SourceLimitFlags {
  sourceFetchTimeout: string;
  sourceMaxFetched: string;
  sourceMaxUnpacked: string;
  sourceMaxFiles: string;
  sourceMaxObjects: string;
}

/** `syncprims run`'s flags of what reading sources may cost. */
export interface SourceFlags extends SourceLimitFlags {
  sourceMemoryBudget: string;
}

const MiB = 1024 * 1024;

/** Adds the source flags to `syncprims run`. */
export function addSourceOptions(command: Command): Command {
  command.option(
    '--source-memory-budget <MiB>',
    'the memory all sources being read at once may hold together (fetched bytes, manifest files unpacked from archives), in MiB; a read that does not fit waits, one that never could is refused (docs/source.md)',
    '128',
  );
  return addSourceLimitOptions(command);
}

/**
 * Adds the flags of the source limits: to `syncprims run`, and (`asOperator`)
 * to the commands that read sources as it does (build, diff), where they take
 * the values given to the operator.
 */
export function addSourceLimitOptions(command: Command, asOperator = false): Command {
  const d = DEFAULT_SOURCE_LIMITS;
  const help = (flag: string, what: string) => (asOperator ? `as given to the operator's ${flag}: ${what}` : what);
  const option = (limit: keyof typeof SOURCE_LIMIT_FLAGS, arg: string, what: string, byDefault: string) =>
    command.option(`${SOURCE_LIMIT_FLAGS[limit]} <${arg}>`, help(SOURCE_LIMIT_FLAGS[limit], what), byDefault);
  option('fetchTimeoutMs', 'duration', 'the whole of one HTTP fetch of a source (connecting, headers and body)', `${d.fetchTimeoutMs / 1000}s`);
  option('maxFetchedBytes', 'MiB', 'bytes one HTTP fetch of a source may bring, before unpacking, in MiB', String(d.maxFetchedBytes / MiB));
  option('maxUnpackedBytes', 'MiB', 'bytes an archive may inflate to, in MiB', String(d.maxUnpackedBytes / MiB));
  option('maxFiles', 'n', 'entries in an archive, directories aside', String(d.maxFiles));
  option('maxObjects', 'n', 'objects in one source, Lists flattened', String(d.maxObjects));
  return command;
}

/** The limits the flags say; throws, naming the flag, on a value that is not one. */
export function sourceLimitsOf(flags: SourceLimitFlags): SourceLimits {
  return {
    fetchTimeoutMs: positiveDuration(SOURCE_LIMIT_FLAGS.fetchTimeoutMs, flags.sourceFetchTimeout),
    maxFetchedBytes: wholeNumber(SOURCE_LIMIT_FLAGS.maxFetchedBytes, flags.sourceMaxFetched, 'MiB') * MiB,
    maxUnpackedBytes: wholeNumber(SOURCE_LIMIT_FLAGS.maxUnpackedBytes, flags.sourceMaxUnpacked, 'MiB') * MiB,
    maxFiles: wholeNumber(SOURCE_LIMIT_FLAGS.maxFiles, flags.sourceMaxFiles, 'files'),
    maxObjects: wholeNumber(SOURCE_LIMIT_FLAGS.maxObjects, flags.sourceMaxObjects, 'objects'),
  };
}

/** build and diff: the limits their flags say, for this process's reads of sources (a bad value is bad usage). */
export function useSourceLimitFlags(flags: SourceLimitFlags): void {
  try {
    setSourceLimits(sourceLimitsOf(flags));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** --source-memory-budget: at least 8 MiB (one manifest file of a few MiB must fit); in bytes. */
export function sourceMemoryBudgetOf(text: string): number {
  const mib = Number(text);
  if (!Number.isInteger(mib) || mib < 8) throw new Error(`--source-memory-budget ${text}: want a whole number of MiB, at least 8`);
  return mib * MiB;
}

function wholeNumber(flag: string, text: string, unit: string): number {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n) || n < 1) throw new Error(`${flag} ${text}: want a whole number of ${unit}, at least 1`);
  return n;
}

function positiveDuration(flag: string, text: string): number {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (err) {
    throw new Error(`${flag} ${text}: ${(err as Error).message}`);
  }
  if (!(ms > 0)) throw new Error(`${flag} ${text}: want a duration above 0`);
  return ms;
}
