import type { Requester } from './client.js';
import { CORE, objectPath } from './resources.js';

/**
 * The uid of the cluster's kube-system namespace: stable for the cluster's
 * life, and the operator's default `--cluster-id` (the origin label of what
 * it applies to remote clusters). Errors are the caller's to word.
 */
export async function kubeSystemUid(client: Requester): Promise<string> {
  const ns = await client.request<{ metadata: { uid: string } }>({ path: objectPath(CORE.namespaces, 'kube-system') });
  return ns.metadata.uid;
}
