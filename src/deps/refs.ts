import { isKind, type Kind } from '../api/kinds.js';
import type { RequiredStatus } from '../api/sync-spec.js';
import type { KubeObject } from '../kube/resources.js';

/** One sync object in the dependency graph. */
export interface SyncNode {
  kind: Kind;
  namespace: string;
  name: string;
}

/** One entry of `dependsOn`, with its defaults filled in. */
export interface Dependency extends SyncNode {
  requiredStatus: RequiredStatus;
}

/** `Kind/namespace/name`: the key of a node in the graph and its index. */
export function nodeKey(n: SyncNode): string {
  return `${n.kind}/${n.namespace}/${n.name}`;
}

/** `namespace/name`: the node's key in its kind's cache and controller queue. */
export function queueKey(n: SyncNode): string {
  return `${n.namespace}/${n.name}`;
}

export function parseNodeKey(key: string): SyncNode {
  const [kind, namespace, name] = key.split('/');
  if (!isKind(kind) || namespace === undefined || name === undefined) throw new Error(`not a node key: ${key}`);
  return { kind, namespace, name };
}

/** `Kind/name` within `namespace`, `Kind/namespace/name` outside it: how paths and messages name a node. */
export function displayNode(n: SyncNode, namespace: string): string {
  return n.namespace === namespace ? `${n.kind}/${n.name}` : `${n.kind}/${n.namespace}/${n.name}`;
}

export function nodeOf(kind: Kind, obj: KubeObject): SyncNode {
  return { kind, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
}

/**
 * The dependencies an object declares (`spec.dependsOn`; for a ProxySync the
 * one beside its template), read from the raw cached object: defaults filled
 * in, entries without a name skipped, duplicates dropped.
 */
export function dependenciesOf(obj: KubeObject): Dependency[] {
  const spec = obj.spec as { dependsOn?: unknown } | undefined;
  if (!Array.isArray(spec?.dependsOn)) return [];
  const seen = new Set<string>();
  const out: Dependency[] = [];
  for (const raw of spec.dependsOn as Record<string, unknown>[]) {
    if (typeof raw?.name !== 'string' || raw.name === '') continue;
    const kind = raw.kind === undefined ? 'Sync' : raw.kind;
    if (!isKind(kind)) continue;
    const dep: Dependency = {
      kind,
      name: raw.name,
      namespace: typeof raw.namespace === 'string' && raw.namespace !== '' ? raw.namespace : (obj.metadata.namespace ?? ''),
      requiredStatus: raw.requiredStatus === 'InProgress' ? 'InProgress' : 'Current',
    };
    const key = nodeKey(dep);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(dep);
  }
  return out;
}
