import type { GitSource, OciSource } from '../api/repository-sources.js';
import type { RevisionData } from './children.js';

/**
 * A FleetSync whose template reads a Git branch, tag or semver range (or an
 * OCI tag or range) resolves it once and gives every child the commit (or
 * digest) it names (docs/fleet.md, "One commit for the whole fleet"): the
 * revision data holds the pinned ref, so a new commit is a new revision that
 * rolls through the waves like any template change, and no wave ever mixes
 * commits. A ref that names its commit or digest already is left as it is.
 */

export type PinnableSource = { git: GitSource; oci?: undefined } | { oci: OciSource; git?: undefined };

/** What the ref names now: the commit or digest, and (for a semver range) the tag chosen. */
export type ResolveRef = (source: PinnableSource) => Promise<{ resolved: string; ref?: Record<string, string> }>;

/** The template's source when it is a Git or OCI source whose ref moves; undefined otherwise. */
export function movingSource(data: RevisionData): PinnableSource | undefined {
  const source = (data.template as { spec?: { source?: { git?: GitSource; oci?: OciSource } } }).spec?.source;
  if (source?.git && source.git.ref?.commit === undefined) return { git: source.git };
  if (source?.oci && source.oci.ref?.digest === undefined) return { oci: source.oci };
  return undefined;
}

/** The revision data with the template's moving ref pinned (a copy; `data` is left as it is). */
export async function pinSources(data: RevisionData, resolve: ResolveRef): Promise<RevisionData> {
  const source = movingSource(data);
  if (!source) return data;
  const { resolved, ref } = await resolve(source);
  const pinned = structuredClone(data);
  const spec = (pinned.template as { spec: { source: { git?: GitSource; oci?: OciSource } } }).spec;
  // A range is pinned as the tag it chose (a range and a commit together would be refused).
  const named = (r: { semver?: string } | undefined): Record<string, string> => (r?.semver !== undefined ? { ...(ref?.tag ? { tag: ref.tag } : {}) } : { ...(r as Record<string, string>) });
  if (source.git) spec.source.git = { ...source.git, ref: { ...named(source.git.ref), commit: resolved } };
  else spec.source.oci = { ...(source.oci as OciSource), ref: { ...named(source.oci?.ref), digest: resolved } };
  return pinned;
}
