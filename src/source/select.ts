import { SourceError } from './errors.js';
import { insideRoot, type ArchiveFiles } from './archive.js';

/** A manifest file chosen from an archive. */
export interface ManifestFile {
  path: string;
  data: Buffer;
}

const MANIFEST = /\.(ya?ml|json)$/i;

function isManifestFile(p: string): boolean {
  return MANIFEST.test(p);
}

/**
 * The manifest files (`*.yaml`, `*.yml`, `*.json`) that `paths` name, sorted by
 * path: each path is a file, or a folder taken recursively; `.` is the root.
 * Without `paths`, every manifest file. A path that matches nothing is an error.
 */
export function selectManifests(files: ArchiveFiles, paths: string[] | undefined, label: string): ManifestFile[] {
  const chosen = new Set<string>();
  for (const [i, given] of (paths ?? ['.']).entries()) {
    const found = matching(files, given, `paths[${i}]`, label);
    if (found.length === 0 && paths) {
      throw new SourceError(
        `${label}: paths[${i}] ${JSON.stringify(given)} matches no .yaml, .yml or .json file in the archive${hint(files)}`,
      );
    }
    for (const p of found) chosen.add(p);
  }
  return [...chosen].sort().map((p) => ({ path: p, data: files.get(p) as Buffer }));
}

function matching(files: ArchiveFiles, given: string, field: string, label: string): string[] {
  const p = insideRoot(given.trim());
  if (p === undefined) {
    throw new SourceError(
      `${label}: ${field} ${JSON.stringify(given)} must be a relative path inside the archive (no leading /, no ..)`,
    );
  }
  if (files.has(p)) {
    if (!isManifestFile(p)) {
      throw new SourceError(`${label}: ${field} ${JSON.stringify(given)} is not a .yaml, .yml or .json file`);
    }
    return [p];
  }
  const prefix = p === '' ? '' : `${p}/`;
  return [...files.keys()].filter((f) => f.startsWith(prefix) && isManifestFile(f));
}

/** A few of the archive's top-level names, to help fix a wrong path. */
function hint(files: ArchiveFiles): string {
  const top = [...new Set([...files.keys()].map((f) => f.split('/')[0] ?? f))].sort();
  if (top.length === 0) return ' (the archive holds no files)';
  const shown = top.slice(0, 10).join(', ');
  return ` (top level: ${shown}${top.length > 10 ? ', ...' : ''})`;
}

/**
 * Whether selectManifests(files, paths) could choose a file, known from its
 * path alone: what extraction must keep (the content of everything else is
 * drained, never held). A path given badly matches nothing here; selectManifests
 * then says why.
 */
export function manifestFilter(paths: string[] | undefined): (path: string) => boolean {
  const given = (paths ?? ['.']).map((p) => insideRoot(p.trim())).filter((p): p is string => p !== undefined);
  return (p) => isManifestFile(p) && given.some((g) => g === '' || p === g || p.startsWith(`${g}/`));
}
