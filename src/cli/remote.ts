// Following a RemoteSync's or ProxySync's kubeconfig Secret into its cluster,
// as `tree`, `trace`, `diff` and `doctor` do. The kubeconfig is checked as
// the operator checks it (clusters/kubeconfig.ts) before anything is used: a
// tenant's `exec` user or file path never runs or is read on the admin's
// machine. Reading the Secret needs `get secrets` in the sync's namespace.
import { secretRefOf, type ClusterSpec, type RemoteProblem } from '../clusters/cluster-spec.js';
import { checkedKubeconfig, KubeconfigError } from '../clusters/kubeconfig.js';
import { pullTargetOf, type PullTarget } from '../clusters/pull-target.js';
import { getIfExists, KubeClient } from '../kube/client.js';
import { ApiError, TransportError } from '../kube/errors.js';
import { CORE, objectPath, type KubeObject } from '../kube/resources.js';
import { describeRef, readKey } from '../source/kube-refs.js';
import { packageVersion } from '../version.js';
import type { Cluster } from './cluster.js';
import { CLI_USER_AGENT } from './cluster.js';
import { findCause, serverMessage } from './errors.js';

/** A remote cluster is given this long to answer: a stopped one must not hold the command up. */
const REMOTE_TIMEOUT_MS = 10_000;
const REMOTE_CONNECT_TIMEOUT_MS = 5_000;

export type RemoteTarget =
  | { ok: true; client: KubeClient; /** `Secret ns/name key k`, for messages. */ kubeconfigFrom: string }
  | { ok: false; problem: RemoteProblem; message: string };

/**
 * Opens the cluster a RemoteSync or ProxySync targets, from the managing
 * cluster `home`. Opening asks nothing of the remote cluster: its first
 * request does (see `remoteFailure`). Close the client when done.
 */
export async function openRemote(home: Pick<Cluster, 'client'>, sync: KubeObject): Promise<RemoteTarget> {
  const ref = secretRefOf(sync, ((sync as { spec?: ClusterSpec }).spec ?? {}) as ClusterSpec);
  const secret = { apiVersion: 'v1', kind: 'Secret', namespace: ref.namespace, name: ref.name };
  const kubeconfigFrom = `${describeRef(secret)} key ${ref.key}`;
  let text: string;
  try {
    text = (await readKey({ client: home.client }, secret, ref.key, ref.field)).toString('utf8');
  } catch (err) {
    // readKey wraps what the API server said in a SourceError (for the operator's status).
    const api = findCause(err, ApiError);
    if (api?.status === 403) {
      return {
        ok: false,
        problem: 'forbidden',
        message: `cannot read ${describeRef(secret)} (${serverMessage(api)}): following a sync into its cluster needs get secrets in namespace ${ref.namespace}`,
      };
    }
    if (findCause(err, TransportError) || (api && !api.notFound)) throw err;
    // No key: a pull cluster's registration holds none (it is never dialled).
    const pull = api ? undefined : pullTargetOf(await getIfExists<KubeObject>(home.client, objectPath(CORE.secrets, ref.name, ref.namespace)), ref);
    if (pull) return { ok: false, problem: 'pull', message: pullMessage(pull) };
    // Not found, or no such key: the SourceError says which and what to fix.
    return { ok: false, problem: 'missing', message: err instanceof Error ? err.message : String(err) };
  }
  try {
    const kubeConfig = checkedKubeconfig(text, kubeconfigFrom);
    const name = `${ref.namespace}/${ref.name}`;
    const client = await KubeClient.create(name, kubeConfig, `${CLI_USER_AGENT}/${packageVersion()} (${name})`, {
      timeoutMs: REMOTE_TIMEOUT_MS,
      connectTimeoutMs: REMOTE_CONNECT_TIMEOUT_MS,
    });
    return { ok: true, client, kubeconfigFrom };
  } catch (err) {
    if (err instanceof KubeconfigError) return { ok: false, problem: 'refused', message: err.message };
    throw err;
  }
}

/** Why a pull cluster is not followed: nobody dials it; its own operator keeps its Syncs from the assignments here. */
function pullMessage(pull: PullTarget): string {
  return `cluster ${pull.cluster} is a pull cluster (never dialled: its own operator keeps its Syncs there); their assignments and status are in namespace ${pull.namespace} of this cluster: syncprims get syncs -n ${pull.namespace}`;
}

/**
 * One line for an error met in a remote cluster when it is that cluster's
 * fault (unreachable, credentials refused), or undefined for any other error.
 * A command shows the line in place of what it could not read there.
 */
export function remoteFailure(err: unknown, client: KubeClient): string | undefined {
  const transport = findCause(err, TransportError);
  if (transport) return `unreachable: ${client.server.origin}: ${serverMessage(transport)}`;
  if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
    return `${err.status === 401 ? 'credentials refused' : 'forbidden'} at ${client.server.origin}: ${serverMessage(err)}`;
  }
  return undefined;
}
