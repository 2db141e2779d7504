import { canonicalJson } from '../kube/canonical-json.js';
import type { KubeClient } from '../kube/client.js';
import { compareResourceVersions, objectPath, type KubeObject, type ResourceInfo } from '../kube/resources.js';

/**
 * The writes a controller makes to its own objects: status (only when it
 * changed) and finalizers (with optimistic concurrency, so a conflict is
 * retried by the queue rather than overwriting someone else's change).
 */
export class ObjectWriter {
  /** The resourceVersion our last finalizer patch of each object (by uid) produced. */
  private readonly finalizerWrites = new Map<string, string>();

  constructor(
    private readonly client: KubeClient,
    private readonly resource: ResourceInfo,
    /** Told of each write (status, finalizers), with the object the server returned. */
    private readonly onWritten?: (written: KubeObject) => void,
  ) {}

  /** Writes `status` unless it equals the object's cached status; returns whether it wrote. */
  async updateStatus(obj: KubeObject, status: Record<string, unknown>): Promise<boolean> {
    if (canonicalJson(obj.status ?? {}) === canonicalJson(status)) return false;
    // A merge patch without resourceVersion: the status is ours alone, and a reconcile
    // may write it twice (progress, then result) before the cache sees the first.
    // Arrays (conditions, inventory entries) are replaced whole; fields we dropped are nulled.
    const old = (obj.status ?? {}) as Record<string, unknown>;
    const patch: Record<string, unknown> = { ...status };
    for (const key of Object.keys(old)) if (!(key in status)) patch[key] = null;
    const written = await this.client.request<KubeObject>({
      method: 'PATCH',
      path: `${this.path(obj)}/status`,
      contentType: 'application/merge-patch+json',
      body: { status: patch },
    });
    if (written?.metadata) this.onWritten?.(written);
    return true;
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
    const written = await this.patchFinalizers(obj, [...finalizers, finalizer]);
    if (written?.metadata?.resourceVersion) this.finalizerWrites.set(uid, written.metadata.resourceVersion);
    return true;
  }

  /** Removes the finalizer if present; returns whether it wrote. */
  async removeFinalizer(obj: KubeObject, finalizer: string): Promise<boolean> {
    const finalizers = obj.metadata.finalizers ?? [];
    if (!finalizers.includes(finalizer)) return false;
    this.finalizerWrites.delete(obj.metadata.uid ?? '');
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
      contentType: 'application/merge-patch+json',
      // The resourceVersion makes this conditional: 409 Conflict if the object moved on.
      body: { metadata: { resourceVersion: obj.metadata.resourceVersion, finalizers } },
    });
    if (written?.metadata) this.onWritten?.(written);
    return written;
  }

  private path(obj: KubeObject): string {
    return objectPath(this.resource, obj.metadata.name ?? '', obj.metadata.namespace);
  }
}
