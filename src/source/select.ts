import { SourceError } from './errors.js';
import path from 'node:path';
import { insideRoot, type ArchiveFiles } from './archive.js';
import { isKustomizationFile, isUnder, kustomizationRoots } from './kustomize-files.js';

/** A manifest file chosen from an archive. */
export interface ManifestFile {
  path: string;
  data: Buffer;
}

const MANIFEST = /\.(ya?ml|json)$/i;

function isManifestFile(p: string): boolean {
  return MANIFEST.test(p);
}

/** What `paths` select: plain manifest files, and the folders built with kustomize (kustomize.ts). */
export interface SelectedSource {
  manifests: ManifestFile[];
  /** Folders holding a kustomization, sorted: each is built, and its files are not read as manifests. */
  kustomizations: string[];
}

/**
 * The manifest files (`*.yaml`, `*.yml`, `*.json`) that `paths` name, sorted by
 * path: each path is a file, or a folder taken recursively; `.` is the root.
 * Without `paths`, every manifest file. A path that matches nothing is an error.
 */
export function selectManifests(files: ArchiveFiles, paths: string[] | undefined, label: string): ManifestFile[] {
  return selectSource(files, paths, label).manifests;
}

/**
 * As selectManifests, but a selected folder that holds a kustomization (or a
 * folder below one that does, the topmost) is a kustomization to build: its
 * files are left to kustomize, not read as manifests.
 */
export function selectSource(files: ArchiveFiles, paths: string[] | undefined, label: string): SelectedSource {
  const chosen = new Set<string>();
  const roots = new Set<string>();
  for (const [i, given] of (paths ?? ['.']).entries()) {
    const found = matching(files, given, `paths[${i}]`, label);
    const built = kustomizationRoots(files.keys(), found.folder);
    for (const r of built) roots.add(r);
    const plain = found.files.filter((f) => !built.some((r) => isUnder(f, r)));
    if (plain.length === 0 && built.length === 0 && paths) {
      throw new SourceError(
        `${label}: paths[${i}] ${JSON.stringify(given)} matches no .yaml, .yml or .json file in the archive${hint(files)}`,
      );
    }
    for (const p of plain) chosen.add(p);
  }
  const kustomizations = [...roots].sort();
  const manifests = [...chosen]
    .filter((p) => !kustomizations.some((r) => isUnder(p, r)))
    .sort()
    .map((p) => ({ path: p, data: files.get(p) as Buffer }));
  return { manifests, kustomizations };
}

/** The files a path names, and the folder it names (undefined when it names a file). */
function matching(files: ArchiveFiles, given: string, field: string, label: string): { files: string[]; folder?: string } {
  const p = insideRoot(given.trim());
  if (p === undefined) {
    throw new SourceError(
      `${label}: ${field} ${JSON.stringify(given)} must be a relative path inside the archive (no leading /, no ..)`,
    );
  }
  if (files.has(p)) {
    // A kustomization file named: its folder is built.
    if (isKustomizationFile(p)) return { files: [], folder: path.posix.dirname(p).replace(/^\.$/, '') };
    if (!isManifestFile(p)) {
      throw new SourceError(`${label}: ${field} ${JSON.stringify(given)} is not a .yaml, .yml or .json file`);
    }
    return { files: [p] };
  }
  return { files: [...files.keys()].filter((f) => isUnder(f, p) && isManifestFile(f)), folder: p };
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
