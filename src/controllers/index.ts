import { ADMISSION_API, API_VERSION, APPROVAL_KIND, APPROVER_POLICY, FINALIZER, KIND_NAMES, KINDS, SYNC_KINDS, type Kind, type SyncKind } from '../api/index.js';
import { OwnedObjects } from '../apply/owned-objects.js';
import { DependencyGraph } from '../deps/graph.js';
import { UnknownKindError } from '../kube/discovery.js';
import type { KubeObject, ResourceInfo } from '../kube/resources.js';
import { Controller, type Reconciler } from '../runtime/controller.js';
import type { Informer } from '../runtime/informer.js';
import { PULL_CARRIER_LABEL } from '../clusters/pull-names.js';
import type { ControllerFactory, Manager } from '../runtime/manager.js';
import { ObjectWriter } from '../runtime/object-writer.js';
import { ReferencedObjects } from '../runtime/referenced-objects.js';
import { DependencyStep } from './dependencies.js';
import { RolloutApprovals } from './fleet-approvals.js';
import { FleetRevisions } from './fleet-revisions.js';
import { FleetSyncReconciler, followChildren, gateUnmet } from './fleetsync.js';
import type { FleetParts } from './fleet-targets.js';
import { FLEETSYNC_LABEL } from '../fleet/children.js';
import { DEFAULT_FLEET_QUOTA, type FleetQuota } from '../fleet/quota.js';
import type { RemoteSettings } from './cluster-deletion.js';
import type { LifecycleDeps } from './lifecycle.js';
import { ProxySyncReconciler } from './proxysync.js';
import { wakeOnPullLeases } from './pull-wakes.js';
import { ClusterInventory } from '../clusters/inventory.js';
import { ClusterRegistry } from '../clusters/registry.js';
import type { FleetReachability } from '../clusters/fleet-reachability.js';
import type { KubeconfigPolicy } from '../clusters/kubeconfig.js';
import { clusterUser, prepareCluster } from './cluster-access.js';
import { referencesOf } from './references.js';
import { remoteSyncReconciler } from './remotesync.js';
import { SyncPipeline } from './sync-pipeline.js';
import { repositoryPushes } from './repository-pushes.js';
import type { PushHandler } from '../runtime/webhook-server.js';
import { syncReconciler } from './sync.js';
import { resolveRepositorySource, sourceLimits } from '../source/index.js';
import { shardKeyString } from '../api/shard-marks.js';
import type { WorkSharding } from '../runtime/controller.js';
import { ForeignStatusWatch } from './foreign-status.js';
import { pinInformers, shardKeyOf, ShardKeysInUse } from './shard-keys.js';

export interface ControllerSettings {
  concurrency: number;
  /** Let `dependsOn` name syncs in other namespaces (API.md: off by default). */
  allowCrossNamespaceRefs?: boolean;
  /** `--cluster-id`: the `syncprims.dev/origin` label on objects applied to remote clusters. */
  clusterId: string;
  /** What kubeconfigs from Secrets may do (`--allow-kubeconfig-exec`, `--allow-insecure-kubeconfig-tls`). */
  kubeconfigPolicy?: KubeconfigPolicy;
  /** The User-Agent of requests to remote clusters. */
  userAgent?: string;
  /** `--qps` / `--burst` of each remote cluster (none when unset). */
  remoteRateLimit?: { qps: number; burst: number };
  /** `--lost-cluster-grace`: how long, from its deletion, a RemoteSync or ProxySync whose kubeconfig Secret is gone tries to clean up (default 5 min). */
  lostClusterGraceMs?: number;
  /** `--default-service-account`: syncs that name no service account apply as this one of their namespace. */
  defaultServiceAccount?: string;
  /** `--fleet-max-clusters` / `--fleet-max-size`: the most children and bytes a FleetSync may have (DEFAULT_FLEET_QUOTA when unset). */
  fleetQuota?: FleetQuota;
  /** `--remote-request-timeout`: the deadline of each request to a remote cluster, headers and body (default 15 s). */
  remoteRequestTimeoutMs?: number;
}

const DEFAULT_LOST_CLUSTER_GRACE_MS = 5 * 60_000;

/** What the three controllers share: the owned-object informers, the dependency graph and the referenced objects. */
interface Shared {
  owned: OwnedObjects;
  graph: DependencyGraph;
  references: ReferencedObjects;
  /** Per kind, what to do before a referrer woken by a referenced object's change is queued. */
  onReferenceChange: Map<SyncKind, (key: string) => void>;
  informers: Record<Kind, Informer<KubeObject>>;
  resources: Record<Kind, ResourceInfo>;
  /** The remote clusters of RemoteSyncs and ProxySyncs (one registry: they share clusters). */
  registry?: ClusterRegistry;
  /** Told when a remote cluster stops or starts answering (FleetReachability's listeners). */
  reachabilityChanged: () => void;
  /** `POST /hooks/<token>` (repository-pushes.ts). */
  pushes: PushHandler;
}

/** Queues a reconcile; with `batchMs`, within that long (see Controller.enqueueBatched). */
type Enqueue = (kind: Kind, key: string, cause: string, batchMs?: number) => void;

export type { FleetReachability };

/** The controllers of the four kinds (`sync`, `remotesync`, `proxysync`, `fleetsync`), and what they know of the fleet. */
export function syncControllers(settings: ControllerSettings): ControllerFactory[] & { reachability: FleetReachability; pushes: PushHandler } {
  let shared: Promise<Shared> | undefined;
  let ready: Shared | undefined;
  const controllers = new Map<Kind, Controller>();
  const enqueue: Enqueue = (kind, key, cause, batchMs) =>
    batchMs === undefined ? controllers.get(kind)?.enqueue(key, cause) : controllers.get(kind)?.enqueueBatched(key, batchMs, cause);
  const listeners = new Set<() => void>();
  const factories = KINDS.map((kind) => async (m: Manager) => {
    shared ??= share(m, settings, controllers, enqueue, () => {
      for (const fn of listeners) fn();
    });
    ready = await shared;
    const c = kind === 'FleetSync' ? await fleetController(m, settings, ready, enqueue) : kindController(m, kind, settings, ready, enqueue);
    controllers.set(kind, c);
    return c;
  });
  const reachability: FleetReachability = {
    of: (user) => ready?.registry?.reachabilityOf(user),
    onChange: (fn) => {
      listeners.add(fn);
      return () => void listeners.delete(fn);
    },
  };
  // Before the caches are primed there is no sync to wake: a push then is a 404, and the syncs look when they start.
  const pushes: PushHandler = (token, body) => (ready ? ready.pushes(token, body) : Promise.resolve(0));
  return Object.assign(factories, { reachability, pushes });
}

async function share(
  m: Manager,
  settings: ControllerSettings,
  controllers: Map<Kind, Controller>,
  enqueue: Enqueue,
  reachabilityChanged: () => void,
): Promise<Shared> {
  const resources = {} as Record<Kind, ResourceInfo>;
  const informers = {} as Record<Kind, Informer<KubeObject>>;
  for (const kind of KINDS) {
    resources[kind] = await resolveKind(m, kind);
    // A pull cluster's assignments are Syncs kept here for the cluster that fetches them: never reconciled here.
    informers[kind] = await m.cache.informer(API_VERSION, kind, kind === 'Sync' ? { labelSelector: `!${PULL_CARRIER_LABEL}` } : undefined);
  }
  // Cluster-wide even with --namespace: a sync may apply to any namespace, and must see what other syncs own.
  const owned = new OwnedObjects(m.cache, { ownerNamespace: m.opts.namespace });
  owned.onOwnerChange((o, cause) => enqueue(o.kind as SyncKind, `${o.namespace}/${o.name}`, cause));
  // Only Syncs apply to this cluster (RemoteSyncs apply to theirs).
  owned.followInventories([informers.Sync]);
  const graph = new DependencyGraph({
    informers,
    allowCrossNamespaceRefs: settings.allowCrossNamespaceRefs,
    wake: (kind, key) => {
      m.metrics.dependencyWakes.inc({ controller: KIND_NAMES[kind].singular });
      enqueue(kind, key, 'dependency');
    },
    inFlight: (kind, key) => controllers.get(kind)?.isPending(key) ?? false,
  });
  const onReferenceChange = new Map<SyncKind, (key: string) => void>();
  const references = new ReferencedObjects({
    cache: m.cache,
    logger: m.log,
    referrers: SYNC_KINDS.map((kind) => ({ kind, informer: informers[kind], referencesOf: (obj: KubeObject) => referencesOf(kind, obj) })),
    wake: (referrerKind, key, changed) => {
      const kind = referrerKind as SyncKind;
      m.metrics.referenceWakes.inc({ controller: KIND_NAMES[kind].singular, kind: changed.kind });
      onReferenceChange.get(kind)?.(key);
      const { namespace, name, resourceVersion } = changed.metadata;
      enqueue(kind, key, `${changed.kind} ${namespace}/${name} changed (resourceVersion ${resourceVersion})`);
    },
  });
  // Primed before any reconcile, like the informers of the four kinds.
  await references.start();
  if (m.shards) await shareOut(m, informers, enqueue, () => shared.registry);
  const pushes = repositoryPushes({
    client: m.client,
    informers,
    defaultServiceAccount: settings.defaultServiceAccount,
    wake: (kind, key) => {
      if (kind !== 'FleetSync') onReferenceChange.get(kind)?.(key);
      enqueue(kind, key, 'webhook: its repository was pushed');
    },
  });
  const shared: Shared = { owned, graph, references, onReferenceChange, informers, resources, reachabilityChanged, pushes };
  return shared;
}

/** The syncs' stores indexed by shard key (--shards). */
const SHARD_KEY_INDEX = 'syncprims-shard-key';

/**
 * --shards: the keys in use (and the pins) go to the shards; a key taken queues its syncs (and
 * opens their clusters ahead); a key given up closes what its syncs had open.
 */
async function shareOut(m: Manager, informers: Record<Kind, Informer<KubeObject>>, enqueue: Enqueue, registry: () => ClusterRegistry | undefined): Promise<void> {
  const shards = m.shards!;
  const inUse = new ShardKeysInUse(informers, await pinInformers(m.cache, m.cache.discovery, m.opts.namespace), () => shards.keysChanged());
  shards.useKeys(() => inUse.keys());
  // By key, not a scan of every sync per batch of keys taken (a thousand clusters moving at a start).
  for (const kind of KINDS) {
    const store = informers[kind].store;
    if (!store.hasIndex(SHARD_KEY_INDEX)) store.addIndex(SHARD_KEY_INDEX, (obj) => [shardKeyString(shardKeyOf(kind, obj))]);
  }
  const each = (keys: string[], fn: (kind: Kind, obj: KubeObject) => void): void => {
    for (const key of keys) for (const kind of KINDS) for (const obj of informers[kind].store.byIndex(SHARD_KEY_INDEX, key)) fn(kind, obj);
  };
  shards.onAcquired((keys) =>
    each(keys, (kind, obj) => {
      const r = registry();
      if (r && (kind === 'RemoteSync' || kind === 'ProxySync')) prepareCluster(r, obj);
      enqueue(kind, `${obj.metadata.namespace}/${obj.metadata.name}`, 'its shard key was taken here');
    }),
  );
  shards.onReleased((keys) =>
    each(keys, (kind, obj) => {
      if (kind === 'RemoteSync' || kind === 'ProxySync') void registry()?.release(clusterUser(obj));
    }),
  );
}

/** How a controller of `kind` shares its objects (--shards), or undefined. */
function shardingOf(m: Manager, kind: Kind): WorkSharding | undefined {
  const shards = m.shards;
  if (!shards) return undefined;
  return { keyOf: (obj) => shardKeyString(shardKeyOf(kind, obj)), works: (key) => shards.works(key), within: (key, fn) => shards.within(key, fn) };
}

/**
 * --shards: a status written over ours by another replica is reconciled again here (foreign-status.ts);
 * not a Sync's, which a pull agent may write.
 */
function watchForeignStatus(m: Manager, deps: LifecycleDeps & { kind: Kind }, enqueue: Enqueue): void {
  const { kind, informer, writer } = deps;
  const sharding = kind === 'Sync' ? undefined : shardingOf(m, kind);
  if (!sharding) return;
  new ForeignStatusWatch(informer, (obj) => writer.wroteStatus(obj), (obj) => sharding.works(sharding.keyOf(obj)), (key) => enqueue(kind, key, 'its status was written by another replica'));
}

/** The steps every kind shares (lifecycle.ts), for one kind. */
function lifecycleDeps<K extends Kind>(m: Manager, kind: K, shared: Shared): LifecycleDeps & { kind: K } {
  const { graph } = shared;
  const informer = shared.informers[kind];
  const writer = new ObjectWriter(m.client, shared.resources[kind], (written) => graph.noteWrite(kind, written));
  informer.onEvent((e) => {
    if (e.type === 'deleted') writer.forget(e.object);
  });
  return { kind, informer, writer, events: m.events, graph, dependencies: new DependencyStep({ graph, writer, events: m.events, metrics: m.metrics }) };
}

function kindController(
  m: Manager,
  kind: SyncKind,
  settings: ControllerSettings,
  shared: Shared,
  enqueue: Enqueue,
): Controller {
  const { owned } = shared;
  const deps = lifecycleDeps(m, kind, shared);
  watchForeignStatus(m, deps, enqueue);
  const writer = deps.writer;
  let reconciler: Reconciler;
  const remote = (): RemoteSettings => ({
    registry: (shared.registry ??= clusterRegistry(m, settings, shared, enqueue)),
    origin: settings.clusterId,
    home: m.client,
    homeDiscovery: m.cache.discovery,
    lostClusterGraceMs: settings.lostClusterGraceMs ?? DEFAULT_LOST_CLUSTER_GRACE_MS,
    defaultServiceAccount: settings.defaultServiceAccount,
  });
  if (kind === 'Sync' || kind === 'RemoteSync') {
    const pipeline: SyncPipeline = new SyncPipeline({
      home: m.client,
      homeDiscovery: m.cache.discovery,
      references: shared.references,
      homeOwned: owned,
      writer,
      events: m.events,
      concurrency: settings.concurrency * 2,
      defaultServiceAccount: settings.defaultServiceAccount,
    });
    shared.onReferenceChange.set(kind, (key) => pipeline.markSourceChanged(key));
    reconciler =
      kind === 'Sync'
        ? syncReconciler(deps, pipeline, { id: 'home', client: m.client, discovery: m.cache.discovery, owned })
        : remoteSyncReconciler({ ...deps, kind: 'RemoteSync' }, pipeline, remote());
  } else {
    reconciler = new ProxySyncReconciler({ ...deps, kind: 'ProxySync' }, remote(), shared.references);
  }
  return controllerOf(m, deps, settings, shared, reconciler);
}

function controllerOf(m: Manager, deps: LifecycleDeps, settings: ControllerSettings, shared: Shared, reconciler: Reconciler): Controller {
  const kind = deps.kind;
  return new Controller({
    name: KIND_NAMES[kind].singular,
    kind,
    informer: deps.informer,
    concurrency: settings.concurrency,
    metrics: m.metrics,
    logger: m.log,
    events: m.events,
    reconciler,
    finalizer: FINALIZER,
    afterReconcile: (key) => shared.graph.reconciled(kind, key),
    sharding: shardingOf(m, kind),
  });
}

/**
 * The FleetSync controller: woken by its children's changes and by clusters
 * that join, leave or change labels. The inventory and the revisions are
 * watched from the first FleetSync's reconcile on (primed before it goes on).
 */
async function fleetController(m: Manager, settings: ControllerSettings, shared: Shared, enqueue: Enqueue): Promise<Controller> {
  const deps = lifecycleDeps(m, 'FleetSync', shared);
  watchForeignStatus(m, deps, enqueue);
  let parts: Promise<FleetParts> | undefined;
  const start = async (): Promise<FleetParts> => {
    const inventory = new ClusterInventory({ cache: m.cache, discovery: m.cache.discovery, logger: m.log, namespace: m.opts.namespace });
    await inventory.start();
    m.onShutdown(() => inventory.stop());
    inventory.onChange((namespace) => {
      for (const fleet of deps.informer.store.list()) {
        if (fleet.metadata.namespace === namespace) enqueue('FleetSync', `${namespace}/${fleet.metadata.name}`, 'cluster inventory changed');
      }
    });
    const revisionInformer = await m.cache.informer('apps/v1', 'ControllerRevision', { namespace: m.opts.namespace, labelSelector: FLEETSYNC_LABEL });
    const byName = { allNamespaces: true, fieldSelector: `metadata.name=${APPROVER_POLICY}` };
    const approvals = new RolloutApprovals(
      await m.cache.informer(API_VERSION, APPROVAL_KIND, { namespace: m.opts.namespace }),
      await m.cache.informer(ADMISSION_API, 'ValidatingAdmissionPolicy', byName),
      await m.cache.informer(ADMISSION_API, 'ValidatingAdmissionPolicyBinding', byName),
    );
    approvals.follow((key) => enqueue('FleetSync', key, 'RolloutApproval changed'));
    return { inventory, revisions: new FleetRevisions(m.client, revisionInformer), approvals };
  };
  for (const kind of ['ProxySync', 'RemoteSync'] as const) {
    followChildren(shared.informers[kind], (key, statusOnly) => {
      const cause = `${kind} child changed`;
      // A child's status only changes the counts: a burst of them (a fleet becoming Ready) is counted together.
      enqueue('FleetSync', key, cause, statusOnly ? CHILD_STATUS_BATCH_MS : undefined);
    });
  }
  const reconciler = new FleetSyncReconciler(deps, {
    // Started once; a start that failed (a watch refused) is tried again by the next reconcile.
    parts: () =>
      (parts ??= start().catch((err: unknown) => {
        parts = undefined;
        throw err;
      })),
    gateUnmet: (owner, wave) => gateUnmet(shared.graph, owner, wave, settings.allowCrossNamespaceRefs ?? false),
    quota: settings.fleetQuota ?? DEFAULT_FLEET_QUOTA,
    resolveSource: (namespace, named, source, intervalMs) => {
      // Read as the children would read it: the template's account, else --default-service-account.
      const account = named ?? settings.defaultServiceAccount;
      const client = account ? m.client.asServiceAccount(namespace, account) : m.client;
      return resolveRepositorySource({ client, account: account && `${namespace}/${account}`, namespace, limits: sourceLimits(), resolveMaxAgeMs: intervalMs }, source);
    },
    client: m.client,
    discovery: m.cache.discovery,
    children: {
      ProxySync: { informer: shared.informers.ProxySync, resource: shared.resources.ProxySync },
      RemoteSync: { informer: shared.informers.RemoteSync, resource: shared.resources.RemoteSync },
    },
  });
  return controllerOf(m, deps, settings, shared, reconciler);
}

/**
 * The remote clusters of RemoteSyncs and ProxySyncs. A change of an object
 * owned there (a remote Sync too) wakes its owner; a kind that leaves the
 * inventories of a cluster's syncs stops its watch there.
 */
function clusterRegistry(m: Manager, settings: ControllerSettings, shared: Shared, enqueue: Enqueue): ClusterRegistry {
  const remoteKinds = [shared.informers.RemoteSync, shared.informers.ProxySync];
  /** `user` is `Kind/namespace/name` (clusterUser). */
  const wakeUser = (user: string, cause: string): void => {
    const [kind, ...key] = user.split('/');
    enqueue(kind as SyncKind, key.join('/'), cause);
  };
  const registry = new ClusterRegistry({
    home: m.client,
    references: shared.references,
    policy: settings.kubeconfigPolicy ?? {},
    origin: settings.clusterId,
    ownerNamespace: m.opts.namespace,
    userAgent: settings.userAgent ?? 'syncprims-operator',
    maxReconcilesPerCluster: Math.max(1, Math.floor(settings.concurrency / 2)),
    workers: settings.concurrency,
    requestTimeoutMs: settings.remoteRequestTimeoutMs,
    onShareFreed: (kind, key) => enqueue(kind as SyncKind, key, 'a share of the workers freed'),
    rateLimit: settings.remoteRateLimit,
    ...(m.shards && { remoteWriteFence: () => m.shards!.mayWriteRemote() }),
    logger: m.log,
    metrics: m.metrics,
    onOpen: (cluster) => {
      cluster.owned.countInventories(remoteKinds, (o) => cluster.users.has(clusterUser(o)));
      cluster.owned.onOwnerChange((o, cause) => {
        if (o.kind === 'RemoteSync' || o.kind === 'ProxySync') enqueue(o.kind, `${o.namespace}/${o.name}`, `${cause} in ${cluster.name}`);
      });
      // Outage and recovery by watch: the moment the cluster stops answering, its syncs say so (a resync
      // that has nothing to send would not find out); the moment it answers again, they go on.
      cluster.onReachabilityChange((up) => {
        for (const user of cluster.users) wakeUser(user, `cluster ${cluster.name} ${up ? 'reachable again' : 'unreachable'}`);
      });
      // A pull cluster's ProxySyncs, the moment its operator is back (its Lease renewed after it lapsed).
      if (cluster.home) wakeOnPullLeases(cluster, (user) => registry.lastPullOf(user), wakeUser, m.log);
    },
  });
  registry.onReachabilityChange(shared.reachabilityChanged);
  // Each RemoteSync's and ProxySync's inventory change goes to its own cluster only; a new one's cluster is opened while it waits in the queue.
  for (const informer of remoteKinds) {
    informer.onEvent((e) => {
      if (e.type === 'added' && (!m.shards || m.shards.works(shardKeyString(shardKeyOf(e.object.kind as Kind, e.object))))) prepareCluster(registry, e.object);
      registry.lastClusterOf(clusterUser(e.object))?.owned.inventoryChanged(e);
    });
  }
  m.onShutdown(() => registry.close());
  return registry;
}

/** A FleetSync counts its children's status at most this often (a single change is seen at once). */
const CHILD_STATUS_BATCH_MS = 1_000;

/** How often a missing CRD of ours is looked for again. */
const CRD_POLL_MS = 2_000;

/**
 * The resource of one of our kinds. While its CRD is missing (a cluster being
 * registered: the RemoteSync that installs the CRDs runs while this operator
 * is already started), it waits, not ready, and says what it waits for.
 */
async function resolveKind(m: Manager, kind: Kind): Promise<ResourceInfo> {
  for (let said = false; ; said = true) {
    try {
      const resource = await m.cache.discovery.resolve(API_VERSION, kind);
      if (said) m.log.info({ kind }, 'CRD installed: starting');
      return resource;
    } catch (err) {
      if (!(err instanceof UnknownKindError)) throw err;
      if (!said) {
        const crd = `${KIND_NAMES[kind].plural}.${API_VERSION.split('/')[0]}`;
        m.log.warn({ kind, crd }, `waiting for the ${crd} CRD to be installed in ${m.client.name} (kubectl apply --server-side -f crds/); not ready until then`);
      }
    }
    if (!(await m.sleep(CRD_POLL_MS))) throw new Error('shut down while waiting for the CRDs');
  }
}
