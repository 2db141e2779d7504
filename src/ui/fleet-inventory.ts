// The cluster inventory as the web view reads it, for the FleetSync panel's
// values and overrides: a ClusterInventory of its own over the operator's
// shared cache. Its watches are the FleetSync controller's (the same kinds and
// selectors: the cache gives both the one informer of each), and it starts
// them only once the view holds a FleetSync (the controller starts its
// inventory at a FleetSync's first reconcile): the page adds no watch the
// operator does not have.
import { ClusterInventory, type ClusterInventoryOptions, type InventoryCluster } from '../clusters/inventory.js';
import type { KubeObject } from '../kube/resources.js';
import type { Informer } from '../runtime/informer.js';
import type { ViewInventory } from './feed.js';

export class FleetInventory implements ViewInventory {
  private inventory: ClusterInventory | undefined;
  private starting: Promise<void> | undefined;
  private stopped = false;
  private readonly listeners = new Set<() => void>();
  private readonly unfollow: () => void;

  /** Started when `fleets` (the operator's informer of FleetSyncs) first holds one; tried again on the next change when a start fails. */
  constructor(
    private readonly opts: ClusterInventoryOptions,
    fleets: Pick<Informer<KubeObject>, 'store' | 'onEvent'>,
  ) {
    const wake = (): void => {
      if (fleets.store.list().length > 0) this.start();
    };
    this.unfollow = fleets.onEvent(wake);
    wake();
  }

  list(namespace: string): readonly InventoryCluster[] | undefined {
    return this.inventory?.list(namespace);
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unfollow();
    await this.starting;
    await this.inventory?.stop();
  }

  private start(): void {
    if (this.starting || this.stopped) return;
    const inventory = new ClusterInventory(this.opts);
    inventory.onChange(() => this.changed());
    this.starting = inventory.start().then(
      () => {
        this.inventory = inventory;
        this.changed();
      },
      (err: unknown) => {
        this.opts.logger.warn({ err: String(err) }, "ui: cannot read the cluster inventory: the FleetSync panel shows no cluster's values (tried again on the next FleetSync change)");
        this.starting = undefined;
        void inventory.stop();
      },
    );
  }

  private changed(): void {
    for (const fn of this.listeners) fn();
  }
}
