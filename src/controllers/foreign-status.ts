// --shards: a RemoteSync's or ProxySync's status written over by another replica after this one took
// its cluster (a paused replica's write, let through its fence before the pause and flushed when it
// woke: docs/shards.md) is put right by a reconcile here. A change of status alone reconciles nothing
// otherwise (runtime/controller.ts needsReconcile); our own writes are known by their resourceVersion.
import { canonicalJson } from '../kube/canonical-json.js';
import type { KubeObject } from '../kube/resources.js';
import { needsReconcile } from '../runtime/controller.js';
import type { Informer } from '../runtime/informer.js';
import { objectKey } from '../runtime/store.js';

/** Our last writes of each object remembered (a reconcile writes progress, then a result). */
const REMEMBERED = 4;

export class ForeignStatusWatch {
  /** uid -> the resourceVersions our last writes produced. */
  private readonly ours = new Map<string, string[]>();

  constructor(informer: Pick<Informer<KubeObject>, 'onEvent'>, works: (obj: KubeObject) => boolean, wake: (key: string) => void) {
    informer.onEvent((e) => {
      const uid = e.object.metadata.uid ?? '';
      if (e.type === 'deleted') this.ours.delete(uid);
      if (e.type !== 'updated' || !e.old || needsReconcile(e)) return;
      if (canonicalJson(e.old.status ?? {}) === canonicalJson(e.object.status ?? {})) return;
      if (this.ours.get(uid)?.includes(e.object.metadata.resourceVersion ?? '')) return;
      if (works(e.object)) wake(objectKey(e.object));
    });
  }

  /** A write of ours (status or finalizers), as the server answered it. */
  noteWrite(written: KubeObject): void {
    const uid = written.metadata.uid ?? '';
    const rv = written.metadata.resourceVersion;
    if (!rv) return;
    const list = this.ours.get(uid) ?? [];
    list.push(rv);
    this.ours.set(uid, list.slice(-REMEMBERED));
  }
}
