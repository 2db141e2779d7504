// `syncprims build --path DIR` of a chart folder (one holding Chart.yaml): its
// files and values files read from disk here, then rendered by the operator's
// own step (renderSet, the Helm helper), as `helm template` renders a folder.
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { helmSpecSchema, type HelmSpec } from '../../api/helm.js';
import { sourceLimits, type ArchiveFiles, type GivenChart, type ValuesLayer } from '../../source/index.js';
import { CliError, UsageError } from '../errors.js';

/** Whether `given` is a folder holding a chart (its own Chart.yaml). */
export function isChartFolder(given: string): boolean {
  return existsSync(path.join(given, 'Chart.yaml'));
}

/**
 * The chart at `dir`, every file under it (hidden ones too: the helper
 * applies the chart's .helmignore and Helm's default rules, as `helm
 * template DIR` does; links are followed, as Helm follows them), and the
 * values files in the order given (`-f a -f b`: later wins).
 */
export async function readChart(dir: string, valuesFiles: string[]): Promise<GivenChart> {
  const files: ArchiveFiles = new Map();
  await walk(dir, '', files, { bytes: 0 });
  const values: ValuesLayer[] = [];
  for (const file of valuesFiles) values.push({ from: file, yaml: await readValues(file) });
  return { files, label: dir, values };
}

/** spec.helm of a chart folder: `.Release.Name` as given, else the sync's name (as the operator's default). */
export function chartSpec(releaseName: string | undefined, owner: string): HelmSpec {
  const name = releaseName ?? owner;
  const checked = helmSpecSchema.shape.releaseName.safeParse(name);
  if (!checked.success) {
    const given = releaseName !== undefined ? `--release-name ${name}` : `the release name ${name} (the sync's name; give --release-name)`;
    throw new UsageError(`${given}: ${checked.error.issues[0]?.message ?? 'not a Helm release name'}`);
  }
  return { releaseName: name };
}

async function readValues(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file or directory' : code === 'EISDIR' ? 'a directory' : (err as Error).message;
    throw new CliError(`--values ${file}: ${why}`, undefined, { cause: err });
  }
}

async function walk(root: string, rel: string, files: ArchiveFiles, read: { bytes: number }): Promise<void> {
  const { maxFiles, maxUnpackedBytes } = sourceLimits();
  for (const entry of (await readdir(path.join(root, rel))).sort()) {
    const p = rel ? `${rel}/${entry}` : entry;
    const info = await stat(path.join(root, p));
    if (info.isDirectory()) {
      await walk(root, p, files, read);
      continue;
    }
    if (!info.isFile()) throw new CliError(`--path ${root}: ${p} is not a regular file (Helm cannot load it either)`);
    read.bytes += info.size;
    if (files.size >= maxFiles) throw new CliError(`--path ${root}: more than ${maxFiles} files (the source limit, --source-max-files)`);
    if (read.bytes > maxUnpackedBytes) throw new CliError(`--path ${root}: more than ${maxUnpackedBytes} bytes (the source limit, --source-max-unpacked)`);
    files.set(p, await readFile(path.join(root, p)));
  }
}
