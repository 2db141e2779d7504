// --shards: a status written over by another replica after this one took the object's key (a paused
// replica's write, let through its fence before the pause and flushed when it woke: docs/shards.md)
// is put right by a reconcile here (RemoteSyncs, ProxySyncs, FleetSyncs: controllers/index.ts). A
// change of status alone reconciles nothing otherwise (runtime/controller.ts needsReconcile); our own
// writes are known by the resourceVersions they produced (runtime/object-writer.ts).
import { canonicalJson } from '../kube/canonical-json.js';
import type { KubeObject } from '../kube/resources.js';
import { needsReconcile } from '../runtime/controller.js';
import type { Informer } from '../runtime/informer.js';
import { objectKey } from '../runtime/store.js';

/**
 * How long after a status change not known as ours it is judged: the watch may bring our own write
 * before its answer does; then the object's latest version is ours, and nothing is done.
 */
const SETTLE_MS = 1_000;

export class ForeignStatusWatch {
  /** Keys whose latest version is to be judged (once each). */
  private readonly pending = new Set<string>();

  constructor(
    private readonly informer: Pick<Informer<KubeObject>, 'onEvent' | 'store'>,
    /** Whether a version of an object is one our own status write produced (ObjectWriter.wroteStatus). */
    private readonly ours: (obj: KubeObject) => boolean,
    private readonly works: (obj: KubeObject) => boolean,
    private readonly wake: (key: string) => void,
    private readonly settleMs = SETTLE_MS,
  ) {
    informer.onEvent((e) => {
      if (e.type !== 'updated' || !e.old || needsReconcile(e)) return;
      // The cheap tests first: most changes are our own writes, and a FleetSync's status can be large.
      if (ours(e.object) || !works(e.object)) return;
      if (canonicalJson(e.old.status ?? {}) === canonicalJson(e.object.status ?? {})) return;
      this.judgeLater(objectKey(e.object));
    });
  }

  private judgeLater(key: string): void {
    if (this.pending.has(key)) return;
    this.pending.add(key);
    setTimeout(() => {
      this.pending.delete(key);
      const latest = this.informer.store.get(key);
      if (latest && !this.ours(latest) && this.works(latest)) this.wake(key);
    }, this.settleMs).unref();
  }
}
