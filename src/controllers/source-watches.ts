import type { ClusterCache } from '../runtime/cache.js';

export interface WatchedRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/**
 * Watches the objects that sources name (a ConfigMap, a Secret, a Flux source
 * object), each by name so nothing else of their kind is cached, and tells
 * the syncs that read them when they change.
 */
export class SourceWatches {
  private readonly referrers = new Map<string, Set<string>>();
  private readonly watching = new Set<string>();

  constructor(
    private readonly cache: ClusterCache,
    private readonly onChange: (referrerKey: string) => void,
  ) {}

  async watch(referrerKey: string, ref: WatchedRef): Promise<void> {
    const id = `${ref.apiVersion}|${ref.kind}|${ref.namespace}|${ref.name}`;
    let keys = this.referrers.get(id);
    if (!keys) this.referrers.set(id, (keys = new Set()));
    keys.add(referrerKey);
    if (this.watching.has(id)) return;
    const informer = await this.cache.informer(ref.apiVersion, ref.kind, {
      namespace: ref.namespace,
      fieldSelector: `metadata.name=${ref.name}`,
    });
    if (this.watching.has(id)) return;
    this.watching.add(id);
    informer.onEvent(() => {
      for (const key of this.referrers.get(id) ?? []) this.onChange(key);
    });
  }
}
