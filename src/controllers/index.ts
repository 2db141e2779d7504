import { API_VERSION, KIND_NAMES, SYNC_KINDS, type SyncKind } from '../api/index.js';
import { UnknownKindError } from '../kube/discovery.js';
import { Controller } from '../runtime/controller.js';
import type { ControllerFactory, Manager } from '../runtime/manager.js';
import { ObjectWriter } from '../runtime/object-writer.js';
import { lifecycleReconciler } from './lifecycle.js';

/** The controllers of the three kinds (`sync`, `remotesync`, `proxysync`). */
export function syncControllers(opts: { concurrency: number }): ControllerFactory[] {
  return SYNC_KINDS.map((kind) => (m: Manager) => kindController(m, kind, opts.concurrency));
}

async function kindController(m: Manager, kind: SyncKind, concurrency: number): Promise<Controller> {
  const resource = await m.cache.discovery.resolve(API_VERSION, kind).catch((err: unknown) => {
    if (err instanceof UnknownKindError) {
      throw new Error(
        `the ${KIND_NAMES[kind].plural}.${API_VERSION.split('/')[0]} CRD is not installed in ${m.client.name}: apply crds/ first (kubectl apply --server-side -f crds/)`,
      );
    }
    throw err;
  });
  const informer = await m.cache.informer(API_VERSION, kind);
  return new Controller({
    name: kind.toLowerCase(),
    kind,
    informer,
    concurrency,
    metrics: m.metrics,
    logger: m.log,
    reconciler: lifecycleReconciler({ kind, informer, writer: new ObjectWriter(m.client, resource), events: m.events }),
  });
}
