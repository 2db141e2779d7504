import type { Readable } from 'node:stream';
import type { KubeClient, Query } from '../kube/client.js';
import { ApiError, ResponseLimitError, TransportError } from '../kube/errors.js';
import { collectionPath, METADATA_LIST_ONLY_ACCEPT, METADATA_ONLY_ACCEPT, withoutManagedFields, type KubeObject, type ResourceInfo } from '../kube/resources.js';
import { watchEvents, type WatchEvent } from '../kube/watch-stream.js';
import { silentLogger, type Logger } from './logger.js';
import type { OperatorMetrics } from './metrics.js';
import { backoffDelay, sleep } from './backoff.js';
import { Interned } from './interned.js';
import { objectKey, ObjectStore } from './store.js';

export type InformerEventType = 'added' | 'updated' | 'deleted';

export interface InformerEvent<T> {
  type: InformerEventType;
  object: T;
  old?: T;
}

export type InformerHandler<T> = (event: InformerEvent<T>) => void;

/** How the initial set is read: WatchList (one watch stream) or LIST then WATCH. */
export type InitialProtocol = 'WatchList' | 'ListWatch';

export interface InformerOptions<T extends KubeObject> {
  client: KubeClient;
  resource: ResourceInfo;
  /** Watch one namespace; all when undefined. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** `auto` tries WatchList and falls back to LIST+WATCH when the server refuses it. */
  watchList?: 'auto' | 'never';
  /** Server-side timeout of each watch request; randomised by up to +10%. */
  watchTimeoutSeconds?: number;
  /** A watch that sends nothing (not even a bookmark) for this long is restarted. */
  idleTimeoutMs?: number;
  backoff?: { initialMs: number; maxMs: number };
  /** A watch that ran this long before it failed starts its backoff again from the first step (default 60 s). */
  healthyWatchMs?: number;
  listPageSize?: number;
  /** A page's byte limit (default the client's for a list page, 64 MiB); past it the page is asked again in pages a tenth the size. */
  listPageMaxBytes?: number;
  /**
   * Read objects as metadata only (`PartialObjectMetadata`, as
   * controller-runtime's metadata watches do), and keep of each only its
   * name, namespace, uid, resourceVersion, labels and deletionTimestamp: no
   * annotations (`last-applied-configuration` holds a Secret's whole data),
   * no content. For objects whose changes matter but whose content is read
   * when it is used (ConfigMaps and Secrets that syncs reference).
   */
  metadataOnly?: boolean;
  /** Applied to each object before it is stored; the default drops managedFields. */
  transform?: (obj: T) => T;
  /**
   * Keep of `metadata.managedFields` only this field manager's Apply entry
   * and the entries of others written since (apiVersion, time and field set:
   * names, never values), dropping the rest: what the apply engine needs to
   * tell a no-op apply from the cache, and to name who changed our fields.
   */
  keepManagedFieldsOf?: string;
  logger?: Logger;
  metrics?: OperatorMetrics;
}

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

interface List<T> {
  metadata: { resourceVersion: string; continue?: string };
  items: T[];
}

/**
 * A shared informer for one resource type of one cluster: it holds every
 * object in a store and tells its handlers about changes. `start()` resolves
 * only once the store holds the whole initial set (primed). It resumes from
 * the last resource version, relists on 410 Gone, asks for bookmarks and a
 * server-side timeout, restarts a silent watch, and reconnects after any error
 * with capped, jittered backoff.
 */
export class Informer<T extends KubeObject = KubeObject> {
  readonly store = new ObjectStore<T>();
  /** The protocol that read the last initial set. */
  protocol: InitialProtocol | undefined;
  private resourceVersion: string | undefined;
  private readonly handlers = new Set<InformerHandler<T>>();
  private readonly abort = new AbortController();
  private stream: Readable | undefined;
  private running: Promise<void> | undefined;
  private synced = false;
  private syncWaiters: { resolve: () => void; reject: (err: Error) => void }[] = [];
  private watchListRefused = false;
  private readonly log: Logger;
  private readonly label: { cluster: string; resource: string };

  constructor(private readonly opts: InformerOptions<T>) {
    const r = opts.resource;
    const resource = r.group ? `${r.resource}.${r.group}` : r.resource;
    // A metadata informer and a full one of the same resource are told apart in metrics.
    this.label = { cluster: opts.client.name, resource: opts.metadataOnly ? `${resource}/metadata` : resource };
    this.log = (opts.logger ?? silentLogger).child({ informer: this.label.resource, cluster: this.label.cluster });
    this.watchListRefused = opts.watchList === 'never';
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  get lastSyncResourceVersion(): string | undefined {
    return this.resourceVersion;
  }

  /** Subscribes to changes; returns the way to unsubscribe. */
  onEvent(handler: InformerHandler<T>): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  /** Starts (once) and resolves when the store holds the whole initial set. */
  start(): Promise<void> {
    this.running ??= this.loop();
    return this.waitForSync();
  }

  /** Resolves once primed; rejects when the initial set is refused for good (403, 401: retrying cannot help). */
  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => this.syncWaiters.push({ resolve, reject }));
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.stream?.destroy();
    await this.running;
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.abort.signal.aborted) {
      const began = Date.now();
      try {
        if (this.resourceVersion === undefined) await this.readInitialSet();
        else await this.watchFrom(this.resourceVersion);
        failures = 0;
      } catch (err) {
        if (this.abort.signal.aborted || this.refusedForGood(err)) return;
        const reason = this.classify(err);
        this.opts.metrics?.watchRestarts.inc({ ...this.label, reason });
        if (reason === 'gone') {
          // The server's words say who expired it: its watch cache ("too old resource version: N (M)")
          // or etcd's compaction ("The resourceVersion for the provided watch is too old.").
          this.log.info({ err: String(err), resourceVersion: this.resourceVersion }, 'resource version too old (410 Gone): reading the whole set again');
          this.resourceVersion = undefined;
          continue;
        }
        // A watch that served a while before it failed starts its backoff again (as client-go's reflector
        // resets its backoff after a healthy spell): an error an hour is not the tenth failure in a row.
        if (Date.now() - began >= (this.opts.healthyWatchMs ?? 60_000)) failures = 0;
        failures++;
        const retryAfterMs = err instanceof ApiError ? (err.retryAfterSeconds ?? 0) * 1000 : 0;
        const delay = Math.max(backoffDelay(failures, this.opts.backoff), retryAfterMs);
        // Said once per outage: a cluster that is down for minutes is not a log line per retry.
        const line = { err: String(err), reason, failures, retryInMs: Math.round(delay) };
        if (failures === 1) this.log.warn(line, 'watch failed; reconnecting');
        else this.log.debug(line, 'watch failed again; reconnecting');
        await sleep(delay, this.abort.signal);
      }
    }
  }

  /**
   * Not allowed to list, or the initial set passed a bound of its answers
   * (ResponseLimitError: an event too large, or too slow): no retry will change
   * that; whoever asked for the informer decides (it is stopped), and says why.
   */
  private refusedForGood(err: unknown): boolean {
    if (this.synced) return false;
    const refused = err instanceof ApiError && (err.status === 403 || err.status === 401);
    if (!refused && !(err instanceof ResponseLimitError)) return false;
    this.log.info({ err: (err as Error).message }, refused ? 'not allowed to read the initial set: informer stopped' : 'the initial set passed a bound of its answers: informer stopped');
    this.abort.abort();
    for (const w of this.syncWaiters.splice(0)) w.reject(err);
    return true;
  }

  private classify(err: unknown): 'gone' | 'silent' | 'error' {
    if (err instanceof ApiError && err.gone) return 'gone';
    if (err instanceof TransportError && err.message.includes('no data for')) return 'silent';
    return 'error';
  }

  private async readInitialSet(): Promise<void> {
    if (!this.watchListRefused) {
      try {
        await this.watchList();
        return;
      } catch (err) {
        if (!(err instanceof ApiError) || (err.status !== 422 && err.status !== 400) || this.synced) throw err;
        this.watchListRefused = true;
        this.log.info({ err: err.message }, 'the server refuses WatchList: using LIST and WATCH');
      }
    }
    await this.listThenRemember();
  }

  /** One watch stream that starts with the whole set, closed by a bookmark. */
  private async watchList(): Promise<void> {
    const started = Date.now();
    const res = await this.openWatch({
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
      resourceVersion: '',
    });
    const initial = new Map<string, T>();
    let collecting = true;
    for await (const event of watchEvents<T>(res)) {
      if (!collecting) {
        this.apply(event);
        continue;
      }
      if (event.type === 'ERROR') throw watchError(event, this.opts.client.name);
      if (event.type === 'BOOKMARK') {
        if (event.object.metadata.annotations?.[INITIAL_EVENTS_END] !== 'true') continue;
        this.replace(initial, event.object.metadata.resourceVersion ?? '', 'WatchList', started);
        initial.clear(); // the store holds them now; the stream may stay open for minutes
        collecting = false;
        continue;
      }
      const obj = this.transform(event.object);
      initial.set(objectKey(obj), obj);
    }
    if (collecting) throw new TransportError('the WatchList stream ended before its initial set was complete');
  }

  private async listThenRemember(): Promise<void> {
    const started = Date.now();
    const all = new Map<string, T>();
    let token: string | undefined;
    let rv = '';
    let pageSize = this.opts.listPageSize ?? 500;
    for (;;) {
      let page: List<T>;
      try {
        page = await this.opts.client.request<List<T>>({
          path: this.path(),
          query: { ...this.selectors(), limit: pageSize, continue: token },
          accept: this.opts.metadataOnly ? METADATA_LIST_ONLY_ACCEPT : undefined,
          timeoutMs: 60_000,
          maxBytes: this.opts.listPageMaxBytes,
          signal: this.abort.signal,
        });
      } catch (err) {
        // A page of large objects past a page's byte limit: the same place asked again in smaller pages (a tenth, down to one object).
        if (!(err instanceof ResponseLimitError) || err.limit !== 'bytes' || pageSize === 1) throw err;
        pageSize = Math.max(1, Math.floor(pageSize / 10));
        this.log.info({ err: err.message, pageSize }, 'a page passed its byte limit: asking for smaller pages');
        continue;
      }
      for (const item of page.items) {
        // List items carry no apiVersion/kind; restore them as a watch would.
        const obj = this.transform({ ...item, apiVersion: this.apiVersion(), kind: this.opts.resource.kind });
        all.set(objectKey(obj), obj);
      }
      token = page.metadata.continue || undefined;
      rv = page.metadata.resourceVersion;
      if (!token) break;
    }
    this.replace(all, rv, 'ListWatch', started);
  }

  private async watchFrom(resourceVersion: string): Promise<void> {
    const res = await this.openWatch({ resourceVersion });
    for await (const event of watchEvents<T>(res)) this.apply(event);
    this.log.debug('watch ended (server timeout): resuming');
  }

  private async openWatch(extra: Query): Promise<Readable> {
    const base = this.opts.watchTimeoutSeconds ?? 300;
    const res = await this.opts.client.stream({
      path: this.path(),
      query: {
        ...this.selectors(),
        watch: 1,
        allowWatchBookmarks: true,
        timeoutSeconds: Math.round(base * (1 + Math.random() * 0.1)),
        ...extra,
      },
      accept: this.opts.metadataOnly ? METADATA_ONLY_ACCEPT : undefined,
      idleTimeoutMs: this.opts.idleTimeoutMs ?? 120_000,
      signal: this.abort.signal,
    });
    this.stream = res;
    this.opts.metrics?.watches.inc(this.label);
    res.once('close', () => this.opts.metrics?.watches.dec(this.label));
    return res;
  }

  private apply(event: WatchEvent<T>): void {
    switch (event.type) {
      case 'ERROR':
        throw watchError(event, this.opts.client.name);
      case 'BOOKMARK':
        this.resourceVersion = event.object.metadata.resourceVersion ?? this.resourceVersion;
        return;
      case 'ADDED':
      case 'MODIFIED': {
        const obj = this.transform(event.object);
        const old = this.store.upsert(obj);
        this.resourceVersion = obj.metadata.resourceVersion;
        if (old?.metadata.resourceVersion !== obj.metadata.resourceVersion) {
          this.emit({ type: old ? 'updated' : 'added', object: obj, old });
        }
        break;
      }
      case 'DELETED': {
        const old = this.store.delete(objectKey(event.object));
        this.resourceVersion = event.object.metadata.resourceVersion;
        this.emit({ type: 'deleted', object: old ?? this.transform(event.object) });
        break;
      }
    }
    this.opts.metrics?.cacheObjects.set(this.label, this.store.size);
  }

  /** Makes the store equal `next`, telling handlers what changed. */
  private replace(next: Map<string, T>, resourceVersion: string, protocol: InitialProtocol, started: number): void {
    for (const key of this.store.keys()) {
      if (next.has(key)) continue;
      const old = this.store.delete(key);
      if (old) this.emit({ type: 'deleted', object: old });
    }
    for (const obj of next.values()) {
      const old = this.store.upsert(obj);
      if (old?.metadata.resourceVersion !== obj.metadata.resourceVersion) {
        this.emit({ type: old ? 'updated' : 'added', object: obj, old });
      }
    }
    this.resourceVersion = resourceVersion;
    this.protocol = protocol;
    const seconds = (Date.now() - started) / 1000;
    this.opts.metrics?.cacheObjects.set(this.label, this.store.size);
    if (!this.synced) {
      this.opts.metrics?.cachePrimeSeconds.set({ ...this.label, protocol }, seconds);
      this.log.info({ objects: this.store.size, protocol, seconds }, 'cache primed');
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w.resolve();
    }
  }

  private emit(event: InformerEvent<T>): void {
    for (const handler of this.handlers) {
      try {
        handler(event);
      } catch (err) {
        this.log.error({ err: String(err) }, 'informer handler failed');
      }
    }
  }

  private transform(obj: T): T {
    if (this.opts.transform) return this.opts.transform(obj);
    if (this.opts.metadataOnly) return this.metadataOf(obj);
    const kept = this.opts.keepManagedFieldsOf ? keptEntriesOf(obj.metadata.managedFields, this.opts.keepManagedFieldsOf) : undefined;
    return kept ? { ...obj, metadata: { ...obj.metadata, managedFields: kept } } : withoutManagedFields(obj);
  }

  /** What a metadata-only informer keeps of an object (no annotations: see `metadataOnly`). */
  private metadataOf(obj: T): T {
    const { name, namespace, uid, resourceVersion, labels, deletionTimestamp } = obj.metadata;
    const metadata: KubeObject['metadata'] = { name, namespace, uid, resourceVersion };
    if (labels) metadata.labels = labels;
    if (deletionTimestamp) metadata.deletionTimestamp = deletionTimestamp;
    return { apiVersion: this.apiVersion(), kind: this.opts.resource.kind, metadata } as T;
  }

  private path(): string {
    return collectionPath(this.opts.resource, this.opts.namespace);
  }

  private apiVersion(): string {
    const { group, version } = this.opts.resource;
    return group ? `${group}/${version}` : version;
  }

  private selectors(): Query {
    return { labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector };
  }
}

/**
 * Of managedFields, a manager's Apply entry (main resource) and the entries
 * of others that wrote since (who changed its fields; `status` writers left out),
 * each reduced to what tells what it owns: field names, never values.
 */
function keptEntriesOf(managedFields: unknown, manager: string): Record<string, unknown>[] | undefined {
  if (!Array.isArray(managedFields)) return undefined;
  // A status writer never touches what we apply; a scale writer (an HPA) does.
  const entries = (managedFields as Record<string, unknown>[]).filter((e) => e && e.subresource !== 'status');
  const ours = entries.find((e) => e.manager === manager && e.operation === 'Apply' && !e.subresource);
  if (!ours) return undefined;
  const since = String(ours.time ?? '');
  const later = entries.filter((e) => e.manager !== manager && String(e.time ?? '') >= since);
  return [ours, ...later].map(({ manager: m, operation, apiVersion, time, subresource, fieldsV1 }) => ({
    manager: m,
    operation,
    apiVersion,
    time,
    subresource,
    fieldsV1: isObject(fieldsV1) ? FIELD_SETS.of(fieldsV1) : fieldsV1,
  }));
}

/** The field sets kept of managedFields, one copy of each shape for all informers. */
const FIELD_SETS = new Interned<object>();

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

/** A watch's ERROR event, from the server of the client named `cluster`. */
function watchError(event: WatchEvent<unknown>, cluster: string): ApiError {
  const status = event.object as { code?: number; reason?: string; message?: string };
  return new ApiError(status.code ?? 500, status.reason ?? 'WatchError', `watch: ${status.message ?? 'error event'}`, undefined, undefined, cluster);
}
