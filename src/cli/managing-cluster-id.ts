// The managing cluster's id as the operator has it (its `--cluster-id`, by
// default the uid of kube-system): the origin label of what it applies to
// remote clusters, which `diff` and `tree` need to tell our objects there
// from another managing cluster's twins (apply/owner.ts ownedBy).
import { kubeSystemUid } from '../kube/cluster-id.js';
import type { KubeClient } from '../kube/client.js';
import { TransportError } from '../kube/errors.js';
import { CliError, findCause } from './errors.js';

/** The managing cluster's id, read once and only when a RemoteSync or ProxySync needs it (as the operator's default). */
export function lazyClusterId(client: KubeClient, given: string | undefined): () => Promise<string> {
  let id: Promise<string> | undefined = given === undefined ? undefined : Promise.resolve(given);
  return () =>
    (id ??= kubeSystemUid(client).catch(
      (err: unknown) => {
        if (findCause(err, TransportError)) throw err;
        throw new CliError(`cannot read the kube-system namespace for the cluster id (${err instanceof Error ? err.message : String(err)}): pass --cluster-id as given to the operator`);
      },
    ));
}

