// What `syncprims doctor` finds in the syncs themselves (pure: the objects
// read, the dependency graph, the time): finalizers that wait too long,
// clusters out of reach, CRDs missing, cycles, dependencies that do not exist
// or are refused. Each finding says what to do.
import { Reason } from '../../api/conditions.js';
import { KIND_NAMES, type SyncKind } from '../../api/kinds.js';
import { FINALIZER } from '../../api/marks.js';
import { displayNode, parseNodeKey, type SyncNode } from '../../deps/refs.js';
import type { KubeObject } from '../../kube/resources.js';
import { findCondition, type Condition } from '../../runtime/conditions.js';
import { humanAge } from '../format.js';
import { canonicalCycle } from '../../views/graph-model.js';
import type { NodeLookup } from '../../views/graph-read.js';
import type { SyncEdge } from '../../views/sync-set.js';
import { fleetNameOf } from '../../views/fleet-members.js';
import { FLEET_CLUSTER_LABEL } from '../../fleet/children.js';

export const PROBLEMS = [
  'OperatorNotRunning',
  'ReplicaNotRenewing',
  'ShardUnheld',
  'StuckFinalizer',
  'ClusterUnreachable',
  'FleetSyncNotReady',
  'OverrideFailed',
  'SubstitutionFailed',
  'CRDNotInstalled',
  'DependencyCycle',
  'MissingDependency',
  'DependencyForbidden',
  'CannotCheck',
] as const;
export type Problem = (typeof PROBLEMS)[number];

/** `error`: something is stuck (exit 1); `warning`: something could not be checked. */
export type Severity = 'error' | 'warning';

export interface Finding {
  problem: Problem;
  severity: Severity;
  /** The namespace it is in ('' for none). */
  namespace: string;
  /** `Kind/name` of the sync, `Secret/name` or `Cluster/name` of a cluster, `Namespace/name`, `Lease/name`, `-` for none. */
  object: string;
  message: string;
  /** What to do about it. */
  action: string;
  /** Since when (RFC 3339), where known. */
  since?: string;
}

interface SyncFields {
  spec?: { kubeConfig?: { secretRef?: { name?: string } }; clusterRef?: { name?: string } };
  status?: { conditions?: Condition[]; pendingDependencies?: { kind?: string; name?: string; namespace?: string; reason?: string }[] };
}

const readyOf = (o: KubeObject): Condition | undefined => findCondition((o as SyncFields).status?.conditions, 'Ready');
const kindName = (o: KubeObject): string => `${o.kind}/${o.metadata.name ?? ''}`;

/** Findings in order (by problem, namespace, object), each with its fields in the same order (for YAML and JSON). */
export function sortFindings(findings: Finding[]): Finding[] {
  const rank = (p: Problem): number => PROBLEMS.indexOf(p);
  return [...findings]
    .sort((a, b) => rank(a.problem) - rank(b.problem) || a.namespace.localeCompare(b.namespace) || a.object.localeCompare(b.object) || a.message.localeCompare(b.message))
    .map(({ problem, severity, namespace, object, message, action, since }) => ({ problem, severity, namespace, object, message, action, ...(since === undefined ? {} : { since }) }));
}

/** `kubectl patch` that lets a sync go without cleaning up. */
function releaseCommand(o: KubeObject): string {
  const plural = KIND_NAMES[o.kind as SyncKind]?.plural ?? o.kind.toLowerCase();
  return `kubectl patch ${plural}/${o.metadata.name ?? ''} -n ${o.metadata.namespace ?? ''} --type=merge -p '{"metadata":{"finalizers":null}}'`;
}

/**
 * Syncs being deleted whose finalizer has waited at least `stuckAfterMs`, and
 * why (their Ready condition). `operatorRuns(ns)` says whether an operator
 * watches the namespace (false: that is why; undefined: not known).
 */
export function stuckFinalizers(objects: readonly KubeObject[], opts: { now: number; stuckAfterMs: number; operatorRuns(namespace: string): boolean | undefined }): Finding[] {
  const found: Finding[] = [];
  for (const o of objects) {
    const deleted = Date.parse(o.metadata.deletionTimestamp ?? '');
    if (Number.isNaN(deleted) || !(o.metadata.finalizers ?? []).includes(FINALIZER)) continue;
    if (opts.now - deleted < opts.stuckAfterMs) continue;
    const ready = readyOf(o);
    const why = ready ? `${ready.reason}: ${ready.message}` : 'it has no Ready condition';
    const namespace = o.metadata.namespace ?? '';
    let action: string;
    if (opts.operatorRuns(namespace) === false) action = 'start the operator: only it removes the finalizer (after cleaning up)';
    else if (ready?.reason === Reason.ClusterUnreachable) action = `bring its cluster back (it then cleans up there and goes), or let it go without cleaning up: ${releaseCommand(o)}`;
    else action = `fix what its Ready condition says, or let it go without cleaning up: ${releaseCommand(o)}`;
    found.push({
      problem: 'StuckFinalizer',
      severity: 'error',
      namespace,
      object: kindName(o),
      message: `deleted ${humanAge(opts.now - deleted)} ago, still held by its finalizer ${FINALIZER}: ${why}`,
      action,
      since: o.metadata.deletionTimestamp,
    });
  }
  return found;
}

/** The cluster a RemoteSync or ProxySync names: `Secret/<name>` or `Cluster/<name>`; undefined for a Sync. */
export function clusterOf(o: KubeObject): { object: string; secret: string } | undefined {
  const spec = (o as SyncFields).spec;
  const secret = spec?.kubeConfig?.secretRef?.name;
  if (secret) return { object: `Secret/${secret}`, secret };
  const cluster = spec?.clusterRef?.name;
  if (cluster) return { object: `Cluster/${cluster}`, secret: `${cluster}-kubeconfig` };
  return undefined;
}

/** Clusters that syncs find unreachable (Ready=False, ClusterUnreachable): one finding per cluster, since the earliest of them. */
export function unreachableClusters(objects: readonly KubeObject[], now: number): Finding[] {
  const groups = new Map<string, { namespace: string; object: string; secret?: string; syncs: KubeObject[]; since: string; message: string }>();
  for (const o of objects) {
    const ready = readyOf(o);
    // A FleetSync's unreachable clusters are its children's: said once, by them (and on the FleetSync's own finding).
    if (o.kind === 'FleetSync' || ready?.status !== 'False' || ready.reason !== Reason.ClusterUnreachable) continue;
    const namespace = o.metadata.namespace ?? '';
    const cluster = clusterOf(o);
    const object = cluster?.object ?? kindName(o);
    const key = `${namespace}/${object}`;
    const group = groups.get(key);
    if (!group) groups.set(key, { namespace, object, secret: cluster?.secret, syncs: [o], since: ready.lastTransitionTime, message: ready.message });
    else {
      group.syncs.push(o);
      if (ready.lastTransitionTime < group.since) Object.assign(group, { since: ready.lastTransitionTime, message: ready.message });
    }
  }
  return [...groups.values()].map((g) => ({
    problem: 'ClusterUnreachable',
    severity: 'error',
    namespace: g.namespace,
    object: g.object,
    message: `unreachable since ${g.since} (${humanAge(now - Date.parse(g.since))} ago): ${g.message}; used by ${g.syncs.map(kindName).sort().join(', ')}`,
    action: g.secret
      ? `make the API server that Secret ${g.secret} names reachable from the operator, or fix the kubeconfig in it; its syncs recover by themselves`
      : 'make the API server reachable from the operator; the sync recovers by itself',
    since: g.since,
  }));
}

/** Syncs that cannot apply because a CRD is missing (Ready=False, CRDNotInstalled). */
export function missingCrds(objects: readonly KubeObject[]): Finding[] {
  return objects.flatMap((o): Finding[] => {
    const ready = readyOf(o);
    if (ready?.status !== 'False' || ready.reason !== Reason.CRDNotInstalled) return [];
    const where = o.kind === 'Sync' ? 'this cluster' : 'its cluster';
    return [
      {
        problem: 'CRDNotInstalled',
        severity: 'error',
        namespace: o.metadata.namespace ?? '',
        object: kindName(o),
        message: ready.message,
        action:
          o.kind === 'ProxySync'
            ? 'install the syncprims CRDs and an operator in its cluster (README, "Registration")'
            : `install the CRDs of those kinds in ${where}, or add them to the set (CRDs are applied first)`,
        since: ready.lastTransitionTime,
      },
    ];
  });
}

/** One finding per dependency cycle (`cycles`: node keys, the first repeated at the end), in the namespace of its first node. */
export function cycleFindings(cycles: readonly string[][]): Finding[] {
  return cycles.map((cycle) => {
    const nodes = canonicalCycle(cycle).map(parseNodeKey);
    const namespace = nodes[0]?.namespace ?? '';
    const path = nodes.map((n) => displayNode(n, namespace));
    return {
      problem: 'DependencyCycle',
      severity: 'error',
      namespace,
      object: path[0] ?? '-',
      message: `dependency cycle: ${path.join(' -> ')}`,
      action: 'remove one of these dependsOn entries: no sync of a cycle ever becomes Ready',
    };
  });
}

/** Dependencies on syncs that do not exist; a dependency that could not be read is a warning. */
export function missingDependencies(edges: readonly SyncEdge[], lookup: (node: SyncNode) => NodeLookup): Finding[] {
  const found: Finding[] = [];
  for (const e of edges) {
    const target = lookup(e.to);
    if (target.found) continue;
    const from = displayNode(e.from, e.from.namespace);
    const to = displayNode(e.to, e.from.namespace);
    found.push(
      target.missing
        ? {
            problem: 'MissingDependency',
            severity: 'error',
            namespace: e.from.namespace,
            object: from,
            message: `depends on ${to}, which does not exist`,
            action: memberMissingAction(fromObject(lookup(e.from))) ?? `create ${to}, or remove it from the dependsOn of ${from}`,
          }
        : {
            problem: 'CannotCheck',
            severity: 'warning',
            namespace: e.from.namespace,
            object: from,
            message: `its dependency ${to} could not be read: ${target.why ?? 'unknown error'}`,
            action: `ask for get on ${KIND_NAMES[e.to.kind].plural}.syncprims.dev in namespace ${e.to.namespace}`,
          },
    );
  }
  return found;
}

/**
 * What to do about a missing dependency of a FleetSync's child: its
 * dependsOn is its FleetSync's (per cluster), so that is where to look;
 * undefined for any other sync.
 */
function memberMissingAction(from: KubeObject | undefined): string | undefined {
  const fleet = from ? fleetNameOf(from) : undefined;
  if (!from || !fleet) return undefined;
  const cluster = from.metadata.labels?.[FLEET_CLUSTER_LABEL] ?? '?';
  return `it is FleetSync/${fleet}'s child for cluster ${cluster}, which waits for the same cluster's child of each FleetSync it depends on: select cluster ${cluster} in that FleetSync's spec.clusters, or remove the entry from FleetSync/${fleet}'s dependsOn`;
}

const fromObject = (found: NodeLookup): KubeObject | undefined => (found.found ? found.object : undefined);

/** Dependencies in other namespaces that the operator refuses (pendingDependencies reason Forbidden). */
export function forbiddenDependencies(objects: readonly KubeObject[]): Finding[] {
  return objects.flatMap((o) =>
    ((o as SyncFields).status?.pendingDependencies ?? [])
      .filter((d) => d.reason === 'Forbidden')
      .map(
        (d): Finding => ({
          problem: 'DependencyForbidden',
          severity: 'error',
          namespace: o.metadata.namespace ?? '',
          object: kindName(o),
          message: `depends on ${d.kind}/${d.namespace ?? o.metadata.namespace}/${d.name} in another namespace, which the operator refuses`,
          action: 'depend on syncs of its own namespace, or run the operator with --allow-cross-namespace-refs',
        }),
      ),
  );
}
