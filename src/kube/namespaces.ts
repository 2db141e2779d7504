// Creating a Namespace that may already be there: the one helper of the
// ProxySync reconciler (its remote Sync's namespace: ensureNamespace) and
// `syncprims diff` (the same, dry-run: createNamespace).
import { getIfExists, type Requester } from './client.js';
import { ApiError } from './errors.js';
import { collectionPath, CORE, objectPath, type KubeObject } from './resources.js';

/** Creates the namespace (`dryRun`: only asks the server whether it would); undefined when it exists already (409). Other errors are thrown. */
export async function createNamespace(client: Requester, name: string, opts: { dryRun?: boolean } = {}): Promise<KubeObject | undefined> {
  try {
    const created = await client.request<KubeObject>({
      method: 'POST',
      path: collectionPath(CORE.namespaces),
      ...(opts.dryRun ? { query: { dryRun: 'All' } } : {}),
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
    });
    return { ...created, apiVersion: 'v1', kind: 'Namespace' };
  } catch (err) {
    if (err instanceof ApiError && err.conflict) return undefined;
    throw err;
  }
}

/**
 * Makes sure the namespace is there: creates it when missing. An identity
 * confined to its namespaces may not create namespaces: one that is there
 * will do, so the refusal (403) is thrown only when the namespace is known
 * not to exist (one the identity may not read either is left to the writes
 * that follow, whose errors name it). Other errors are thrown.
 */
export async function ensureNamespace(client: Requester, name: string): Promise<void> {
  try {
    await createNamespace(client, name);
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 403)) throw err;
    if (await namespaceMissing(client, name)) throw err;
  }
}

/** Whether a namespace is known not to exist: false when the identity may not read it. */
async function namespaceMissing(client: Requester, name: string): Promise<boolean> {
  try {
    return (await getIfExists(client, objectPath(CORE.namespaces, name))) === undefined;
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return false;
    throw err;
  }
}
