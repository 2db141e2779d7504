import type { ClusterCache, InformerSelector } from '../runtime/cache.js';
import type { ObjectRef } from '../source/index.js';

/**
 * Watches the objects that sources name (a ConfigMap, a Secret, a Flux source
 * object), each by name so nothing else of their kind is cached, and tells
 * the syncs that read them when they change. A watch ends once no sync reads
 * its object any more.
 */
export class SourceWatches {
  /** Watched object id -> the syncs (controller keys) that read it. */
  private readonly referrers = new Map<string, Set<string>>();
  /** Sync key -> the id of the object it reads. */
  private readonly reading = new Map<string, string>();
  /** Watched object id -> the ref, and how to stop hearing of it. */
  private readonly watching = new Map<string, { ref: ObjectRef; unsubscribe: () => void }>();

  constructor(
    private readonly cache: ClusterCache,
    private readonly onChange: (referrerKey: string) => void,
  ) {}

  /** `referrerKey` reads `ref` now (or nothing watched, when undefined). */
  async watch(referrerKey: string, ref: ObjectRef | undefined): Promise<void> {
    const id = ref ? `${ref.apiVersion}|${ref.kind}|${ref.namespace}|${ref.name}` : undefined;
    const before = this.reading.get(referrerKey);
    if (before !== id) await this.forget(referrerKey);
    if (!ref || !id) return;
    this.reading.set(referrerKey, id);
    let keys = this.referrers.get(id);
    if (!keys) this.referrers.set(id, (keys = new Set()));
    keys.add(referrerKey);
    if (this.watching.has(id)) return;
    const informer = await this.cache.informer(ref.apiVersion, ref.kind, selectorOf(ref));
    if (this.watching.has(id) || !this.referrers.has(id)) return;
    const unsubscribe = informer.onEvent(() => {
      for (const key of this.referrers.get(id) ?? []) this.onChange(key);
    });
    this.watching.set(id, { ref, unsubscribe });
  }

  /** `referrerKey` reads nothing any more (it was deleted, or its source changed). */
  async forget(referrerKey: string): Promise<void> {
    const id = this.reading.get(referrerKey);
    if (id === undefined) return;
    this.reading.delete(referrerKey);
    const keys = this.referrers.get(id);
    keys?.delete(referrerKey);
    if (keys && keys.size > 0) return;
    this.referrers.delete(id);
    const watched = this.watching.get(id);
    if (!watched) return;
    this.watching.delete(id);
    watched.unsubscribe();
    await this.cache.release(watched.ref.apiVersion, watched.ref.kind, selectorOf(watched.ref));
  }

  /** How many objects are watched. */
  get size(): number {
    return this.watching.size;
  }
}

function selectorOf(ref: ObjectRef): InformerSelector {
  return { namespace: ref.namespace, fieldSelector: `metadata.name=${ref.name}` };
}
