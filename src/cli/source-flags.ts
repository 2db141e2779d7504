import type { Command } from 'commander';
import { parseDuration } from '../api/duration.js';
import { DEFAULT_SOURCE_LIMITS, SOURCE_LIMIT_FLAGS, type SourceLimits } from '../source/limits.js';

/** `syncprims run`'s flags of what reading sources may cost (API.md "Source limits": flags change them). */
export interface SourceFlags {
  sourceMemoryBudget: string;
  sourceFetchTimeout: string;
  sourceMaxFetched: string;
  sourceMaxUnpacked: string;
  sourceMaxFiles: string;
  sourceMaxObjects: string;
}

const MiB = 1024 * 1024;

/** Adds the source flags to `syncprims run`. */
export function addSourceOptions(command: Command): Command {
  const d = DEFAULT_SOURCE_LIMITS;
  return command
    .option(
      '--source-memory-budget <MiB>',
      'the memory all sources being read at once may hold together (fetched bytes, manifest files unpacked from archives), in MiB; a read that does not fit waits, one that never could is refused (docs/source.md)',
      '128',
    )
    .option(`${SOURCE_LIMIT_FLAGS.fetchTimeoutMs} <duration>`, 'the whole of one HTTP fetch of a source (connecting, headers and body)', `${d.fetchTimeoutMs / 1000}s`)
    .option(`${SOURCE_LIMIT_FLAGS.maxFetchedBytes} <MiB>`, 'bytes one HTTP fetch of a source may bring, before unpacking, in MiB', String(d.maxFetchedBytes / MiB))
    .option(`${SOURCE_LIMIT_FLAGS.maxUnpackedBytes} <MiB>`, 'bytes an archive may inflate to, in MiB', String(d.maxUnpackedBytes / MiB))
    .option(`${SOURCE_LIMIT_FLAGS.maxFiles} <n>`, 'entries in an archive, directories aside', String(d.maxFiles))
    .option(`${SOURCE_LIMIT_FLAGS.maxObjects} <n>`, 'objects in one source, Lists flattened', String(d.maxObjects));
}

/** The limits the flags say; throws, naming the flag, on a value that is not one. */
export function sourceLimitsOf(flags: SourceFlags): SourceLimits {
  return {
    fetchTimeoutMs: positiveDuration(SOURCE_LIMIT_FLAGS.fetchTimeoutMs, flags.sourceFetchTimeout),
    maxFetchedBytes: wholeNumber(SOURCE_LIMIT_FLAGS.maxFetchedBytes, flags.sourceMaxFetched, 'MiB') * MiB,
    maxUnpackedBytes: wholeNumber(SOURCE_LIMIT_FLAGS.maxUnpackedBytes, flags.sourceMaxUnpacked, 'MiB') * MiB,
    maxFiles: wholeNumber(SOURCE_LIMIT_FLAGS.maxFiles, flags.sourceMaxFiles, 'files'),
    maxObjects: wholeNumber(SOURCE_LIMIT_FLAGS.maxObjects, flags.sourceMaxObjects, 'objects'),
  };
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
