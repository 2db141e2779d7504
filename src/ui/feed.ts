// The view, kept in step with the operator's shared informers of the three
// kinds: a change marks it stale and, after a short quiet spell (a burst of
// changes makes one update), every subscriber (each open page's event
// stream) is sent the new view. A remote cluster that stops or starts
// answering does the same (the registry's live reachability), and so does a
// change of the cluster inventory (a cluster's values). Nothing is watched
// that the operator does not watch already.
import type { FleetReachability } from '../clusters/fleet-reachability.js';
import type { InventoryCluster } from '../clusters/inventory.js';
import type { KubeObject } from '../kube/resources.js';
import type { Informer } from '../runtime/informer.js';
import { buildView, type View } from './model.js';

/** How long after a change the view is sent: changes within it go out together. */
export const UPDATE_DELAY_MS = 100;

export type ViewListener = (view: View, version: number) => void;

/** The cluster inventory as the view reads it (fleet-inventory.ts). */
export interface ViewInventory {
  /** The namespace's clusters; undefined: not read (yet). */
  list(namespace: string): readonly InventoryCluster[] | undefined;
  /** Calls `fn` when a cluster of any namespace changes (and once the inventory is read). Returns the way to stop. */
  onChange(fn: () => void): () => void;
}

export class ViewFeed {
  private current: { view: View; version: number } | undefined;
  private version = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<ViewListener>();
  private readonly unsubscribe: (() => void)[];

  constructor(
    private readonly informers: readonly Pick<Informer<KubeObject>, 'store' | 'onEvent'>[],
    private readonly watched: string | undefined,
    private readonly reachability?: FleetReachability,
    private readonly inventory?: ViewInventory,
    private readonly delayMs = UPDATE_DELAY_MS,
  ) {
    this.unsubscribe = informers.map((i) => i.onEvent(() => this.changed()));
    if (reachability) this.unsubscribe.push(reachability.onChange(() => this.changed()));
    if (inventory) this.unsubscribe.push(inventory.onChange(() => this.changed()));
  }

  /** The view now (built once per change, whoever asks). */
  get(): { view: View; version: number } {
    const inventory = this.inventory;
    this.current ??= { view: buildView(this.objects(), this.watched, this.reachability?.of, inventory && ((ns) => inventory.list(ns))), version: this.version };
    return this.current;
  }

  /** A sync of any of the four kinds, from the cache. */
  find(kind: string, namespace: string, name: string): KubeObject | undefined {
    for (const i of this.informers) {
      const obj = i.store.get(`${namespace}/${name}`);
      if (obj?.kind === kind) return obj;
    }
    return undefined;
  }

  /** Calls `fn` with each new view; returns the way to stop. */
  subscribe(fn: ViewListener): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  get subscribers(): number {
    return this.listeners.size;
  }

  close(): void {
    clearTimeout(this.timer);
    for (const u of this.unsubscribe) u();
    this.listeners.clear();
  }

  private objects(): KubeObject[] {
    return this.informers.flatMap((i) => i.store.list());
  }

  private changed(): void {
    this.version++;
    this.current = undefined;
    if (this.timer || this.listeners.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.listeners.size === 0) return;
      const { view, version } = this.get();
      for (const fn of this.listeners) fn(view, version);
    }, this.delayMs);
  }
}
