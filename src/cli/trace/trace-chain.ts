// What `syncprims trace` says of an object and of each sync above it, as
// data (`-o yaml|json` print it; trace-render.ts draws the text). Pure: the
// owner from the labels the apply code puts on what it applies, the source
// and target of a sync from its spec, its state from its status.
import { isKind, type Kind } from '../../api/kinds.js';
import { ORIGIN_LABEL } from '../../api/marks.js';
import { objectId } from '../../apply/inventory.js';
import { ownerLabelValues } from '../../apply/owner.js';
import type { KubeObject } from '../../kube/resources.js';
import { displayUrl } from '../../source/http.js';
import { syncState } from '../../views/tree-model.js';
import type { ReadyStatus } from '../../views/sync-rows.js';
import { inventoryEntries } from '../tree/tree-objects.js';

/** The sync that the owner labels of an object name. */
export interface OwnerRef {
  kind: Kind;
  namespace: string;
  name: string;
  /** `syncprims.dev/origin`: the object was applied from another (the managing) cluster, whose id this is. */
  origin?: string;
}

/** The object traced. */
export interface TracedObject {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  /** The API server it is in. */
  server: string;
}

/** A sync in the chain: the one that applied the object, then the one that applied that sync, and so on. */
export interface TraceLink {
  kind: Kind;
  namespace: string;
  name: string;
  /** The API server it is in; absent when that cluster could not be told. */
  server?: string;
  /** Reached through the origin label of what it applied: the managing cluster's id. */
  origin?: string;
  /** False when it was not found (or, its cluster not known, not looked for). */
  found: boolean;
  source?: string;
  paths?: string[];
  /** RemoteSync and ProxySync: the cluster they apply to. */
  target?: string;
  /** ProxySync: the Sync it keeps there. */
  remoteSync?: string;
  revision?: string;
  /** When it differs from `revision`: the revision being applied, or last tried. */
  attemptedRevision?: string;
  ready?: ReadyStatus;
  reason?: string;
  message?: string;
  suspended?: true;
  /** Whether its inventory lists what it is said to have applied. */
  listsObject?: boolean;
}

export interface Trace {
  object: TracedObject;
  /** The sync that applied the object first, then the sync that applied that one, up to one nobody applied. */
  appliedBy: TraceLink[];
  /** Why the chain stops short (a sync missing, a managing cluster not given): one line. */
  unresolved?: string;
}

/** The sync an object's owner labels name, or undefined when it has none (nobody applied it). */
export function ownerOf(obj: KubeObject): OwnerRef | undefined {
  const { kind, namespace, name } = ownerLabelValues(obj);
  if (!isKind(kind) || !name) return undefined;
  const owner: OwnerRef = { kind, namespace, name };
  const origin = obj.metadata.labels?.[ORIGIN_LABEL];
  if (origin) owner.origin = origin;
  return owner;
}

/** The facts of a sync that applied `applied`. */
export function linkOf(sync: KubeObject, server: string, applied: KubeObject, origin?: string): TraceLink {
  const { kind, namespace, name, ready, reason, message, revision } = syncState(sync);
  const status = (sync.status ?? {}) as { lastAttemptedRevision?: string; remote?: { namespace?: string; name?: string } };
  const spec = (sync.spec ?? {}) as SpecLike & { template?: { spec?: SpecLike }; suspend?: boolean };
  const remote = sync.kind === 'ProxySync' && status.remote?.name ? `Sync ${status.remote.namespace ?? ''}/${status.remote.name}` : undefined;
  const attempted = status.lastAttemptedRevision !== revision ? status.lastAttemptedRevision : undefined;
  return withoutUndefined({
    kind,
    namespace,
    name,
    server,
    origin,
    found: true,
    ...sourceOf(sync.kind === 'ProxySync' ? spec.template?.spec : spec),
    target: targetOf(spec),
    remoteSync: remote,
    revision,
    attemptedRevision: attempted || undefined,
    ready,
    reason,
    message,
    suspended: spec.suspend === true ? (true as const) : undefined,
    listsObject: inventoryEntries(sync).some((e) => e.id === objectId(applied)),
  });
}

/** The object without its undefined fields (so that they do not show as `null`s or empty keys). */
function withoutUndefined<T extends object>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

/** A link for a sync known only by the labels that name it. */
export function unfoundLink(owner: OwnerRef, server?: string): TraceLink {
  return withoutUndefined({ kind: owner.kind, namespace: owner.namespace, name: owner.name, server: server || undefined, origin: owner.origin, found: false });
}

interface SourceLike {
  inline?: unknown[];
  configMap?: { name?: string; key?: string };
  secret?: { name?: string; key?: string };
  http?: { url?: string; digest?: string };
  artifact?: { apiVersion?: string; kind?: string; name?: string };
}

interface SpecLike {
  source?: SourceLike;
  paths?: string[];
  kubeConfig?: { secretRef?: { name?: string; key?: string } };
  clusterRef?: { name?: string };
}

/** The source of a sync spec, in a few words. */
export function sourceOf(spec: SpecLike | undefined): Pick<TraceLink, 'source' | 'paths'> {
  const paths = Array.isArray(spec?.paths) && spec.paths.length > 0 ? spec.paths : undefined;
  return withoutUndefined({ source: spec?.source && describeSource(spec.source), paths });
}

function describeSource(s: SourceLike): string | undefined {
  const key = (ref: { key?: string }): string => (ref.key ? ` key ${ref.key}` : '');
  if (s.inline) return `inline, ${s.inline.length} object${s.inline.length === 1 ? '' : 's'}`;
  if (s.configMap) return `ConfigMap ${s.configMap.name}${key(s.configMap)}`;
  if (s.secret) return `Secret ${s.secret.name}${key(s.secret)}`;
  if (s.http) return `${displayUrl(s.http.url ?? '')}${s.http.digest ? ` (digest ${s.http.digest})` : ''}`;
  if (s.artifact) return `${s.artifact.kind} ${s.artifact.name} (${s.artifact.apiVersion})`;
  return undefined;
}

/** A RemoteSync's or ProxySync's cluster: `Cluster edge-1`, or `kubeconfig Secret edge-1-kubeconfig key value`. */
export function targetOf(spec: SpecLike): string | undefined {
  if (spec.clusterRef?.name) return `Cluster ${spec.clusterRef.name}`;
  const ref = spec.kubeConfig?.secretRef;
  if (ref?.name) return `kubeconfig Secret ${ref.name} key ${ref.key ?? 'value'}`;
  return undefined;
}
