import type { KubeClient } from '../kube/client.js';
import type { Discovery } from '../kube/discovery.js';
import type { KubeObject } from '../kube/resources.js';
import { Informer, type InformerOptions } from './informer.js';
import type { Logger } from './logger.js';
import type { OperatorMetrics } from './metrics.js';
import { redactSecrets } from './redact.js';

export interface InformerSelector {
  /** Defaults to the cache's namespace (all namespaces when that is unset). */
  namespace?: string;
  /** Watch every namespace whatever the cache's namespace (e.g. objects a sync owns). */
  allNamespaces?: boolean;
  labelSelector?: string;
  fieldSelector?: string;
  /** Cache metadata only (see InformerOptions.metadataOnly). */
  metadataOnly?: boolean;
  /**
   * Keep this field manager's Apply entry of managedFields (see
   * InformerOptions.keepManagedFieldsOf). Not part of the informer's
   * identity: the first to start an informer for a selector decides.
   */
  keepManagedFieldsOf?: string;
  /**
   * Keep of each object only what `fn` returns: for kinds whose objects are
   * large and of which little is read (CRDs). Its `name` is part of the
   * informer's identity; `listPageSize` bounds what one page of a LIST holds
   * before it is projected (where the server refuses WatchList).
   */
  project?: { name: string; fn: (obj: KubeObject) => KubeObject; listPageSize?: number };
}

export type CacheTuning = Pick<InformerOptions<KubeObject>, 'watchList' | 'watchTimeoutSeconds' | 'idleTimeoutMs' | 'backoff'>;

/**
 * The shared informers of one cluster: one per resource type and selector,
 * shared by everything in the process. `informer()` returns it only once it
 * is primed, so a kind first met during a reconcile is never read half-filled.
 */
export class ClusterCache {
  private readonly informers = new Map<string, Promise<Informer<KubeObject>>>();
  private readonly started: Informer<KubeObject>[] = [];

  constructor(
    readonly client: KubeClient,
    readonly discovery: Discovery,
    private readonly opts: { namespace?: string; logger?: Logger; metrics?: OperatorMetrics; tuning?: CacheTuning } = {},
  ) {}

  get name(): string {
    return this.client.name;
  }

  /** The primed shared informer for a kind and selector. */
  async informer<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    selector: InformerSelector = {},
  ): Promise<Informer<T>> {
    const id = this.idOf(apiVersion, kind, selector);
    let pending = this.informers.get(id);
    if (!pending) {
      const created = this.create(apiVersion, kind, { ...selector, namespace: this.namespaceOf(selector) });
      this.informers.set(id, created);
      created.catch(() => {
        if (this.informers.get(id) === created) this.informers.delete(id);
      });
      pending = created;
    }
    return (await pending) as unknown as Informer<T>;
  }

  /**
   * The informer for a kind and selector if something has already started
   * it and it is primed; never starts one (a read-only view of the caches).
   */
  async peek<T extends KubeObject = KubeObject>(apiVersion: string, kind: string, selector: InformerSelector = {}): Promise<Informer<T> | undefined> {
    const pending = this.informers.get(this.idOf(apiVersion, kind, selector));
    const informer = await pending?.catch(() => undefined);
    return informer?.hasSynced ? (informer as unknown as Informer<T>) : undefined;
  }

  /**
   * Stops the informer for a kind and selector and forgets it (its watch
   * ends); the next `informer()` for it starts afresh. For informers that only
   * one user needed, such as a watch of one object by name.
   */
  async release(apiVersion: string, kind: string, selector: InformerSelector = {}): Promise<void> {
    const id = this.idOf(apiVersion, kind, selector);
    const pending = this.informers.get(id);
    if (!pending) return;
    this.informers.delete(id);
    const informer = await pending.catch(() => undefined);
    if (!informer) return;
    const at = this.started.indexOf(informer);
    if (at >= 0) this.started.splice(at, 1);
    await informer.stop();
  }

  /**
   * Every object every informer holds, by informer (`apiVersion|kind|namespace|labels|fields|metadata, full or project:<name>`):
   * the debug endpoint `/debug/cache`, and tests that check what is (not) cached.
   */
  async dump(): Promise<{ informer: string; objects: KubeObject[] }[]> {
    const out: { informer: string; objects: KubeObject[] }[] = [];
    for (const [id, pending] of this.informers) {
      const informer = await pending.catch(() => undefined);
      if (informer) out.push({ informer: id, objects: informer.store.list() });
    }
    return out;
  }

  /**
   * dump() for a person to read (`/debug/cache`): Secrets' values become
   * their length wherever they are, cached Secrets and Secrets inside other
   * objects (inline sources of syncs) alike (redact.ts).
   */
  async redactedDump(): Promise<{ informer: string; objects: KubeObject[] }[]> {
    return (await this.dump()).map(({ informer, objects }) => ({ informer, objects: objects.map(redactSecrets) }));
  }

  /** How many informers are running (for tests and metrics). */
  get size(): number {
    return this.informers.size;
  }

  private idOf(apiVersion: string, kind: string, selector: InformerSelector): string {
    const namespace = this.namespaceOf(selector);
    const parts = [apiVersion, kind, namespace ?? '*', selector.labelSelector ?? '', selector.fieldSelector ?? ''];
    // keepManagedFieldsOf is not part of the id: a reader that only peeks at the owned objects finds their informer.
    return [...parts, selector.project ? `project:${selector.project.name}` : selector.metadataOnly ? 'metadata' : 'full'].join('|');
  }

  private namespaceOf(selector: InformerSelector): string | undefined {
    return selector.allNamespaces ? undefined : (selector.namespace ?? this.opts.namespace);
  }

  /** True when every informer started so far holds its whole initial set. */
  get primed(): boolean {
    return this.started.every((i) => i.hasSynced);
  }

  async stop(): Promise<void> {
    await Promise.all(this.started.map((i) => i.stop()));
  }

  private async create(apiVersion: string, kind: string, selector: InformerSelector): Promise<Informer<KubeObject>> {
    const resource = await this.discovery.resolve(apiVersion, kind);
    const informer = new Informer<KubeObject>({
      client: this.client,
      resource,
      namespace: resource.namespaced ? selector.namespace : undefined,
      labelSelector: selector.labelSelector,
      fieldSelector: selector.fieldSelector,
      metadataOnly: selector.metadataOnly,
      keepManagedFieldsOf: selector.keepManagedFieldsOf,
      transform: selector.project?.fn,
      listPageSize: selector.project?.listPageSize,
      logger: this.opts.logger,
      metrics: this.opts.metrics,
      ...this.opts.tuning,
    });
    this.started.push(informer);
    try {
      await informer.start();
    } catch (err) {
      this.started.splice(this.started.indexOf(informer), 1);
      throw err;
    }
    return informer;
  }
}
