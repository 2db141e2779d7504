import type { PendingReason } from '../api/conditions.js';
import { FINALIZER } from '../api/marks.js';
import { KINDS, type Kind } from '../api/kinds.js';
import { compareResourceVersions, type KubeObject } from '../kube/resources.js';
import type { Informer, InformerEvent } from '../runtime/informer.js';
import { objectKey, splitKey } from '../runtime/store.js';
import { cycleThrough } from './cycle.js';
import { readinessFingerprint, unmetReason } from './readiness.js';
import { dependenciesOf, displayNode, nodeKey, nodeOf, parseNodeKey, queueKey, type Dependency, type SyncNode } from './refs.js';

/** The store index from a referent (`Kind/namespace/name`) to the objects that depend on it. */
export const DEPENDS_ON_INDEX = 'syncprims.dev/depends-on';

export interface PendingDependency {
  kind: Kind;
  name: string;
  namespace?: string;
  reason: PendingReason;
}

/** What the dependencies of one object allow. */
export type DependencyVerdict =
  /** All met (or none declared): go on. */
  | { state: 'met' }
  /** Unmet: wait, and say why for each. */
  | { state: 'waiting'; pending: PendingDependency[] }
  /** On a cycle: `path` is the whole cycle, e.g. `['Sync/a', 'RemoteSync/b', 'Sync/a']`. */
  | { state: 'cycle'; path: string[]; pending: PendingDependency[] }
  /**
   * Every dependency not met is being reconciled (or our latest write to it
   * is not in the cache yet), and so may be one that is met as far as the
   * cache shows: the cache may be about to say it started a new revision, or
   * that it is Ready. Write nothing; the object is woken once that settles.
   * `pending`: the reasons as the cache has them now.
   */
  | { state: 'deferred'; on: string[]; pending: PendingDependency[] };

export interface DependencyGraphOptions {
  /** The primed shared informers of the four kinds (their store and events). */
  informers: Record<Kind, Pick<Informer<KubeObject>, 'store' | 'onEvent'>>;
  /** Queues a reconcile of one object (its controller's key `namespace/name`). */
  wake: (kind: Kind, key: string) => void;
  /** Whether the object is queued or being reconciled by its controller. */
  inFlight?: (kind: Kind, key: string) => boolean;
  allowCrossNamespaceRefs?: boolean;
}

/**
 * The dependency graph of every sync object in the cache, across the three
 * kinds. An index from each referent to its referrers is kept by the shared
 * informers' stores; when a referent's readiness (status, generation,
 * existence) changes, its referrers are woken at once, so no dependent polls.
 */
export class DependencyGraph {
  /** Writes of ours (status, finalizers) not yet seen in the cache: node key -> resourceVersion written. */
  private readonly unseenWrites = new Map<string, string>();
  /** Referrers deferred on an in-flight dependency: dependency node key -> referrer node keys. */
  private readonly deferred = new Map<string, Set<string>>();
  /** Every referrer in `deferred`: its status is about to change too, so it counts as in flight. */
  private readonly deferring = new Set<string>();

  constructor(private readonly opts: DependencyGraphOptions) {
    for (const kind of KINDS) {
      const informer = opts.informers[kind];
      if (!informer.store.hasIndex(DEPENDS_ON_INDEX)) {
        informer.store.addIndex(DEPENDS_ON_INDEX, (obj) => dependenciesOf(obj).map(nodeKey));
      }
      informer.onEvent((e) => this.onEvent(kind, e));
    }
  }

  get(node: SyncNode): KubeObject | undefined {
    return this.opts.informers[node.kind].store.get(queueKey(node));
  }

  /** The objects that declare a dependency on `node`, of any kind. */
  dependentsOf(node: SyncNode): { kind: Kind; obj: KubeObject }[] {
    const key = nodeKey(node);
    return KINDS.flatMap((kind) => this.opts.informers[kind].store.byIndex(DEPENDS_ON_INDEX, key).map((obj) => ({ kind, obj })));
  }

  /** Judges the dependencies of one object against the cache. */
  verdict(kind: Kind, obj: KubeObject): DependencyVerdict {
    const self = nodeOf(kind, obj);
    this.deferring.delete(nodeKey(self));
    const dependencies = dependenciesOf(obj);
    if (dependencies.length === 0) return { state: 'met' };
    const pending: PendingDependency[] = [];
    /** Unmet, but about to change: a status written now would be stale at once. */
    let settled = false;
    const inFlight: string[] = [];
    const cycle = cycleThrough(nodeKey(self), (key) => this.successors(key));
    for (const dep of dependencies) {
      const reason = this.reasonOf(self, dep, cycle);
      if (perCluster(self, dep, reason)) continue;
      const moving = reason !== 'Forbidden' && reason !== 'Cycle' && this.isInFlight(dep);
      if (reason) pending.push(pendingEntry(dep, self.namespace, reason));
      if (moving) inFlight.push(nodeKey(dep));
      else if (reason) settled = true;
    }
    if (cycle) return { state: 'cycle', path: cycle.map((k) => displayNode(parseNodeKey(k), self.namespace)), pending };
    // Waiting on a dependency that is not moving: say so. Otherwise wait for what moves.
    if (settled) return { state: 'waiting', pending };
    if (inFlight.length > 0) {
      for (const key of inFlight) this.defer(key, nodeKey(self));
      return { state: 'deferred', on: inFlight.map((k) => displayNode(parseNodeKey(k), self.namespace)), pending };
    }
    return { state: 'met' };
  }

  /**
   * Dependents of `obj` that are being deleted and still hold our finalizer:
   * while they prune, `obj` (being deleted too) keeps its own objects.
   */
  dependentsBeingDeleted(kind: Kind, obj: KubeObject): SyncNode[] {
    const self = nodeOf(kind, obj);
    return this.dependentsOf(self)
      .filter(({ obj: d }) => d.metadata.deletionTimestamp && d.metadata.finalizers?.includes(FINALIZER))
      .map(({ kind: k, obj: d }) => nodeOf(k, d))
      // A dependent that is also a dependency (a cycle) would wait for this one as this one waits for it: neither waits.
      .filter((d) => !this.reaches(nodeKey(self), nodeKey(d)));
  }

  /** Whether `to` is among what `from` depends on, directly or not. */
  private reaches(from: string, to: string): boolean {
    const seen = new Set<string>([from]);
    const queue = [from];
    for (let i = 0; i < queue.length; i++) {
      for (const next of this.successors(queue[i]!)) {
        if (next === to) return true;
        if (!seen.has(next)) {
          seen.add(next);
          queue.push(next);
        }
      }
    }
    return false;
  }

  /** Dependents of `obj` that are not being deleted. */
  liveDependents(kind: Kind, obj: KubeObject): SyncNode[] {
    return this.dependentsOf(nodeOf(kind, obj))
      .filter(({ obj: d }) => !d.metadata.deletionTimestamp)
      .map(({ kind: k, obj: d }) => nodeOf(k, d));
  }

  /** A write of ours to a sync object: until the cache shows it, the object counts as in flight. */
  noteWrite(kind: Kind, written: KubeObject): void {
    const rv = written.metadata.resourceVersion;
    const cached = this.get(nodeOf(kind, written));
    if ((compareResourceVersions(cached?.metadata.resourceVersion, rv) ?? 0) >= 0) return;
    this.unseenWrites.set(nodeKey(nodeOf(kind, written)), rv!);
  }

  /** The object's reconcile ended: wake whoever deferred on it. */
  reconciled(kind: Kind, key: string): void {
    const { namespace = '', name } = splitKey(key);
    this.wakeDeferredIfSettled({ kind, namespace, name });
  }

  private reasonOf(self: SyncNode, dep: Dependency, cycle: string[] | undefined): PendingReason | undefined {
    if (dep.namespace !== self.namespace && !this.opts.allowCrossNamespaceRefs) return 'Forbidden';
    if (cycle && cycle[1] === nodeKey(dep)) return 'Cycle';
    return unmetReason(this.get(dep), dep.requiredStatus);
  }

  private isInFlight(node: SyncNode): boolean {
    const key = nodeKey(node);
    return (
      this.unseenWrites.has(key) || this.deferring.has(key) || (this.opts.inFlight?.(node.kind, queueKey(node)) ?? false)
    );
  }

  private successors(key: string): string[] {
    const obj = this.get(parseNodeKey(key));
    if (!obj) return [];
    const namespace = obj.metadata.namespace ?? '';
    return dependenciesOf(obj)
      .filter((d) => d.namespace === namespace || this.opts.allowCrossNamespaceRefs)
      .map(nodeKey);
  }

  private onEvent(kind: Kind, e: InformerEvent<KubeObject>): void {
    const node = nodeOf(kind, e.object);
    if (e.type === 'deleted') this.deferring.delete(nodeKey(node));
    this.settleWrite(node, e);
    const changed = e.type !== 'updated' || !e.old || readinessFingerprint(e.old) !== readinessFingerprint(e.object);
    if (changed) this.wakeDependents(node, e.type !== 'deleted' && this.isInFlight(node));
    // A dependent that finished deleting releases the referents it held up.
    if (e.type === 'deleted' || e.object.metadata.deletionTimestamp) {
      for (const dep of dependenciesOf(e.object)) {
        if (this.get(dep)?.metadata.deletionTimestamp) this.opts.wake(dep.kind, queueKey(dep));
      }
    }
  }

  /** The cache caught up with our write: whoever deferred on it may look again. */
  private settleWrite(node: SyncNode, e: InformerEvent<KubeObject>): void {
    const key = nodeKey(node);
    const written = this.unseenWrites.get(key);
    if (written === undefined) return;
    if (e.type === 'deleted' || (compareResourceVersions(e.object.metadata.resourceVersion, written) ?? 0) >= 0) {
      this.unseenWrites.delete(key);
      // After the other handlers of this event, which may queue it again.
      setImmediate(() => this.wakeDeferredIfSettled(node));
    }
  }

  /**
   * Wakes whoever deferred on `node`, unless it is in flight again: then its
   * next reconcile's end (or the cache catching up) wakes them, once.
   */
  private wakeDeferredIfSettled(node: SyncNode): void {
    if (!this.isInFlight(node)) this.wakeDeferred(nodeKey(node));
  }

  /**
   * Queues the dependents of `node`; mid-reconcile (its own status write) they
   * would only be deferred, so they are woken once, when the reconcile ends.
   */
  private wakeDependents(node: SyncNode, later: boolean): void {
    const key = nodeKey(node);
    for (const d of this.dependentsOf(node)) {
      if (later) this.defer(key, nodeKey(nodeOf(d.kind, d.obj)));
      else this.opts.wake(d.kind, objectKey(d.obj));
    }
  }

  /** `dependent` is woken when `dependency` is no longer in flight. */
  private defer(dependency: string, dependent: string): void {
    let set = this.deferred.get(dependency);
    if (!set) this.deferred.set(dependency, (set = new Set()));
    set.add(dependent);
    this.deferring.add(dependent);
  }

  private wakeDeferred(key: string): void {
    const waiting = this.deferred.get(key);
    if (!waiting) return;
    this.deferred.delete(key);
    for (const k of waiting) {
      this.deferring.delete(k);
      const n = parseNodeKey(k);
      this.opts.wake(n.kind, queueKey(n));
    }
  }
}

/**
 * A FleetSync's entry of kind FleetSync is per cluster (each child waits for
 * the same cluster's child of it), and a wave's gate holds that wave: neither
 * gates the FleetSync itself, but a cycle through it, or a namespace it may
 * not name, is still its to say.
 */
function perCluster(self: SyncNode, dep: Dependency, reason: PendingReason | undefined): boolean {
  return self.kind === 'FleetSync' && (dep.kind === 'FleetSync' || dep.gate === true) && reason !== 'Cycle' && reason !== 'Forbidden';
}

function pendingEntry(dep: Dependency, namespace: string, reason: PendingReason): PendingDependency {
  return dep.namespace === namespace
    ? { kind: dep.kind, name: dep.name, reason }
    : { kind: dep.kind, name: dep.name, namespace: dep.namespace, reason };
}
