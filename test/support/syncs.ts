// Helpers for tests that drive Syncs through a running operator.
import { API_VERSION } from '../../src/api/index.js';
import { mapLimit } from '../../src/apply/map-limit.js';
import type { KubeClient } from '../../src/kube/client.js';
import { ApiError } from '../../src/kube/errors.js';
import type { KubeObject } from '../../src/kube/resources.js';
import type { Condition } from '../../src/runtime/conditions.js';
import { eventually } from './eventually.js';

export interface SyncObject extends KubeObject {
  spec: Record<string, unknown>;
  status?: {
    observedGeneration?: number;
    conditions?: Condition[];
    lastAppliedRevision?: string;
    lastAttemptedRevision?: string;
    inventory?: { entries: { id: string; v: string }[] };
    summary?: Record<string, unknown>;
    lastHandledReconcileAt?: string;
  };
}

export const syncPath = (namespace: string, name = '', kind = 'syncs'): string =>
  `/apis/${API_VERSION}/namespaces/${namespace}/${kind}${name ? `/${name}` : ''}`;

/** Creates or updates a Sync with server-side apply (manager `test`). */
export async function applySync(client: KubeClient, namespace: string, name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): Promise<SyncObject> {
  return client.request<SyncObject>({
    method: 'PATCH',
    path: syncPath(namespace, name),
    query: { fieldManager: 'test', force: true },
    contentType: 'application/apply-patch+yaml',
    body: { apiVersion: API_VERSION, kind: 'Sync', metadata: { name, namespace, ...metadata }, spec },
  });
}

export function getSync(client: KubeClient, namespace: string, name: string, plural = 'syncs'): Promise<SyncObject> {
  return client.request<SyncObject>({ path: syncPath(namespace, name, plural) });
}

export function readyOf(sync: SyncObject): Condition | undefined {
  return sync.status?.conditions?.find((c) => c.type === 'Ready');
}

/**
 * Waits until the sync's Ready condition has this status (and reason, if
 * given) for its current generation; `plural` names the kind (`syncs`,
 * `remotesyncs`, `proxysyncs`). A timeout says what Ready was last.
 */
export async function waitForReady(
  client: KubeClient,
  namespace: string,
  name: string,
  status: 'True' | 'False' | 'Unknown',
  reason?: string,
  timeoutMs = 60_000,
  plural = 'syncs',
): Promise<SyncObject> {
  let last: SyncObject | undefined;
  return eventually(
    `${plural} ${namespace}/${name} Ready=${status}${reason ? ` (${reason})` : ''}`,
    async () => {
      const s = (last = await getSync(client, namespace, name, plural));
      const ready = readyOf(s);
      const current = s.status?.observedGeneration === s.metadata.generation;
      return current && ready?.status === status && (!reason || ready.reason === reason) ? s : undefined;
    },
    timeoutMs,
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}; last Ready: ${JSON.stringify(last ? readyOf(last) : undefined)}`);
  });
}

/**
 * Deletes a sync and waits until it is gone, its operator having pruned what
 * it applied. A test whose sync applies cluster-scoped objects (CRDs,
 * Namespaces) ends with it: deleting the test namespace would not remove
 * them, and every run would leave them behind in the local clusters.
 */
export async function deleteSyncAndWait(client: KubeClient, namespace: string, name: string, plural = 'syncs'): Promise<void> {
  await client.request({ method: 'DELETE', path: syncPath(namespace, name, plural) });
  await eventually(`${plural} ${namespace}/${name} to be gone (its objects pruned)`, async () =>
    (await find(client, syncPath(namespace, name, plural))) === undefined ? true : undefined,
  );
}

/** The object at `path`, or undefined when it does not exist. */
export async function find<T = KubeObject>(client: KubeClient, path: string): Promise<T | undefined> {
  try {
    return await client.request<T>({ path });
  } catch (err) {
    if (err instanceof ApiError && err.notFound) return undefined;
    throw err;
  }
}

export interface EventObject {
  reason: string;
  message: string;
  type: string;
  involvedObject: { name: string; kind: string };
  /** How many times it happened (a repeat of the same Event raises it). */
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  metadata: { name: string };
}

/** Events recorded on an object. */
export async function eventsFor(client: KubeClient, namespace: string, name: string): Promise<EventObject[]> {
  const list = await client.request<{ items: EventObject[] }>({
    path: `/api/v1/namespaces/${namespace}/events`,
    query: { fieldSelector: `involvedObject.name=${name}` },
  });
  return list.items;
}

/**
 * Waits for an Event of `reason` (and `type`) on the object: the operator
 * records it after the status write a test may have seen first.
 */
export async function eventOf(client: KubeClient, namespace: string, name: string, reason: string, type?: 'Normal' | 'Warning', timeoutMs = 30_000): Promise<EventObject> {
  return eventually(`a ${reason} Event on ${name}`, async () =>
    (await eventsFor(client, namespace, name)).find((e) => e.reason === reason && (!type || e.type === type)), timeoutMs);
}

/** A Sync spec that applies one ConfigMap of the Sync's own name. */
export const oneConfigMap =
  (namespace: string, extra: Record<string, unknown> = {}) =>
  (name: string): Record<string, unknown> => ({
    ...extra,
    source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace } }] },
  });

/** Creates many Syncs, 32 at a time; `specOf` gives each its spec. */
export async function createSyncs(
  client: KubeClient,
  namespace: string,
  names: string[],
  specOf: (name: string) => Record<string, unknown> = oneConfigMap(namespace),
): Promise<void> {
  await mapLimit(names, 32, (name) =>
    client.request({
      method: 'POST',
      path: syncPath(namespace),
      body: { apiVersion: API_VERSION, kind: 'Sync', metadata: { name }, spec: specOf(name) },
    }),
  );
}
