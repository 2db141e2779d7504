import { canonicalJson } from '../kube/canonical-json.js';
import type { KubeClient } from '../kube/client.js';
import { compareResourceVersions, METADATA_ONLY_ACCEPT, objectPath, type KubeObject, type ResourceInfo } from '../kube/resources.js';

/** How many of our status writes of an object are known by their resourceVersion (a reconcile writes progress, then a result; a FleetSync counts often). */
const STATUS_VERSIONS_KEPT = 8;

/**
 * The writes a controller makes to its own objects: status (only when it
 * changed) and finalizers (with optimistic concurrency, so a conflict is
 * retried by the queue rather than overwriting someone else's change).
 */
export class ObjectWriter {
  /** The resourceVersion our last finalizer patch of each object (by uid) produced. */
  private readonly finalizerWrites = new Map<string, string>();
  /** Our last status write of each object (by uid): what the server returned, and its resourceVersion. */
  private readonly statusWrites = new Map<string, { resourceVersion: string; status: Record<string, unknown> }>();
  /** The resourceVersions our last few status writes of each object (by uid) produced: kept after the cache caught up. */
  private readonly statusVersions = new Map<string, string[]>();
  /**
   * Finalizer patches in flight, by uid. A status write of the same object
   * waits for its patch: landing first, it would make the patch's
   * resourceVersion stale (a 409 and a retry for nothing).
   */
  private readonly finalizerPatches = new Map<string, Promise<unknown>>();

  constructor(
    private readonly client: KubeClient,
    private readonly resource: ResourceInfo,
    /** Told of each write (status, finalizers), with the object the server returned. */
    private readonly onWritten?: (written: KubeObject) => void,
  ) {}

  /**
   * Writes `status` unless it equals the object's current status; returns
   * whether it wrote. The current status is the cached one, or the one we
   * wrote last if the cache has not caught up with it yet (a reconcile that
   * writes progress and then a result must compare the result with the
   * progress, not with what the cache held when the reconcile began).
   */
  async updateStatus(obj: KubeObject, status: Record<string, unknown>): Promise<boolean> {
    const uid = obj.metadata.uid ?? '';
    await this.finalizerPatches.get(uid)?.catch(() => undefined);
    const old = this.currentStatus(obj, uid);
    if (canonicalJson(old) === canonicalJson(status)) return false;
    // The whole status replaced, without resourceVersion: the status is ours alone, and a
    // reconcile may write it twice (progress, then result) before the cache sees the first.
    // A JSON patch, answered with metadata only: the server neither merges nor sends back
    // the whole object, which for a sync with its objects inline is hundreds of KB.
    const written = await this.client.request<KubeObject>({
      method: 'PATCH',
      path: this.path(obj, 'status'),
      contentType: 'application/json-patch+json',
      accept: METADATA_ONLY_ACCEPT,
      body: [{ op: 'add', path: '/status', value: status }],
    });
    if (written?.metadata?.resourceVersion) {
      this.statusWrites.set(uid, { resourceVersion: written.metadata.resourceVersion, status });
      this.statusVersions.set(uid, [...(this.statusVersions.get(uid) ?? []), written.metadata.resourceVersion].slice(-STATUS_VERSIONS_KEPT));
      this.onWritten?.(written);
    }
    return true;
  }

  /**
   * The object's current status: the cached one, or the one we wrote last if
   * the cache has not caught up with it yet. A reconcile that starts from it
   * keeps the lastTransitionTimes of what we wrote, so it does not write the
   * same status again with new ones.
   */
  statusOf(obj: KubeObject): Record<string, unknown> {
    return this.currentStatus(obj, obj.metadata.uid ?? '');
  }

  /** Whether this version of the object is one our status write produced (one of our last few). */
  wroteStatus(obj: KubeObject): boolean {
    return this.statusVersions.get(obj.metadata.uid ?? '')?.includes(obj.metadata.resourceVersion ?? '') ?? false;
  }

  /** The object is gone: drop what was remembered of our writes to it. */
  forget(obj: KubeObject): void {
    const uid = obj.metadata.uid ?? '';
    this.statusWrites.delete(uid);
    this.statusVersions.delete(uid);
    this.finalizerWrites.delete(uid);
  }

  private currentStatus(obj: KubeObject, uid: string): Record<string, unknown> {
    const mine = this.statusWrites.get(uid);
    if (mine && (compareResourceVersions(obj.metadata.resourceVersion, mine.resourceVersion) ?? 0) < 0) return mine.status;
    this.statusWrites.delete(uid);
    return (obj.status ?? {}) as Record<string, unknown>;
  }

  /**
   * Adds the finalizer unless present; returns whether it wrote (or wrote it
   * already and the cache has not caught up: then a second patch would only
   * meet a 409 Conflict, and the update event of the first brings the object back).
   */
  async ensureFinalizer(obj: KubeObject, finalizer: string): Promise<boolean> {
    const finalizers = obj.metadata.finalizers ?? [];
    const uid = obj.metadata.uid ?? '';
    if (finalizers.includes(finalizer)) {
      this.finalizerWrites.delete(uid);
      return false;
    }
    if ((compareResourceVersions(obj.metadata.resourceVersion, this.finalizerWrites.get(uid)) ?? 0) < 0) return true;
    const patch = this.patchFinalizers(obj, [...finalizers, finalizer]);
    this.finalizerPatches.set(uid, patch);
    try {
      const written = await patch;
      if (written?.metadata?.resourceVersion) this.finalizerWrites.set(uid, written.metadata.resourceVersion);
    } finally {
      if (this.finalizerPatches.get(uid) === patch) this.finalizerPatches.delete(uid);
    }
    return true;
  }

  /** Removes the finalizer if present; returns whether it wrote. */
  async removeFinalizer(obj: KubeObject, finalizer: string): Promise<boolean> {
    const finalizers = obj.metadata.finalizers ?? [];
    if (!finalizers.includes(finalizer)) return false;
    this.finalizerWrites.delete(obj.metadata.uid ?? '');
    this.statusWrites.delete(obj.metadata.uid ?? '');
    await this.patchFinalizers(
      obj,
      finalizers.filter((f) => f !== finalizer),
    );
    return true;
  }

  private async patchFinalizers(obj: KubeObject, finalizers: string[]): Promise<KubeObject | undefined> {
    const written = await this.client.request<KubeObject>({
      method: 'PATCH',
      path: this.path(obj),
      contentType: 'application/json-patch+json',
      accept: METADATA_ONLY_ACCEPT,
      // The resourceVersion makes this conditional: 409 Conflict if the object moved on.
      body: [
        { op: 'replace', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion },
        { op: 'add', path: '/metadata/finalizers', value: finalizers },
      ],
    });
    if (written?.metadata) this.onWritten?.(written);
    return written;
  }

  private path(obj: KubeObject, subresource?: string): string {
    return objectPath(this.resource, obj.metadata.name ?? '', obj.metadata.namespace, subresource);
  }
}
