// The syncs of a namespace (or of all) as a dependency graph, for `tree`,
// `graph` and `doctor`: edges from `dependsOn` read as the operator reads
// them (deps/refs.ts), readiness judged by its rules (deps/readiness.ts),
// cycles found by its search (deps/cycle.ts).
import { cycleThrough } from '../deps/cycle.js';
import { unmetReason } from '../deps/readiness.js';
import { dependenciesOf, nodeKey, nodeOf, type Dependency, type SyncNode } from '../deps/refs.js';
import type { KubeClient } from '../kube/client.js';
import type { KubeObject } from '../kube/resources.js';
import type { PendingReason } from '../api/conditions.js';
import { listKinds } from './sync-api.js';

export interface SyncEdge {
  from: SyncNode;
  to: Dependency;
  /** Why `to` does not meet the dependency yet (NotFound when it does not exist); undefined when met. */
  unmet?: PendingReason;
}

export class SyncSet {
  private readonly byKey = new Map<string, KubeObject>();
  private readonly out = new Map<string, SyncEdge[]>();
  private readonly into = new Map<string, SyncEdge[]>();

  constructor(readonly objects: readonly KubeObject[]) {
    for (const o of objects) this.byKey.set(nodeKey(nodeOf(o.kind as SyncNode['kind'], o)), o);
    for (const o of objects) {
      const from = nodeOf(o.kind as SyncNode['kind'], o);
      for (const to of dependenciesOf(o)) {
        const edge: SyncEdge = { from, to, unmet: unmetReason(this.byKey.get(nodeKey(to)), to.requiredStatus) };
        push(this.out, nodeKey(from), edge);
        push(this.into, nodeKey(to), edge);
      }
    }
  }

  /** The object of a node, if it was read (it may be missing, or in a namespace not read). */
  get(node: SyncNode): KubeObject | undefined {
    return this.byKey.get(nodeKey(node));
  }

  /** What `node` depends on. */
  dependenciesOf(node: SyncNode): SyncEdge[] {
    return this.out.get(nodeKey(node)) ?? [];
  }

  /** What depends on `node`. */
  dependentsOf(node: SyncNode): SyncEdge[] {
    return this.into.get(nodeKey(node)) ?? [];
  }

  /** Every edge. */
  get edges(): SyncEdge[] {
    return [...this.out.values()].flat();
  }

  /** The shortest cycle through `node` (`[node, ..., node]` as keys), or undefined. */
  cycleThrough(node: SyncNode): string[] | undefined {
    return cycleThrough(nodeKey(node), (key) => (this.out.get(key) ?? []).map((e) => nodeKey(e.to)));
  }

  /** Each cycle once (as keys, first node repeated at the end), shortest first. */
  get cycles(): string[][] {
    const seen = new Set<string>();
    const found: string[][] = [];
    for (const key of this.byKey.keys()) {
      if (seen.has(key)) continue;
      const cycle = cycleThrough(key, (k) => (this.out.get(k) ?? []).map((e) => nodeKey(e.to)));
      if (!cycle) continue;
      cycle.forEach((k) => seen.add(k));
      found.push(cycle);
    }
    return found.sort((a, b) => a.length - b.length);
  }
}

/** Every Sync, RemoteSync, ProxySync and FleetSync in `namespace` (all namespaces when undefined), as a graph. */
export async function readSyncSet(client: KubeClient, namespace?: string): Promise<SyncSet> {
  const lists = await listKinds(client, namespace);
  return new SyncSet(lists.flatMap((l) => l.items));
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
