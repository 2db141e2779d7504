// Follows an object up to the syncs that applied it: the sync its owner
// labels name (in the same cluster, or, with an origin label, in the
// managing cluster), then the sync that applied that sync (a ProxySync's
// remote Sync leads to the ProxySync), until one that nobody applied.
import type { Kind } from '../../api/kinds.js';
import { getIfExists } from '../../kube/client.js';
import { objectPath, type KubeObject } from '../../kube/resources.js';
import type { Cluster } from '../cluster.js';
import { CliError } from '../errors.js';
import { syncObjectPath, withKind } from '../../views/sync-api.js';
import { linkOf, ownerOf, unfoundLink, type Trace, type TracedObject } from './trace-chain.js';
import { ManagingClusters, type ManagingFlags } from './trace-origin.js';
import { resolveResource, type ResourceArg } from './trace-resource.js';

/** Syncs applying syncs: deeper than this is a loop of labels, not a chain. */
const MAX_CHAIN = 10;

export async function traceObject(home: Cluster, arg: ResourceArg, flags: ManagingFlags): Promise<Trace> {
  const info = await resolveResource(home.client, arg.resource);
  const namespace = info.namespaced ? home.namespace : undefined;
  const found = await getIfExists<KubeObject>(home.client, objectPath(info, arg.name, namespace));
  if (!found) {
    const where = namespace ? `in namespace ${namespace} of the cluster` : 'in the cluster';
    throw new CliError(`${info.kind} ${arg.name} not found ${where} at ${home.client.server.origin}`);
  }
  const obj: KubeObject = { ...found, apiVersion: found.apiVersion || (info.group ? `${info.group}/${info.version}` : info.version), kind: found.kind || info.kind };
  const object: TracedObject = { apiVersion: obj.apiVersion, kind: obj.kind, ...(namespace ? { namespace } : {}), name: arg.name, server: home.client.server.origin };
  const clusters = new ManagingClusters(home, flags);
  try {
    return { object, ...(await follow(home, obj, clusters)) };
  } finally {
    clusters.close();
  }
}

async function follow(home: Cluster, start: KubeObject, clusters: ManagingClusters): Promise<Pick<Trace, 'appliedBy' | 'unresolved'>> {
  const appliedBy: Trace['appliedBy'] = [];
  let place = home;
  let obj = start;
  for (let depth = 0; depth < MAX_CHAIN; depth++) {
    const owner = ownerOf(obj);
    if (!owner) break;
    if (owner.origin !== undefined) {
      const managing = await clusters.find(owner.origin, describe(obj));
      if (!managing.ok) return { appliedBy: [...appliedBy, unfoundLink(owner)], unresolved: managing.unresolved };
      place = managing.cluster;
    }
    const sync = await clusters.guard(place, () => readSync(place, owner.kind, owner.namespace, owner.name));
    const server = place.client.server.origin;
    if (!sync) {
      const unresolved = `${describe(obj)} names ${owner.kind} ${owner.namespace}/${owner.name} as its owner, which does not exist in the cluster at ${server}`;
      return { appliedBy: [...appliedBy, unfoundLink(owner, server)], unresolved };
    }
    appliedBy.push(linkOf(sync, server, obj, owner.origin));
    obj = sync;
  }
  if (appliedBy.length === 0) return { appliedBy, unresolved: `${describe(start)} is not applied by any sync: it carries no syncprims.dev/owner-* labels` };
  return { appliedBy };
}

async function readSync(place: Cluster, kind: Kind, namespace: string, name: string): Promise<KubeObject | undefined> {
  const obj = await getIfExists<KubeObject>(place.client, syncObjectPath(kind, namespace, name));
  return obj && withKind(obj, kind);
}

/** `ConfigMap ns/name` (`Namespace name` for a cluster-scoped object). */
function describe(obj: KubeObject): string {
  const ns = obj.metadata.namespace;
  return `${obj.kind} ${ns ? `${ns}/` : ''}${obj.metadata.name ?? ''}`;
}
