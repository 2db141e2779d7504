// Builds real .tar.gz archives for tests, with exactly the entries given
// (hostile names and links included: nothing is normalized here).
import { gzipSync } from 'node:zlib';
import tar, { type Header } from 'tar-stream';

export interface TarEntry {
  name: string;
  /** Default `file`. */
  type?: Header['type'];
  linkname?: string;
  /** File content; ignored for other types. */
  data?: string | Buffer;
}

/** The uncompressed tar. */
export async function tarBytes(entries: TarEntry[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const read = (async () => {
    for await (const chunk of pack) chunks.push(chunk as Buffer);
  })();
  for (const e of entries) {
    const type = e.type ?? 'file';
    const header: Partial<Header> & { name: string } = { name: e.name, type, mode: 0o644, mtime: new Date(0) };
    if (e.linkname !== undefined) header.linkname = e.linkname;
    if (type === 'character-device' || type === 'block-device') Object.assign(header, { devmajor: 1, devminor: 3 });
    await new Promise<void>((resolve, reject) => {
      pack.entry(header, type === 'file' ? (e.data ?? '') : '', (err) => (err ? reject(err) : resolve()));
    });
  }
  pack.finalize();
  await read;
  return Buffer.concat(chunks);
}

export async function tarGz(entries: TarEntry[]): Promise<Buffer> {
  return gzipSync(await tarBytes(entries));
}
