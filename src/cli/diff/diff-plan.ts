import { RECONCILE_REQUESTED_AT_ANNOTATION } from '../../api/marks.js';
import type { ProxySync, RemoteSync, Sync } from '../../api/objects.js';
import type { InventoryEntry } from '../../api/status.js';
import type { SyncSpec } from '../../api/sync-spec.js';
import { parseAnySyncObject } from '../../api/validate.js';
import { inventoryOf, staleEntries } from '../../apply/inventory.js';
import { ownerOf, type Owner } from '../../apply/owner.js';
import { renderSet, scopesOf } from '../../apply/render-set.js';
import { copiesDigest, copyMatches, desiredRemoteSync, proxyMarks, relatedAccount, relatedCopy, relatedPath, relatedRefs, remoteLocation, remoteMark, carriesAll, remoteWriter, tenancyProblem, type RelatedObject } from '../../proxy/remote-sync.js';
import type { KubeClient, Requester } from '../../kube/client.js';
import { getIfExists } from '../../kube/client.js';
import { clusterCapabilities } from '../../kube/capabilities.js';
import { Discovery } from '../../kube/discovery.js';
import { TransportError } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/resources.js';
import { SourceError, type SourceReader } from '../../source/index.js';
import type { DesiredSet, DiffTarget } from './diff-dry-run.js';
import { CliError, findCause } from '../errors.js';

/**
 * What the operator would apply for a sync, and where: for a Sync or
 * RemoteSync, its set as the operator renders it (apply/render-set.ts: the
 * source read in the sync's cluster, rendered with the target's scopes) and
 * the stale inventory entries pruned (sync-pipeline.ts `applyAndPrune`); for a ProxySync, the
 * remote Sync and the copies of its related objects as proxysync.ts keeps
 * them (built by proxy/remote-sync.ts).
 */

/** Where a diff runs: the target cluster of the sync. */
export interface Where {
  /** The managing cluster: the sync and its source objects live there. */
  home: KubeClient;
  /** The cluster the sync applies to (the same as `home` for a Sync). */
  target: KubeClient;
  /** `syncprims.dev/origin` of objects in a remote cluster (RemoteSync, ProxySync). */
  origin?: string;
  /** The operator's `--default-service-account`: what syncs that name none apply as. */
  defaultServiceAccount?: string;
}

export interface Plan {
  set: DesiredSet;
  target: DiffTarget;
  /** Notes for stderr (a suspended sync, ...). */
  notes: string[];
}

/** `Sync ns/name`, for messages. */
export function labelOf(obj: KubeObject): string {
  return `${obj.kind} ${obj.metadata.namespace}/${obj.metadata.name}`;
}

/** Validates a sync object (from the cluster or a file) as the operator does; an invalid one is a CliError. */
export function parsed(obj: KubeObject): Sync | RemoteSync | ProxySync {
  const result = parseAnySyncObject(obj);
  if (!result.ok) throw new CliError(`${labelOf(obj)}: ${result.message} (the operator reports InvalidSpec)`);
  return result.value;
}

export async function planOf(obj: KubeObject, where: Where): Promise<Plan> {
  const value = parsed(obj);
  const inventory = ((obj.status as { inventory?: { entries?: InventoryEntry[] } } | undefined)?.inventory?.entries ?? []);
  const notes = value.spec.suspend ? [`${labelOf(obj)} is suspended: the operator applies nothing until it is resumed`] : [];
  if (value.kind === 'ProxySync') return { ...(await proxyPlan(obj, value, inventory, where)), notes };
  const spec = value.spec as SyncSpec;
  // In a remote cluster only what carries our origin is ours, as the operator decides (apply/owner.ts ownedBy).
  const origin = value.kind === 'RemoteSync' ? where.origin : undefined;
  const owner = ownerOf(obj, value.kind, origin);
  const account = spec.serviceAccountName ?? where.defaultServiceAccount;
  const target = targetOf(where.target, owner.namespace, account);
  const objects = await rendered(obj, spec, owner, readerOf(where.home, owner.namespace, account), target);
  const stale = staleEntries(inventory, inventoryOf(objects));
  return { set: { owner, objects, stale, prune: spec.prune, force: spec.force ?? false }, target, notes };
}

/**
 * The cluster's clients; applying as the service account the sync names, else
 * as the operator's default one (sync-pipeline.ts `clientFor`).
 */
function targetOf(client: KubeClient, namespace: string, serviceAccount: string | undefined): DiffTarget {
  const applier: Requester = serviceAccount ? client.asServiceAccount(namespace, serviceAccount) : client;
  return { applier, reader: client, discovery: new Discovery(client) };
}

/** Who reads a sync's source in its cluster: its service account when it acts as one (sync-pipeline.ts `render`). */
function readerOf(home: KubeClient, namespace: string, account: string | undefined): SourceReader {
  return account ? { client: home.asServiceAccount(namespace, account), account: `${namespace}/${account}` } : { client: home };
}

/** The source read in the sync's cluster and rendered for the target: the operator's own step (apply/render-set.ts). */
async function rendered(obj: KubeObject, spec: SyncSpec, owner: Owner, home: SourceReader, target: DiffTarget): Promise<KubeObject[]> {
  const label = labelOf(obj);
  const namespace = obj.metadata.namespace ?? '';
  let set;
  try {
    set = await renderSet({
      reader: home,
      namespace,
      spec,
      owner: owner as Owner & { kind: 'Sync' | 'RemoteSync' },
      origin: owner.origin,
      scopeOf: scopesOf(target.discovery),
      // A chart's .Capabilities are the target's, as the operator gives them (sync-pipeline.ts).
      capabilities: () => clusterCapabilities(target.reader),
    });
  } catch (err) {
    if (findCause(err, TransportError)) throw err;
    if (err instanceof SourceError) throw new CliError(`${label}: ${err.message} (the operator reports SourceError)`, undefined, { cause: err });
    throw err;
  }
  if (set.errors.length > 0) {
    const reason = set.unknownKinds.length > 0 ? 'CRDNotInstalled' : 'SourceError';
    throw new CliError(`${label}: ${set.errors.join('; ')} (the operator reports ${reason})`);
  }
  return set.objects;
}

/** A ProxySync: its remote Sync and the copies beside it, as proxysync.ts `maintain` keeps them. */
async function proxyPlan(obj: KubeObject, value: ProxySync, inventory: InventoryEntry[], where: Where): Promise<Omit<Plan, 'notes'>> {
  const spec = value.spec;
  const origin = where.origin ?? '';
  const problem = tenancyProblem(obj, spec, where.defaultServiceAccount);
  if (problem) throw new CliError(`${labelOf(obj)}: ${problem} (the operator reports InvalidSpec)`);
  const location = remoteLocation(obj, spec);
  const marks = proxyMarks(obj, origin);
  const copies: KubeObject[] = [];
  for (const { kind, name, field, optional } of relatedRefs(spec)) {
    const { client: reader } = readerOf(where.home, obj.metadata.namespace ?? '', relatedAccount(spec, where.defaultServiceAccount));
    const got = await getIfExists<RelatedObject & Record<string, unknown>>(reader, relatedPath(kind, name, obj.metadata.namespace ?? ''));
    if (!got && optional) continue;
    if (!got) throw new CliError(`${labelOf(obj)}: ${kind} ${obj.metadata.namespace}/${name} (${field}) does not exist: the operator waits for it`);
    copies.push(relatedCopy({ kind, name, type: got.type as string | undefined, data: got.data, binaryData: got.binaryData }, location.namespace, marks));
  }
  const mark = remoteMark(copiesDigest(copies), obj.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION]);
  const desired = desiredRemoteSync(obj, spec, origin, mark, where.defaultServiceAccount);
  const objects = [desired, ...copies];
  const owner = ownerOf(obj, 'ProxySync', where.origin);
  const stale = staleEntries(inventory, inventoryOf(objects));
  // The operator applies only what does not already carry what it wants (fields it does not set are not fought over).
  const matches = (live: KubeObject, want: KubeObject) => (want.kind === 'Sync' ? carriesAll(live, want) : copyMatches(live, want));
  // Written as its account when the operator impersonates (proxysync.ts writerOf): then no namespace is made for it.
  const writer = remoteWriter(spec, where.defaultServiceAccount);
  return {
    set: { owner, objects, namespaces: writer ? [] : [location.namespace], stale, prune: true, force: false, adopt: spec.adopt ?? false, matches },
    target: targetOf(where.target, obj.metadata.namespace ?? '', writer),
  };
}
