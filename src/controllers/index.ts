import { API_VERSION, KIND_NAMES, SYNC_KINDS, type SyncKind } from '../api/index.js';
import { OwnedObjects } from '../apply/owned-objects.js';
import { UnknownKindError } from '../kube/discovery.js';
import type { ResourceInfo } from '../kube/resources.js';
import { Controller, type Reconciler } from '../runtime/controller.js';
import type { ControllerFactory, Manager } from '../runtime/manager.js';
import { ObjectWriter } from '../runtime/object-writer.js';
import { lifecycleReconciler, type LifecycleDeps } from './lifecycle.js';
import { SourceWatches } from './source-watches.js';
import { SyncPipeline } from './sync-pipeline.js';
import { syncReconciler } from './sync.js';

export interface ControllerSettings {
  concurrency: number;
}

/** The controllers of the three kinds (`sync`, `remotesync`, `proxysync`). */
export function syncControllers(settings: ControllerSettings): ControllerFactory[] {
  let owned: OwnedObjects | undefined;
  const controllers = new Map<string, Controller>();
  const enqueue = (kind: string, key: string): void => controllers.get(kind)?.enqueue(key);
  return SYNC_KINDS.map((kind) => async (m: Manager) => {
    if (!owned) {
      owned = new OwnedObjects(m.cache);
      owned.onOwnerChange((o) => enqueue(o.kind, `${o.namespace}/${o.name}`));
    }
    const c = await kindController(m, kind, settings, owned, enqueue);
    controllers.set(kind, c);
    return c;
  });
}

async function kindController(
  m: Manager,
  kind: SyncKind,
  settings: ControllerSettings,
  owned: OwnedObjects,
  enqueue: (kind: string, key: string) => void,
): Promise<Controller> {
  const resource = await resolveKind(m, kind);
  const informer = await m.cache.informer(API_VERSION, kind);
  const deps: LifecycleDeps = { kind, informer, writer: new ObjectWriter(m.client, resource), events: m.events };
  let reconciler: Reconciler;
  if (kind === 'Sync') {
    const pipeline: SyncPipeline = new SyncPipeline({
      home: m.client,
      target: m.client,
      targetDiscovery: m.cache.discovery,
      owned,
      sources: new SourceWatches(m.cache, (key) => {
        pipeline.markSourceChanged(key);
        enqueue(kind, key);
      }),
      writer: deps.writer,
      events: m.events,
      concurrency: settings.concurrency * 2,
    });
    reconciler = syncReconciler(deps, pipeline);
  } else {
    reconciler = lifecycleReconciler(deps);
  }
  return new Controller({
    name: kind.toLowerCase(),
    kind,
    informer,
    concurrency: settings.concurrency,
    metrics: m.metrics,
    logger: m.log,
    reconciler,
  });
}

async function resolveKind(m: Manager, kind: SyncKind): Promise<ResourceInfo> {
  try {
    return await m.cache.discovery.resolve(API_VERSION, kind);
  } catch (err) {
    if (err instanceof UnknownKindError) {
      throw new Error(
        `the ${KIND_NAMES[kind].plural}.${API_VERSION.split('/')[0]} CRD is not installed in ${m.client.name}: apply crds/ first (kubectl apply --server-side -f crds/)`,
      );
    }
    throw err;
  }
}
