import { API_VERSION, KIND_NAMES, KINDS, syncResource, type Kind } from '../api/kinds.js';
import type { KubeClient } from '../kube/client.js';
import { ApiError } from '../kube/errors.js';
import { collectionPath, objectPath, type KubeObject } from '../kube/resources.js';
import { CliError, describeApiError } from './errors.js';

/** Reading Syncs, RemoteSyncs, ProxySyncs and FleetSyncs: paths, lists, one object, with errors a person can act on. */

/** The collection path of a kind: in one namespace, or in all when `namespace` is undefined. */
export function syncCollectionPath(kind: Kind, namespace?: string): string {
  return collectionPath(syncResource(kind), namespace);
}

/** The path of one object of a kind. */
export function syncObjectPath(kind: Kind, namespace: string, name: string): string {
  return objectPath(syncResource(kind), name, namespace);
}

export interface SyncList {
  kind: Kind;
  items: KubeObject[];
  resourceVersion: string;
}

interface ListPage {
  items: KubeObject[];
  metadata: { resourceVersion?: string; continue?: string };
}

/** Every object of a kind (paged); items get back the apiVersion and kind a list leaves out. */
export async function listSyncs(client: KubeClient, kind: Kind, namespace?: string, labelSelector?: string): Promise<SyncList> {
  const items: KubeObject[] = [];
  let token: string | undefined;
  let resourceVersion = '';
  do {
    const page = await client
      .request<ListPage>({ path: syncCollectionPath(kind, namespace), query: { limit: 500, continue: token, labelSelector } })
      .catch((err: unknown) => {
        throw explain(err, kind, namespace === undefined ? 'in all namespaces' : `in namespace ${namespace}`, client);
      });
    items.push(...page.items.map((o) => withKind(o, kind)));
    token = page.metadata.continue || undefined;
    resourceVersion = page.metadata.resourceVersion ?? '';
  } while (token);
  return { kind, items, resourceVersion };
}

/**
 * Every object of `kinds` (all by default). A cluster whose CRDs predate
 * FleetSync lists none of them, and the other kinds still (its list is left
 * out); any other error ends the read.
 */
export async function listKinds(client: KubeClient, namespace?: string, kinds: readonly Kind[] = KINDS): Promise<SyncList[]> {
  const lists = await Promise.all(
    kinds.map((kind) =>
      listSyncs(client, kind, namespace).catch((err: unknown) => {
        if (kind === 'FleetSync' && kinds.length > 1 && notServed(err)) return undefined;
        throw err;
      }),
    ),
  );
  return lists.filter((l): l is SyncList => l !== undefined);
}

function notServed(err: unknown): boolean {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof ApiError && cause.notFound;
}

/** One object; a missing one is a CliError (exit 1) that says where it was looked for. */
export async function getSync(client: KubeClient, kind: Kind, namespace: string, name: string): Promise<KubeObject> {
  try {
    const obj = await client.request<KubeObject>({ path: syncObjectPath(kind, namespace, name) });
    return withKind(obj, kind);
  } catch (err) {
    if (err instanceof ApiError && err.notFound && err.reason === 'NotFound' && (err.details as { kind?: string } | undefined)?.kind) {
      throw new CliError(`${kind} ${namespace}/${name} not found (list them: syncprims get ${KIND_NAMES[kind].singular} -n ${namespace})`, undefined, { cause: err });
    }
    throw explain(err, kind, `${namespace}/${name}`, client);
  }
}

export function withKind(obj: KubeObject, kind: Kind): KubeObject {
  return { ...obj, apiVersion: obj.apiVersion || API_VERSION, kind: obj.kind || kind };
}

/** A 404 on a collection means the kind is not served: the CRDs are missing. */
function explain(err: unknown, kind: Kind, where: string, client: KubeClient): unknown {
  const what = `reading ${KIND_NAMES[kind].plural} ${where}`;
  if (err instanceof ApiError && err.notFound) {
    return new CliError(
      `${what}: the cluster at ${client.server.origin} does not serve ${API_VERSION} ${KIND_NAMES[kind].plural}: install the syncprims CRDs (kubectl apply --server-side -f crds/)`,
      undefined,
      { cause: err },
    );
  }
  return describeApiError(err, what) ?? err;
}
