import type { Command } from 'commander';
import { AddressPolicy, DEFAULT_DENY_CIDRS, DENY_CIDRS_FLAG, setOutboundAddressPolicy } from '../kube/address-policy.js';
import { setSourceMemoryBudget } from '../source/budget.js';
import { DEFAULT_SOURCE_LIMITS, setSourceLimits, SOURCE_LIMIT_FLAGS, type SourceLimits } from '../source/limits.js';
import { UsageError } from './errors.js';
import { durationFlag, wholeNumberFlag } from './flag-values.js';

/** The flags of the source limits (API.md "Source limits": flags change them). */
export interface SourceLimitFlags {
  sourceFetchTimeout: string;
  sourceMaxFetched: string;
  sourceMaxUnpacked: string;
  sourceMaxFiles: string;
  sourceMaxObjects: string;
  /** `--source-deny-cidrs`: where http sources (and, in the operator, kubeconfig servers) may never connect. */
  sourceDenyCidrs: string;
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
  command.option(
    `${DENY_CIDRS_FLAG} <cidrs>`,
    help(
      DENY_CIDRS_FLAG,
      'comma-separated CIDRs that http sources (the first request and every redirect) and the servers of kubeconfigs in Secrets may never connect to, checked on the address connected to; empty: none',
    ),
    DEFAULT_DENY_CIDRS.join(','),
  );
  return command;
}

/** The limits the flags say; throws, naming the flag, on a value that is not one. */
export function sourceLimitsOf(flags: SourceLimitFlags): SourceLimits {
  return {
    fetchTimeoutMs: positiveDuration(SOURCE_LIMIT_FLAGS.fetchTimeoutMs, flags.sourceFetchTimeout),
    maxFetchedBytes: wholeNumberFlag(SOURCE_LIMIT_FLAGS.maxFetchedBytes, flags.sourceMaxFetched, 'MiB') * MiB,
    maxUnpackedBytes: wholeNumberFlag(SOURCE_LIMIT_FLAGS.maxUnpackedBytes, flags.sourceMaxUnpacked, 'MiB') * MiB,
    maxFiles: wholeNumberFlag(SOURCE_LIMIT_FLAGS.maxFiles, flags.sourceMaxFiles, 'files'),
    maxObjects: wholeNumberFlag(SOURCE_LIMIT_FLAGS.maxObjects, flags.sourceMaxObjects, 'objects'),
  };
}

/** build and diff: the limits their flags say, for this process's reads of sources (a bad value is bad usage). */
export function useSourceLimitFlags(flags: SourceLimitFlags): void {
  const policy = addressPolicyOf(flags);
  try {
    setSourceLimits(sourceLimitsOf(flags));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  setOutboundAddressPolicy(policy);
}

/** The address policy `--source-deny-cidrs` says; a malformed CIDR is bad usage (exit 2), naming it. */
function addressPolicyOf(flags: Pick<SourceLimitFlags, 'sourceDenyCidrs'>): AddressPolicy {
  try {
    return AddressPolicy.parse(flags.sourceDenyCidrs);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * `syncprims run`: the limits, the memory budget (at least 8 MiB: one
 * manifest file of a few MiB must fit) and the address policy of this
 * process, checked before anything starts.
 */
export function useSourceFlags(flags: SourceFlags): void {
  const limits = sourceLimitsOf(flags);
  const budget = wholeNumberFlag('--source-memory-budget', flags.sourceMemoryBudget, 'MiB', 8) * MiB;
  const policy = addressPolicyOf(flags);
  setSourceLimits(limits);
  setSourceMemoryBudget(budget);
  setOutboundAddressPolicy(policy);
}

function positiveDuration(flag: string, text: string): number {
  const ms = durationFlag(flag, text);
  if (!(ms > 0)) throw new Error(`${flag} ${text}: want a duration above 0`);
  return ms;
}
