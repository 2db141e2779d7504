// Writes config/ (the operator's manifests as a kustomize base): `node dist/cli/install/write-config.js config/` (`make crds`).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { configFiles } from './config-files.js';

const dir = process.argv[2] ?? 'config';
await mkdir(dir, { recursive: true });
for (const { file, text } of configFiles()) {
  await writeFile(path.join(dir, file), text);
  console.log(`wrote ${path.join(dir, file)}`);
}
