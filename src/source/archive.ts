import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar, { type Header } from 'tar-stream';
import { messageOf, SourceError } from './errors.js';
import { formatBytes, type SourceLimits } from './limits.js';

/**
 * In-memory extraction of a .tar.gz, refusing hostile archives whole: entries
 * that leave the root or are absolute, links pointing out of the root, device
 * and fifo entries, too many files, too many bytes once inflated (counted while
 * inflating, so a gzip bomb stops at the limit). Nothing is written to disk.
 *
 * Links (symbolic or hard) that stay inside the root are ignored, not followed:
 * manifests are taken from regular files only, so a link can neither reach
 * outside the archive nor make a loop, and the set of files is what the tar lists.
 */

export type ArchiveLimits = Pick<SourceLimits, 'maxUnpackedBytes' | 'maxFiles'>;

/** The regular files of an archive: normalized relative path -> content. */
export type ArchiveFiles = Map<string, Buffer>;

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
    const files = await readEntries(extract, limits, label);
    const failed = await flowing;
    if (failed) throw failed;
    return files;
  } catch (err) {
    source.destroy();
    gunzip.destroy();
    counter.destroy();
    extract.destroy();
    await flowing;
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
        done(new SourceError(`${label}: more than ${formatBytes(max)} once unpacked (the source limit); archive refused`));
        return;
      }
      done(null, chunk);
    },
  });
}

async function readEntries(extract: tar.Extract, limits: ArchiveLimits, label: string): Promise<ArchiveFiles> {
  const files: ArchiveFiles = new Map();
  let count = 0;
  for await (const entry of extract) {
    const { header } = entry;
    const name = checkEntry(header, label);
    if (header.type !== 'directory' && ++count > limits.maxFiles) {
      throw new SourceError(`${label}: more than ${limits.maxFiles} files (the source limit); archive refused`);
    }
    const content = await readAll(entry);
    if (name && (header.type === 'file' || header.type === 'contiguous-file')) files.set(name, content);
  }
  return files;
}

async function readAll(entry: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of entry) chunks.push(chunk as Buffer);
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
  if (normal === '..' || normal.startsWith('../')) return undefined;
  return normal === '.' || normal === './' ? '' : normal.replace(/\/+$/, '').replace(/^\.\//, '');
}
