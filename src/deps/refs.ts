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
  /** A gate of a FleetSync's rollout wave (`spec.rollout.waves[].gates.dependsOn`): it holds that wave, not the FleetSync. */
  gate?: true;
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
  const entries = declaredEntries(obj);
  if (entries.length === 0) return [];
  const seen = new Set<string>();
  const out: Dependency[] = [];
  for (const { raw, gate } of entries) {
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
    if (gate) dep.gate = true;
    out.push(dep);
  }
  return out;
}

/** The raw entries: `spec.dependsOn`, then a FleetSync's wave gates (`spec.rollout.waves[].gates.dependsOn`). */
function declaredEntries(obj: KubeObject): { raw: Record<string, unknown>; gate: boolean }[] {
  const spec = obj.spec as { dependsOn?: unknown; rollout?: { waves?: { gates?: { dependsOn?: unknown } }[] } } | undefined;
  const list = (value: unknown): Record<string, unknown>[] => (Array.isArray(value) ? (value as Record<string, unknown>[]) : []);
  const waves = Array.isArray(spec?.rollout?.waves) ? spec.rollout.waves : [];
  return [
    ...list(spec?.dependsOn).map((raw) => ({ raw, gate: false })),
    ...waves.flatMap((w) => list(w?.gates?.dependsOn)).map((raw) => ({ raw, gate: true })),
  ];
}
