// A watch on one collection that the benchmarks time against: each event's
// delivery time, the latest object per name, listeners, and waiting for an
// object to pass a test. When the server ends the watch (it closes watchers
// that fall behind, which a loaded machine makes likely), the collection is
// read again, every object in it delivered as if it had just arrived, and the
// watch goes on from there; `restarts` counts that.
import type { Readable } from 'node:stream';
import type { KubeClient } from '../src/kube/client.js';
import type { KubeObject } from '../src/kube/resources.js';
import { watchEvents } from '../src/kube/watch-stream.js';
import { sleep, withTimeout } from './support.js';

export interface Seen {
  /** performance.now() when the watch delivered it. */
  at: number;
  object: KubeObject;
}

/** How many times, a second apart, the collection is read again before the watch gives up (see `failed`). */
const RELIST_ATTEMPTS = 30;

export class CollectionWatch {
  restarts = 0;
  private readonly listeners = new Set<(seen: Seen) => void>();
  private readonly latest = new Map<string, Seen>();
  private current: { destroy: () => void } | undefined;
  private closed = false;
  private failure: Error | undefined;

  private constructor(
    private readonly client: KubeClient,
    private readonly collection: string,
  ) {}

  /** Reads the collection (what is there is `latestOf`, told to no listener) and watches it from there. */
  static async open(client: KubeClient, collection: string): Promise<CollectionWatch> {
    const watch = new CollectionWatch(client, collection);
    const list = await client.request<{ metadata: { resourceVersion: string }; items: KubeObject[] }>({ path: collection });
    const at = performance.now();
    for (const item of list.items) watch.latest.set(item.metadata.name ?? '', { at, object: item });
    watch.current = await watch.stream(list.metadata.resourceVersion);
    return watch;
  }

  private async stream(resourceVersion: string): Promise<{ destroy: () => void }> {
    const res = await this.client.stream({ path: this.collection, query: { watch: 1, resourceVersion, allowWatchBookmarks: true }, idleTimeoutMs: 1_800_000 });
    void this.pump(res);
    return res;
  }

  private async pump(res: Readable): Promise<void> {
    try {
      for await (const event of watchEvents(res)) {
        if (event.type === 'ERROR') break; // e.g. 410 Gone: read the collection again
        if (event.type === 'ADDED' || event.type === 'MODIFIED') this.deliver(event.object, performance.now());
      }
    } catch {
      // ended with an error: read the collection again
    }
    if (this.closed) return;
    this.restarts++;
    for (let attempt = 1; !this.closed; attempt++) {
      try {
        const list = await this.client.request<{ metadata: { resourceVersion: string }; items: KubeObject[] }>({ path: this.collection, timeoutMs: 60_000 });
        const at = performance.now();
        for (const item of list.items) this.deliver(item, at);
        if (this.closed) return;
        this.current = await this.stream(list.metadata.resourceVersion);
        return;
      } catch (err) {
        if (attempt >= RELIST_ATTEMPTS) {
          this.failure = err as Error;
          return;
        }
        await sleep(1_000);
      }
    }
  }

  private deliver(object: KubeObject, at: number): void {
    const seen = { at, object };
    this.latest.set(object.metadata.name ?? '', seen);
    for (const fn of [...this.listeners]) fn(seen);
  }

  /** Calls `fn` with every delivery from now on; returns the way to stop. */
  listen(fn: (seen: Seen) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  latestOf(name: string): Seen | undefined {
    return this.latest.get(name);
  }

  /** Set when the watch could not be resumed. */
  get failed(): Error | undefined {
    return this.failure;
  }

  /** The next delivery of `name` passing `test` (deliveries from now on only). */
  next(name: string, test: (o: KubeObject) => boolean): { seen: Promise<Seen>; cancel: () => void } {
    let cancel = (): void => undefined;
    const seen = new Promise<Seen>((resolve) => {
      const stop = this.listen((s) => {
        if (s.object.metadata.name !== name || !test(s.object)) return;
        stop();
        resolve(s);
      });
      cancel = stop;
    });
    return { seen, cancel };
  }

  /** Resolves when `name`, as latest seen or as delivered from now on, passes `test`. */
  async until(name: string, test: (o: KubeObject) => boolean, what: string, ms: number): Promise<KubeObject> {
    const latest = this.latestOf(name)?.object;
    if (latest && test(latest)) return latest;
    const n = this.next(name, test);
    try {
      return (await withTimeout(what, n.seen, ms)).object;
    } catch (err) {
      throw new Error(`${String(err)}; last seen: ${JSON.stringify(this.latestOf(name)?.object.status ?? null)}`);
    } finally {
      n.cancel();
    }
  }

  close(): void {
    this.closed = true;
    this.current?.destroy();
  }
}
