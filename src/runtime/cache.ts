import type { KubeClient } from '../kube/client.js';
import type { Discovery } from '../kube/discovery.js';
import type { KubeObject } from '../kube/resources.js';
import { Informer, type InformerOptions } from './informer.js';
import type { Logger } from './logger.js';
import type { OperatorMetrics } from './metrics.js';

export interface InformerSelector {
  /** Defaults to the cache's namespace (all namespaces when that is unset). */
  namespace?: string;
  /** Watch every namespace whatever the cache's namespace (e.g. objects a sync owns). */
  allNamespaces?: boolean;
  labelSelector?: string;
  fieldSelector?: string;
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
    const namespace = selector.allNamespaces ? undefined : (selector.namespace ?? this.opts.namespace);
    const id = [apiVersion, kind, namespace ?? '*', selector.labelSelector ?? '', selector.fieldSelector ?? ''].join('|');
    let pending = this.informers.get(id);
    if (!pending) {
      pending = this.create(apiVersion, kind, { ...selector, namespace });
      this.informers.set(id, pending);
      pending.catch(() => this.informers.delete(id));
    }
    return (await pending) as unknown as Informer<T>;
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
      logger: this.opts.logger,
      metrics: this.opts.metrics,
      ...this.opts.tuning,
    });
    this.started.push(informer);
    await informer.start();
    return informer;
  }
}
