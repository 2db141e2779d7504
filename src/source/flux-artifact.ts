import type { ArtifactSource } from '../api/source.js';
import { Discovery, UnknownKindError } from '../kube/discovery.js';
import { objectPath, type KubeObject } from '../kube/resources.js';
import { messageOf, SourceError } from './errors.js';
import { displayUrl } from './http.js';
import { describeRef, getReferenced, type ObjectRef, type SourceReader } from './kube-refs.js';

/** Where a Flux source object's artifact is, and what it must be. */
export interface FluxArtifactRef {
  url: string;
  /** The digest the artifact must have (`sha256:<hex>`), when its source object gives one. */
  digest?: string;
  /** The artifact's revision, as its source object gives it. */
  revision?: string;
  /** `GitRepository team/repo artifact http://...`, for messages. */
  label: string;
}

export interface FluxReader extends SourceReader {
  namespace: string;
  discovery?: Discovery;
  /** FetchSourceOptions.cached. */
  cached?: (ref: ObjectRef) => KubeObject | undefined;
  signal?: AbortSignal;
}

interface FluxArtifact {
  url?: string;
  digest?: string;
  /** Before Flux v2.1 (v1beta2): sha256 hex of the tarball. */
  checksum?: string;
  revision?: string;
}

interface FluxSourceObject {
  status?: { artifact?: FluxArtifact; conditions?: { type: string; status: string; message?: string }[] };
}

/** The artifact of the Flux source object the source names; a SourceError while it has none. */
export async function fluxArtifact(reader: FluxReader, source: ArtifactSource): Promise<FluxArtifactRef> {
  const ref: ObjectRef = { ...source, namespace: reader.namespace };
  const obj = await getFluxSource(reader, ref);
  const artifact = obj.status?.artifact;
  if (!artifact?.url) {
    const ready = obj.status?.conditions?.find((c) => c.type === 'Ready');
    const why = ready?.message ? ` (Ready=${ready.status}: ${ready.message})` : '';
    throw new SourceError(`${describeRef(ref)} has no artifact: not ready yet${why}; it is used once its status.artifact is set`);
  }
  const label = `${describeRef(ref)} artifact ${displayUrl(artifact.url)}`;
  const digest = artifact.digest ?? (artifact.checksum ? `sha256:${artifact.checksum}` : undefined);
  return { url: artifact.url, digest, revision: artifact.revision, label };
}

async function getFluxSource(reader: FluxReader, ref: ObjectRef): Promise<FluxSourceObject> {
  const cached = reader.account === undefined ? reader.cached?.(ref) : undefined;
  if (cached?.status !== undefined) return cached as FluxSourceObject;
  const discovery = reader.discovery ?? new Discovery(reader.client);
  let path: string;
  try {
    path = objectPath(await discovery.resolve(ref.apiVersion, ref.kind), ref.name, ref.namespace);
  } catch (err) {
    if (err instanceof UnknownKindError) {
      throw new SourceError(
        `spec.source.artifact: the cluster does not serve ${ref.kind} in ${ref.apiVersion}: is Flux (its source CRDs) installed?`,
        { cause: err },
      );
    }
    throw new SourceError(`looking up ${ref.kind} in ${ref.apiVersion}: ${messageOf(err)}`, { cause: err });
  }
  return getReferenced<FluxSourceObject>(reader, path, ref, 'spec.source.artifact.name', reader.signal);
}
