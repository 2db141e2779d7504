// Writes the CRDs into a folder: `node dist/api/write-crds.js crds/` (`make crds`).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { crdFiles } from './crd-files.js';

const dir = process.argv[2] ?? 'crds';
await mkdir(dir, { recursive: true });
for (const { file, text } of crdFiles()) {
  await writeFile(path.join(dir, file), text);
  console.log(`wrote ${path.join(dir, file)}`);
}
