/** What one fetch of a source may cost (API.md "Source limits"; flags change them). */
export interface SourceLimits {
  /** The whole of one HTTP fetch: connecting, headers and body (default 60 s). */
  fetchTimeoutMs: number;
  /** Bytes fetched over HTTP, before unpacking (default 50 MiB). */
  maxFetchedBytes: number;
  /** Bytes inflated from an archive, counted while decompressing (default 200 MiB). */
  maxUnpackedBytes: number;
  /** Entries in an archive other than directories (default 10,000). */
  maxFiles: number;
  /** Objects in the whole source, after flattening Lists (default 10,000). */
  maxObjects: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_SOURCE_LIMITS: Readonly<SourceLimits> = Object.freeze({
  fetchTimeoutMs: 60_000,
  maxFetchedBytes: 50 * MiB,
  maxUnpackedBytes: 200 * MiB,
  maxFiles: 10_000,
  maxObjects: 10_000,
});

/** The `syncprims run` flag that sets each limit: a source refused by one names it. */
export const SOURCE_LIMIT_FLAGS = {
  fetchTimeoutMs: '--source-fetch-timeout',
  maxFetchedBytes: '--source-max-fetched',
  maxUnpackedBytes: '--source-max-unpacked',
  maxFiles: '--source-max-files',
  maxObjects: '--source-max-objects',
} as const satisfies Record<keyof SourceLimits, string>;

let operatorLimits: Readonly<SourceLimits> = DEFAULT_SOURCE_LIMITS;

/** The limits of this process (`syncprims run`'s flags; the defaults unless set). */
export function sourceLimits(): Readonly<SourceLimits> {
  return operatorLimits;
}

/** Sets the limits of this process (`syncprims run`, from its flags); unset fields keep their defaults. */
export function setSourceLimits(limits: Partial<SourceLimits>): void {
  operatorLimits = Object.freeze({ ...DEFAULT_SOURCE_LIMITS, ...limits });
}

/** A size for people: `50 MiB`, `1.5 KiB`, `12 bytes`. */
export function formatBytes(n: number): string {
  if (n >= MiB) return `${+(n / MiB).toFixed(1)} MiB`;
  if (n >= 1024) return `${+(n / 1024).toFixed(1)} KiB`;
  return `${n} bytes`;
}
