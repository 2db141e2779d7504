import { createHash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { canonicalJson } from '../kube/canonical-json.js';
import type { SyncKind } from '../api/kinds.js';
import { ORIGIN_LABEL } from '../api/marks.js';
import { ownerMarks } from './owner.js';
import type { CommonMetadata } from '../api/sync-spec.js';
import { splitApiVersion, type KubeObject } from '../kube/resources.js';
import { compareIds, displayNameOf, objectId } from './inventory.js';

/**
 * Rendering: from the objects a source yields to the objects that are applied
 * (API.md "Revision" and "Marks on applied objects"). Pure but for `scopeOf`.
 *
 * - Input objects are never changed; the result holds deep copies, in input
 *   order, of the objects that rendered without error. A caller refuses the
 *   set when `errors` is not empty.
 * - Server-owned fields are dropped: `metadata.uid`, `resourceVersion`,
 *   `generation`, `creationTimestamp`, `deletionTimestamp`,
 *   `deletionGracePeriodSeconds`, `selfLink`, `managedFields`, and the
 *   top-level `status` of every kind. Status belongs to controllers: where
 *   it is a subresource, an apply to the object ignores it anyway; where it
 *   is not, a status from the manifests would fight the controller that
 *   writes it. So manifests exported with `kubectl get -o yaml` apply cleanly
 *   and their revision does not change with such fields.
 * - Namespaces: a namespaced object without one gets `defaultNamespace`, or is
 *   an error naming it when there is none; a cluster-scoped object naming a
 *   namespace is an error naming it (kubectl drops it silently; a namespace on
 *   a cluster-scoped object is more often a mistake worth seeing). The scope
 *   comes from `scopeOf` (the server); a kind the server does not serve takes
 *   the `spec.scope` of a CustomResourceDefinition in the same set that
 *   defines that group, version and kind; a kind that neither knows is an
 *   error naming the object, and listed in `unknownKinds` (`CRDNotInstalled`).
 *   An empty `metadata.namespace` counts as none. A rejection of `scopeOf`
 *   (the server is unreachable) rejects `render`.
 * - Labels and annotations: the object's own, then `commonMetadata`, which
 *   wins on equal keys (as Flux's `commonMetadata` does), then our marks,
 *   which always win: the three owner labels, and `syncprims.dev/origin` when
 *   `origin` is given. Without `origin`, an origin label in the manifests is
 *   removed: a manifest cannot claim to come from another cluster.
 * - A core Secret's `stringData` is merged into `data`, base64-encoded, as
 *   the API server stores it (so our field manager owns what is stored).
 * - Two objects with one id (namespace, name, group, kind; the version does
 *   not count) are an error naming the id; the first is kept.
 */

export type Scope = 'Namespaced' | 'Cluster';

/** The scope the server gives a kind; undefined when it does not serve it. */
export type ScopeOf = (apiVersion: string, kind: string) => Promise<Scope | undefined>;

export interface RenderOwner {
  kind: SyncKind;
  namespace: string;
  name: string;
}

export interface RenderOptions {
  owner: RenderOwner;
  defaultNamespace?: string;
  commonMetadata?: CommonMetadata;
  /** The managing cluster's id, on objects applied to remote clusters. */
  origin?: string;
  scopeOf: ScopeOf;
  /**
   * An object of a kind whose scope nobody gives: an error (the default: it
   * cannot be applied), or, with `asWritten`, rendered with its namespace as
   * written (none added, none refused) and listed in `unknownKinds` only:
   * `syncprims build` offline, which has no server to ask.
   */
  unknownScope?: 'error' | 'asWritten';
}

export interface KindKey {
  apiVersion: string;
  kind: string;
}

export interface RenderResult {
  objects: KubeObject[];
  errors: string[];
  /** Kinds that neither the server nor a CRD in the set defines (their objects are in `errors`, but with `unknownScope: 'asWritten'`). */
  unknownKinds: KindKey[];
}

const SERVER_METADATA = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
  'managedFields',
] as const;

export async function render(objects: readonly unknown[], opts: RenderOptions): Promise<RenderResult> {
  const errors: string[] = [];
  const valid = copyValid(objects, errors);
  const scopes = await resolveScopes(valid, opts.scopeOf);
  // What else waited on the same discovery answer (the watches primed while this renders) goes
  // out first: the rest of this is synchronous, and for a large set would hold their requests back.
  await nextTurn();
  const unknown = new Map<string, KindKey>();
  const seen = new Set<string>();
  const rendered: KubeObject[] = [];
  for (const obj of valid) {
    const scope = scopes.get(kindKey(obj));
    if (scope === undefined) unknown.set(kindKey(obj), { apiVersion: obj.apiVersion, kind: obj.kind });
    const error = scope === undefined && opts.unknownScope === 'asWritten' ? emptyNamespaceDropped(obj) : placeNamespace(obj, scope, opts.defaultNamespace);
    if (error !== undefined) {
      errors.push(error);
      continue;
    }
    applyMetadata(obj, opts);
    stringDataToData(obj);
    const id = objectId(obj);
    if (seen.has(id)) {
      errors.push(`${displayNameOf(obj)} appears more than once in the set (id ${id})`);
      continue;
    }
    seen.add(id);
    rendered.push(obj);
  }
  return { objects: rendered, errors, unknownKinds: [...unknown.values()] };
}

/** Deep copies of the well-formed objects, without server-owned fields; an error for each other one. */
function copyValid(objects: readonly unknown[], errors: string[]): KubeObject[] {
  const valid: KubeObject[] = [];
  objects.forEach((value, index) => {
    const error = shapeError(value);
    if (error !== undefined) {
      errors.push(`object ${index + 1} (${describeRaw(value)}): ${error}`);
      return;
    }
    valid.push(stripServerFields(structuredClone(value as KubeObject)));
  });
  return valid;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

function shapeError(value: unknown): string | undefined {
  if (!isRecord(value)) return 'not an object';
  if (!isNonEmptyString(value.apiVersion)) return 'apiVersion is missing';
  if (!isNonEmptyString(value.kind)) return 'kind is missing';
  const meta = value.metadata;
  if (!isRecord(meta)) return 'metadata is missing';
  if (!isNonEmptyString(meta.name)) return 'metadata.name is missing (generateName cannot be applied)';
  if (meta.namespace !== undefined && typeof meta.namespace !== 'string') return 'metadata.namespace is not a string';
  return stringMapError(meta, 'labels') ?? stringMapError(meta, 'annotations');
}

function stringMapError(meta: Record<string, unknown>, field: 'labels' | 'annotations'): string | undefined {
  const map = meta[field];
  if (map === undefined || map === null) return undefined;
  if (!isRecord(map)) return `metadata.${field} is not a map`;
  const bad = Object.keys(map).find((key) => typeof map[key] !== 'string');
  return bad === undefined ? undefined : `metadata.${field}.${bad} is not a string (quote it)`;
}

/** What can be said of a malformed object, for its error. */
function describeRaw(value: unknown): string {
  // Not what it says: a source may be a Secret.
  if (!isRecord(value)) return Array.isArray(value) ? 'a list' : value === null ? 'null' : `a ${typeof value}`;
  const meta = isRecord(value.metadata) ? value.metadata : {};
  const kind = typeof value.kind === 'string' && value.kind !== '' ? value.kind : '<no kind>';
  const name = typeof meta.name === 'string' && meta.name !== '' ? meta.name : '<no name>';
  return typeof meta.namespace === 'string' && meta.namespace !== ''
    ? `${kind}/${meta.namespace}/${name}`
    : `${kind}/${name}`;
}

function stripServerFields(obj: KubeObject): KubeObject {
  for (const field of SERVER_METADATA) delete obj.metadata[field];
  if (obj.metadata.labels === null) delete obj.metadata.labels;
  if (obj.metadata.annotations === null) delete obj.metadata.annotations;
  delete obj.status;
  return obj;
}

/**
 * A core Secret's `stringData` merged into `data` (base64), as the API server
 * stores it (a `stringData` key wins over the same `data` key). Applied as
 * `stringData`, a value is tracked by nobody: the stored object has no
 * `stringData`, so our managedFields entry named fields the object lacks, and
 * a hand edit of the value was not seen as drift. Flux's ssa does the same.
 * A value that is not a string is left for the API server to refuse.
 */
function stringDataToData(obj: KubeObject): void {
  if (obj.apiVersion !== 'v1' || obj.kind !== 'Secret') return;
  const secret = obj as KubeObject & { data?: unknown; stringData?: unknown };
  const { stringData, data } = secret;
  if (!isRecord(stringData) || !Object.values(stringData).every((v) => typeof v === 'string')) return;
  if (data !== undefined && data !== null && !isRecord(data)) return;
  const encoded = Object.fromEntries(Object.entries(stringData as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]));
  secret.data = { ...(data ?? {}), ...encoded };
  delete secret.stringData;
}

/** `apiVersion|kind`: how a kind is keyed (scopes, kinds awaited). */
export function kindKey(obj: KindKey): string {
  return `${obj.apiVersion}|${obj.kind}`;
}

/** The scope of every kind in the set: the server's, else a CRD's in the set. */
async function resolveScopes(objects: readonly KubeObject[], scopeOf: ScopeOf): Promise<Map<string, Scope | undefined>> {
  const fromCrds = crdScopes(objects);
  const keys = [...new Map(objects.map((o) => [kindKey(o), { apiVersion: o.apiVersion, kind: o.kind }])).entries()];
  const answers = await Promise.all(keys.map(([, k]) => scopeOf(k.apiVersion, k.kind)));
  return new Map(keys.map(([key], i) => [key, answers[i] ?? fromCrds.get(key)]));
}

function isCustomResourceDefinition(obj: KindKey): boolean {
  return obj.kind === 'CustomResourceDefinition' && splitApiVersion(obj.apiVersion).group === 'apiextensions.k8s.io';
}

/** `apiVersion|kind` -> scope, for every version of every CRD in the set. */
export function crdScopes(objects: readonly KubeObject[]): Map<string, Scope> {
  const scopes = new Map<string, Scope>();
  for (const crd of objects.filter(isCustomResourceDefinition)) {
    const spec = isRecord(crd.spec) ? crd.spec : {};
    const names = isRecord(spec.names) ? spec.names : {};
    if (!isNonEmptyString(spec.group) || !isNonEmptyString(names.kind)) continue;
    if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') continue;
    for (const version of crdVersions(spec)) scopes.set(`${spec.group}/${version}|${names.kind}`, spec.scope);
  }
  return scopes;
}

/** `spec.versions[].name` (v1), or `spec.version` (v1beta1). */
function crdVersions(spec: Record<string, unknown>): string[] {
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  const names = versions.map((v: unknown) => (isRecord(v) ? v.name : undefined)).filter(isNonEmptyString);
  if (isNonEmptyString(spec.version)) names.push(spec.version);
  return names;
}

/** An empty namespace counts as none (placeNamespace's first rule); nothing else is decided without a scope. */
function emptyNamespaceDropped(obj: KubeObject): undefined {
  if (obj.metadata.namespace === '') delete obj.metadata.namespace;
  return undefined;
}

/** Gives the object its namespace; the error naming it when it cannot. */
function placeNamespace(obj: KubeObject, scope: Scope | undefined, defaultNamespace?: string): string | undefined {
  if (obj.metadata.namespace === '') delete obj.metadata.namespace;
  const namespace = obj.metadata.namespace;
  const name = displayNameOf(obj);
  if (scope === undefined) {
    return `${name}: the server does not serve ${obj.kind} in ${obj.apiVersion}, and no CustomResourceDefinition in the set defines it`;
  }
  if (scope === 'Cluster') {
    return namespace === undefined ? undefined : `${name}: ${obj.kind} is cluster-scoped but names namespace "${namespace}"`;
  }
  if (namespace !== undefined) return undefined;
  if (defaultNamespace === undefined || defaultNamespace === '') {
    return `${name}: ${obj.kind} is namespaced but names no namespace, and there is no defaultNamespace`;
  }
  obj.metadata.namespace = defaultNamespace;
  return undefined;
}

/** The object's labels and annotations, then commonMetadata's, then our marks. */
function applyMetadata(obj: KubeObject, opts: RenderOptions): void {
  const labels: Record<string, string> = { ...obj.metadata.labels, ...opts.commonMetadata?.labels };
  // Without an origin, one the manifests claim goes: they cannot say they come from another cluster.
  delete labels[ORIGIN_LABEL];
  obj.metadata.labels = Object.assign(labels, ownerMarks({ ...opts.owner, origin: opts.origin }));
  const annotations = { ...obj.metadata.annotations, ...opts.commonMetadata?.annotations };
  if (Object.keys(annotations).length > 0) obj.metadata.annotations = annotations;
}

/** `sha256:<hex>` of the canonical JSON of the rendered objects sorted by id (API.md "Revision"). */
export function revisionOf(objects: readonly KubeObject[]): string {
  const docs = objects
    .map((obj) => ({ id: objectId(obj), json: canonicalJson(obj) }))
    .sort((a, b) => compareIds(a.id, b.id) || compareIds(a.json, b.json));
  const json = `[${docs.map((d) => d.json).join(',')}]`;
  return `sha256:${createHash('sha256').update(json).digest('hex')}`;
}

