import type { Requester } from './client.js';
import type { Discovery } from './discovery.js';
import { objectPath, type KubeObject } from './resources.js';

export interface ApplyOptions {
  fieldManager: string;
  force?: boolean;
  dryRun?: boolean;
}

/**
 * Server-side apply of one object, sent as raw JSON so no field is dropped on
 * the way (an apply patch may be JSON: YAML is a superset of it).
 */
export async function serverSideApply<T extends KubeObject = KubeObject>(
  client: Requester,
  discovery: Discovery,
  obj: KubeObject,
  opts: ApplyOptions,
): Promise<T> {
  const name = obj.metadata.name;
  if (!name) throw new Error(`${obj.kind} without metadata.name cannot be applied`);
  const info = await discovery.resolve(obj.apiVersion, obj.kind);
  return client.request<T>({
    method: 'PATCH',
    path: objectPath(info, name, obj.metadata.namespace),
    query: { fieldManager: opts.fieldManager, force: opts.force || undefined, dryRun: opts.dryRun ? 'All' : undefined },
    contentType: 'application/apply-patch+yaml',
    body: obj,
  });
}
