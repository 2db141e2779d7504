import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar, { type Header } from 'tar-stream';
import type { BudgetLease } from './budget.js';
import { messageOf, SourceError } from './errors.js';
import { formatBytes, SOURCE_LIMIT_FLAGS, type SourceLimits } from './limits.js';

/**
 * In-memory extraction of a .tar.gz, refusing hostile archives whole: entries
 * that leave the root or are absolute, links pointing out of the root, device
 * and fifo entries, too many files, too many bytes once inflated (counted while
 * inflating, so a gzip bomb stops at the limit). Nothing is written to disk.
 *
 * Links (symbolic or hard) that stay inside the root are ignored, not followed:
 * manifests are taken from regular files only, so a link can neither reach
 * outside the archive nor make a loop, and the set of files is what the tar lists.
 *
 * Memory: the archive streams through; only the content of the files `keep`
 * accepts (those that will be parsed) is held, and each of its chunks is
 * taken from a lease of the process-wide memory budget (budget.ts) before it
 * is kept, so a bomb made of manifest files stops at that budget too.
 */

export type ArchiveLimits = Pick<SourceLimits, 'maxUnpackedBytes' | 'maxFiles'>;

/**
 * The regular files of an archive: normalized relative path -> content. Files
 * that `keep` refused are listed with empty content (their names still count,
 * to check `paths` and to name what the archive holds).
 */
export type ArchiveFiles = Map<string, Buffer>;

export interface ExtractOptions {
  /** Which files' content to keep (by normalized path); all when omitted. */
  keep?: (path: string) => boolean;
  /** Charged with every byte kept; unbounded when omitted. */
  lease?: BudgetLease;
  signal?: AbortSignal;
}

const SLICE = 64 * 1024;

/** The input in slices, so that inflating can stop soon after a limit is passed. */
function* slices(data: Buffer): Generator<Buffer> {
  for (let at = 0; at < data.length; at += SLICE) yield data.subarray(at, at + SLICE);
}

/**
 * Extracts a gzip-compressed tar. `label` names the archive in messages (its URL).
 * `input` is the compressed bytes, or a stream of them.
 */
export async function extractTarGz(
  input: Buffer | AsyncIterable<Buffer> | Iterable<Buffer>,
  limits: ArchiveLimits,
  label: string,
  options: ExtractOptions = {},
): Promise<ArchiveFiles> {
  const source = Readable.from(Buffer.isBuffer(input) ? slices(input) : input, { objectMode: false });
  const gunzip = zlib.createGunzip({ chunkSize: SLICE });
  const counter = inflatedCounter(limits.maxUnpackedBytes, label);
  const extract = tar.extract();
  // Settles once every stage has ended; its failure is looked at after the entries.
  const flowing = pipeline(source, gunzip, counter, extract).then(
    () => undefined,
    (err: unknown) => err,
  );
  try {
    const files = await readEntries(extract, limits, label, options);
    const failed = await flowing;
    if (failed) throw failed;
    return files;
  } catch (err) {
    source.destroy();
    gunzip.destroy();
    counter.destroy();
    extract.destroy();
    await flowing;
    if (options.signal?.aborted) throw new SourceError(`${label}: cancelled`, { cause: err });
    throw asArchiveError(err, label);
  }
}

function asArchiveError(err: unknown, label: string): SourceError {
  if (err instanceof SourceError) return err;
  const code = (err as { code?: string }).code ?? '';
  const what = code.startsWith('Z_') ? 'not a valid gzip stream' : 'not a valid tar archive';
  return new SourceError(`${label}: ${what} (${messageOf(err)}); expected a .tar.gz`, { cause: err });
}

/** Passes bytes on while fewer than `max` have passed; fails as soon as more would. */
function inflatedCounter(max: number, label: string): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      total += chunk.length;
      if (total > max) {
        done(new SourceError(`${label}: more than ${formatBytes(max)} once unpacked (the source limit, ${SOURCE_LIMIT_FLAGS.maxUnpackedBytes}); archive refused`));
        return;
      }
      done(null, chunk);
    },
  });
}

const EMPTY = Buffer.alloc(0);

async function readEntries(extract: tar.Extract, limits: ArchiveLimits, label: string, options: ExtractOptions): Promise<ArchiveFiles> {
  const files: ArchiveFiles = new Map();
  let count = 0;
  for await (const entry of extract) {
    const { header } = entry;
    const name = checkEntry(header, label);
    if (header.type !== 'directory' && ++count > limits.maxFiles) {
      throw new SourceError(`${label}: more than ${limits.maxFiles} files (the source limit, ${SOURCE_LIMIT_FLAGS.maxFiles}); archive refused`);
    }
    const isFile = Boolean(name) && (header.type === 'file' || header.type === 'contiguous-file');
    // A later entry of the same path replaces an earlier one (as tar does): the earlier content is dropped.
    const earlier = isFile ? files.get(name as string) : undefined;
    if (earlier) options.lease?.release(earlier.length);
    if (isFile && (options.keep?.(name as string) ?? true)) {
      files.set(name as string, await readAll(entry, options));
      continue;
    }
    // Drained, not kept: its bytes are still counted while inflating (the unpack limit).
    for await (const _ of entry) void _;
    if (isFile) files.set(name as string, EMPTY);
  }
  return files;
}

async function readAll(entry: AsyncIterable<unknown>, { lease, signal }: ExtractOptions): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of entry) {
    await lease?.take((chunk as Buffer).length, signal);
    chunks.push(chunk as Buffer);
  }
  // A copy: a chunk may be a slice of a larger buffer that it would keep alive.
  return Buffer.concat(chunks);
}

const REFUSED_TYPES = new Set(['character-device', 'block-device', 'fifo']);

/** The entry's normalized path ('' for the root itself); throws for anything refused. */
function checkEntry(header: Header, label: string): string | undefined {
  const refuse = (why: string): SourceError =>
    new SourceError(`${label}: entry ${JSON.stringify(header.name)} ${why}; archive refused`);
  if (REFUSED_TYPES.has(header.type)) throw refuse(`is a ${header.type} (only files, folders and links are allowed)`);
  const name = insideRoot(header.name);
  if (name === undefined) throw refuse('is an absolute path or leaves the archive root (..)');
  if (header.type === 'symlink' || header.type === 'link') {
    const target = header.linkname ?? '';
    // A symlink's target is relative to the link's folder; a hard link's to the root.
    const base = header.type === 'symlink' ? path.posix.dirname(name) : '';
    if (isAbsolute(target) || insideRoot(path.posix.join(base, target)) === undefined) {
      throw refuse(`is a link to ${JSON.stringify(target)}, outside the archive root`);
    }
  }
  return name;
}

function isAbsolute(p: string): boolean {
  return p.startsWith('/') || p.startsWith('\\') || /^[A-Za-z]:/.test(p);
}

/** `p` normalized relative to the root (`./a//b/` -> `a/b`), or undefined when it is absolute or leaves the root. */
export function insideRoot(p: string): string | undefined {
  if (isAbsolute(p)) return undefined;
  const normal = path.posix.normalize(p.replace(/\\/g, '/'));
  // Judged again once normalized: `./C:/x` or `.\\/C:` is a drive path too.
  if (normal === '..' || normal.startsWith('../') || isAbsolute(normal)) return undefined;
  return normal === '.' || normal === './' ? '' : normal.replace(/\/+$/, '').replace(/^\.\//, '');
}
