import { API_VERSION, KIND_NAMES, SYNC_KINDS, type SyncKind } from '../api/index.js';
import { OwnedObjects } from '../apply/owned-objects.js';
import { DependencyGraph } from '../deps/graph.js';
import { UnknownKindError } from '../kube/discovery.js';
import type { KubeObject, ResourceInfo } from '../kube/resources.js';
import { Controller, type Reconciler } from '../runtime/controller.js';
import type { Informer } from '../runtime/informer.js';
import type { ControllerFactory, Manager } from '../runtime/manager.js';
import { ObjectWriter } from '../runtime/object-writer.js';
import { DependencyStep } from './dependencies.js';
import { lifecycleReconciler, type LifecycleDeps } from './lifecycle.js';
import { SourceWatches } from './source-watches.js';
import { SyncPipeline } from './sync-pipeline.js';
import { syncReconciler } from './sync.js';

export interface ControllerSettings {
  concurrency: number;
  /** Let `dependsOn` name syncs in other namespaces (API.md: off by default). */
  allowCrossNamespaceRefs?: boolean;
}

/** What the three controllers share: the owned-object informers and the dependency graph. */
interface Shared {
  owned: OwnedObjects;
  graph: DependencyGraph;
  informers: Record<SyncKind, Informer<KubeObject>>;
  resources: Record<SyncKind, ResourceInfo>;
}

/** The controllers of the three kinds (`sync`, `remotesync`, `proxysync`). */
export function syncControllers(settings: ControllerSettings): ControllerFactory[] {
  let shared: Promise<Shared> | undefined;
  const controllers = new Map<SyncKind, Controller>();
  const enqueue = (kind: SyncKind, key: string): void => controllers.get(kind)?.enqueue(key);
  return SYNC_KINDS.map((kind) => async (m: Manager) => {
    shared ??= share(m, settings, controllers, enqueue);
    const c = kindController(m, kind, settings, await shared, enqueue);
    controllers.set(kind, c);
    return c;
  });
}

async function share(
  m: Manager,
  settings: ControllerSettings,
  controllers: Map<SyncKind, Controller>,
  enqueue: (kind: SyncKind, key: string) => void,
): Promise<Shared> {
  const owned = new OwnedObjects(m.cache);
  owned.onOwnerChange((o) => enqueue(o.kind as SyncKind, `${o.namespace}/${o.name}`));
  const resources = {} as Record<SyncKind, ResourceInfo>;
  const informers = {} as Record<SyncKind, Informer<KubeObject>>;
  for (const kind of SYNC_KINDS) {
    resources[kind] = await resolveKind(m, kind);
    informers[kind] = await m.cache.informer(API_VERSION, kind);
  }
  const graph = new DependencyGraph({
    informers,
    allowCrossNamespaceRefs: settings.allowCrossNamespaceRefs,
    wake: (kind, key) => {
      m.metrics.dependencyWakes.inc({ controller: KIND_NAMES[kind].singular });
      enqueue(kind, key);
    },
    inFlight: (kind, key) => controllers.get(kind)?.isPending(key) ?? false,
  });
  return { owned, graph, informers, resources };
}

function kindController(
  m: Manager,
  kind: SyncKind,
  settings: ControllerSettings,
  shared: Shared,
  enqueue: (kind: SyncKind, key: string) => void,
): Controller {
  const { graph, owned } = shared;
  const informer = shared.informers[kind];
  const writer = new ObjectWriter(m.client, shared.resources[kind], (written) => graph.noteWrite(kind, written));
  informer.onEvent((e) => {
    if (e.type === 'deleted') writer.forget(e.object);
  });
  const deps: LifecycleDeps = {
    kind,
    informer,
    writer,
    events: m.events,
    graph,
    dependencies: new DependencyStep({ graph, writer, events: m.events, metrics: m.metrics }),
  };
  let reconciler: Reconciler;
  if (kind === 'Sync') {
    const pipeline: SyncPipeline = new SyncPipeline({
      home: m.client,
      homeDiscovery: m.cache.discovery,
      target: m.client,
      targetDiscovery: m.cache.discovery,
      owned,
      sources: new SourceWatches(m.cache, (key) => {
        pipeline.markSourceChanged(key);
        enqueue(kind, key);
      }),
      writer,
      events: m.events,
      concurrency: settings.concurrency * 2,
    });
    reconciler = syncReconciler(deps, pipeline);
  } else {
    reconciler = lifecycleReconciler(deps);
  }
  return new Controller({
    name: KIND_NAMES[kind].singular,
    kind,
    informer,
    concurrency: settings.concurrency,
    metrics: m.metrics,
    logger: m.log,
    reconciler,
    afterReconcile: (key) => graph.reconciled(kind, key),
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
