// The prologue of a test file that drives syncs through one operator: its
// namespace and the operator watching it, in one call.
import type { KubeClient } from '../../src/kube/client.js';
import { useTestNamespace } from './namespace.js';
import { useSyncOperator, type OperatorProcess } from './operator.js';

/** What the calling file works with once its operator runs: an admin client of the cluster and the operator. */
export interface Operated {
  client: KubeClient;
  op: OperatorProcess;
}

/**
 * useTestNamespace and useSyncOperator in one: a namespace of `cluster` of
 * the calling file's own (named `prefix`-random) and one operator watching it
 * (`args`: more flags), started before the file's tests and stopped after
 * them. `ready` receives the client and the operator, e.g.
 * `(o) => ({ client, op } = o)`. Returns the getter of the namespace's name.
 */
export function useOperatedNamespace(cluster: string, prefix: string, ready: (started: Operated) => void, args: string[] = []): () => string {
  const ns = useTestNamespace(cluster, prefix);
  useSyncOperator(cluster, ns, (client, op) => ready({ client, op }), args);
  return ns;
}
