// Creating a Namespace that may already be there: the one helper of the
// ProxySync reconciler (its remote Sync's namespace) and `syncprims diff`
// (the same, dry-run).
import type { Requester } from './client.js';
import { ApiError } from './errors.js';
import { collectionPath, CORE, type KubeObject } from './resources.js';

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
