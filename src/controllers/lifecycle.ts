import {
  ConditionType,
  FINALIZER,
  parseSyncObject,
  Reason,
  RECONCILE_REQUESTED_AT_ANNOTATION,
  type Kind,
  type KindTypes,
} from '../api/index.js';
import type { KubeObject } from '../kube/resources.js';
import { displayNode } from '../deps/refs.js';
import type { DependencyGraph } from '../deps/graph.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Informer } from '../runtime/informer.js';
import type { Logger } from '../runtime/logger.js';
import type { ObjectWriter } from '../runtime/object-writer.js';
import { removeCondition } from '../runtime/conditions.js';
import type { DependencyStep } from './dependencies.js';
import { failed, suspended, type SyncStatusDraft } from './sync-status.js';

export interface LifecycleDeps {
  kind: Kind;
  informer: Informer<KubeObject>;
  writer: ObjectWriter;
  events: EventRecorder;
  graph: DependencyGraph;
  dependencies: DependencyStep;
}

/** A sync object that passed the common steps and is ready for its kind's pipeline. */
export interface ReconcileContext<K extends Kind> {
  obj: KubeObject;
  value: KindTypes[K];
  /** The status so far: the stored one plus observedGeneration and lastHandledReconcileAt. */
  status: SyncStatusDraft;
  generation?: number;
  /** Suspended (only with `handlesSuspend`: the kind does what suspension means for it; dependencies were not checked). */
  suspended?: boolean;
  /**
   * Settles once the finalizer is on (at once when it was already). With
   * `finalizerAlongside` the pipeline awaits it before its first write to a
   * target: what it applies before the finalizer is on could be left behind
   * by a deletion.
   */
  finalizer: Promise<unknown>;
}

/** Either the context for the kind's pipeline, or what to return from the reconcile. */
export type Begun<K extends Kind> = { ctx: ReconcileContext<K> } | { done: ReconcileResult | undefined };

/**
 * Cleans up what a deleted sync owns: resolves when done (the finalizer is
 * then removed), resolves with a requeue to wait (and say why, in its
 * status), or throws to be retried.
 */
export type Finalizer = (obj: KubeObject, log: Logger) => Promise<void | { requeueAfterMs: number }>;

const NOTHING_LEFT = { done: undefined } as const;

/**
 * The steps every kind shares: find the object in the cache, handle
 * deletion through the finalizer (after dependents being deleted with it
 * have pruned), add the finalizer, check the spec (InvalidSpec stalls until
 * the spec changes), honour suspend, check dependencies. Returns the context
 * for the kind's pipeline, or what the reconcile returns when it stops here.
 */
export async function beginReconcile<K extends Kind>(
  deps: LifecycleDeps & { kind: K },
  key: string,
  log: Logger,
  finalize: Finalizer,
  opts: { handlesSuspend?: boolean; finalizerAlongside?: boolean } = {},
): Promise<Begun<K>> {
  const obj = deps.informer.store.get(key);
  if (!obj) return NOTHING_LEFT;
  if (obj.metadata.deletionTimestamp) return { done: await handleDeletion(deps, obj, log, finalize) };
  // Once the finalizer is on (or our patch adding it is), go on in this same
  // reconcile: a new sync applies without a round trip through the queue.
  // With `finalizerAlongside` the patch is in flight while the checks below
  // run and the pipeline fetches its source (the writer holds status writes
  // of the object until it lands); a reconcile that stops here waits for it.
  const finalizer = deps.writer.ensureFinalizer(obj, FINALIZER);
  finalizer.catch(() => undefined); // awaited below, or by the pipeline
  if (!opts.finalizerAlongside) await finalizer;
  const begun = await checks(deps, obj, log, finalizer, opts);
  if ('done' in begun) await finalizer;
  return begun;
}

/** The spec, suspension and dependencies of a sync whose finalizer is on or on its way. */
async function checks<K extends Kind>(
  deps: LifecycleDeps & { kind: K },
  obj: KubeObject,
  log: Logger,
  finalizer: Promise<unknown>,
  opts: { handlesSuspend?: boolean },
): Promise<Begun<K>> {
  const generation = obj.metadata.generation;
  // Our own last status write when the cache has not caught up with it yet (the echo of a write just made).
  let status: SyncStatusDraft = { ...(deps.writer.statusOf(obj) as SyncStatusDraft), observedGeneration: generation };
  const requested = obj.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
  if (requested !== undefined) status.lastHandledReconcileAt = requested;

  const parsed = parseSyncObject(deps.kind, obj);
  if (!parsed.ok) {
    await reportInvalidSpec(deps, obj, status, `invalid spec: ${parsed.message}`, log);
    return NOTHING_LEFT;
  }
  if (status.conditions?.some((c) => c.type === ConditionType.Stalled && c.reason === Reason.InvalidSpec)) {
    status = { ...status, conditions: removeCondition(status.conditions, ConditionType.Stalled) };
  }
  if ((parsed.value.spec as { suspend?: boolean }).suspend) {
    if (opts.handlesSuspend) return { ctx: { obj, value: parsed.value, status, generation, suspended: true, finalizer } };
    if (await deps.writer.updateStatus(obj, suspended(status, generation))) log.info('suspended');
    return NOTHING_LEFT;
  }
  const dependencies = await deps.dependencies.check(deps.kind, obj, status, log);
  if (!dependencies.proceed) return { done: dependencies.result };
  return { ctx: { obj, value: parsed.value, status: dependencies.status, generation, finalizer } };
}

/**
 * How long a sync being deleted that still has dependents waits before it
 * prunes, so that dependents deleted in the same breath (`kubectl delete -f`,
 * a namespace's deletion) are seen as such and prune first.
 */
export const DELETION_GRACE_MS = 2000;

/**
 * A sync being deleted: once dependents being deleted with it have pruned
 * (their deletion events bring it back), clean up and remove the finalizer.
 * A dependent that is not being deleted does not hold it up.
 */
async function handleDeletion(deps: LifecycleDeps, obj: KubeObject, log: Logger, finalize: Finalizer): Promise<ReconcileResult | undefined> {
  if (!obj.metadata.finalizers?.includes(FINALIZER)) return undefined;
  const namespace = obj.metadata.namespace ?? '';
  const holding = deps.graph.dependentsBeingDeleted(deps.kind, obj);
  if (holding.length > 0) {
    log.info({ dependents: holding.map((n) => displayNode(n, namespace)) }, 'deletion waits for dependents being deleted to prune first');
    return undefined;
  }
  const graceLeft = Date.parse(obj.metadata.deletionTimestamp ?? '') + DELETION_GRACE_MS - Date.now();
  if (graceLeft > 0 && deps.graph.liveDependents(deps.kind, obj).length > 0) return { requeueAfterMs: graceLeft };
  deps.dependencies.forget(deps.kind, obj);
  const waiting = await finalize(obj, log).catch(async (err: unknown) => {
    if (!(err instanceof CleanUpFailed)) throw err; // tried again with backoff
    await reportCleanUpFailed(deps, obj, err.message, log);
    // A refusal stands until someone changes RBAC or the object: no burst of retries in its first second.
    return { retry: { minDelayMs: CLEANUP_RETRY_MS } };
  });
  if (waiting) return waiting;
  if (await deps.writer.removeFinalizer(obj, FINALIZER)) log.info('deleted: finalizer removed');
  return undefined;
}

/**
 * What a deletion must remove could not be removed (refused, or it failed):
 * the finalizer stays, the sync says why (Ready=False, PruneFailed, and an
 * Event), and the deletion is tried again with backoff (from a second).
 */
export class CleanUpFailed extends Error {
  override name = 'CleanUpFailed';
}

/** The least wait before a refused clean-up is tried again (then the controller's backoff, up to 5 minutes). */
const CLEANUP_RETRY_MS = 1_000;

async function reportCleanUpFailed(deps: LifecycleDeps, obj: KubeObject, why: string, log: Logger): Promise<void> {
  const message = `deletion waits: ${why}`;
  // Observed: the deletion (which raised the generation) is this generation's news.
  const generation = obj.metadata.generation;
  const status = { ...failed((obj.status ?? {}) as SyncStatusDraft, Reason.PruneFailed, message, generation), observedGeneration: generation };
  if (await deps.writer.updateStatus(obj, status)) {
    log.warn({ reason: Reason.PruneFailed, message }, 'deletion cannot clean up');
    await deps.events.record(obj, 'Warning', Reason.PruneFailed, message);
  }
}

/** Ready=False and Stalled=True, reason InvalidSpec: it waits for the spec to change. */
async function reportInvalidSpec(deps: LifecycleDeps, obj: KubeObject, base: SyncStatusDraft, message: string, log: Logger): Promise<void> {
  const status = failed(base, Reason.InvalidSpec, message, obj.metadata.generation);
  if (await deps.writer.updateStatus(obj, status)) {
    log.warn({ reason: Reason.InvalidSpec, message }, 'invalid spec; waiting for it to change');
    await deps.events.record(obj, 'Warning', Reason.InvalidSpec, message);
  }
}
