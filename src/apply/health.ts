/**
 * Health of applied objects, by the kstatus rules of kubernetes-sigs/cli-utils
 * (`pkg/kstatus/status`: generic checks first, then a rule per kind, else Current), except:
 * - a Job is InProgress until Complete (as Flux's Job reader; kstatus: Current once started),
 *   and a suspended Job is InProgress (kstatus: Current): `wait` means its work is done;
 * - a Pod in phase Failed is Failed (kstatus: Current, "completed"), phase Unknown is Unknown;
 * - a LoadBalancer Service waits for an ingress address or external IPs (as Helm; kstatus only
 *   wants a cluster IP); a PVC in phase Lost is Failed (kstatus: InProgress);
 * - a PodDisruptionBudget must be observed and have currentHealthy >= desiredHealthy
 *   (kstatus: Current once its generation is observed); a Namespace in phase Terminating is
 *   Terminating;
 * - for kinds without a rule, a `Ready` condition decides (as kstatus does too), and Stalled=True
 *   wins over Reconciling=True whatever their order in the list (kstatus: the first one listed);
 * - Sync, RemoteSync and ProxySync follow API.md's rule for a met dependency.
 *
 * Pure: no Kubernetes access. The caller passes what it read.
 */
import type { KStatus } from '../api/conditions.js';
import { GROUP, SYNC_KINDS } from '../api/kinds.js';
import { splitApiVersion, type KubeObject } from '../kube/resources.js';

export { compareHealth, leastReady, summarize, MAX_REASON_LENGTH, type HealthEntry } from './summary.js';

/** kstatus statuses (the same set as `KStatus` of the API). */
export type HealthStatus = KStatus;

export interface Health {
  status: HealthStatus;
  /** Short, one line, naming the object: `Deployment web: 0 of 2 replicas available`. */
  message: string;
}

/** The message of `computeHealth(undefined)`. */
const NOT_FOUND_MESSAGE = 'not found';

/** Condition messages written by other controllers can be long; ours stay one short line. */
export const MAX_HEALTH_MESSAGE = 512;

/** How long a pod may stay unschedulable before it is Failed (kstatus `ScheduleWindow`). */
const SCHEDULE_WINDOW_MS = 15_000;

/** A verdict of one rule: the message without the `<Kind> <name>: ` prefix. */
type Verdict = Health;
type Rule = (obj: KubeObject, now: number) => Verdict | undefined;

/**
 * The health of one object as read from the cluster (`undefined`: it does not exist).
 * `now` (ms since the epoch) only matters for a Pod that cannot be scheduled.
 */
export function computeHealth(obj: KubeObject | undefined, now: number = Date.now()): Health {
  if (obj === undefined) return { status: 'NotFound', message: NOT_FOUND_MESSAGE };
  const verdict = evaluate(obj, now);
  const name = typeof obj.metadata?.name === 'string' ? obj.metadata.name : '(unnamed)';
  return { status: verdict.status, message: clip(`${obj.kind} ${name}: ${verdict.message}`) };
}

function evaluate(obj: KubeObject, now: number): Verdict {
  if (obj.metadata?.deletionTimestamp) return { status: 'Terminating', message: 'being deleted' };
  const key = kindKey(obj);
  if (OWN_KINDS.has(key)) return generationLag(obj) ?? stalled(obj) ?? ownKindHealth(obj);
  const rule = KIND_RULES[key];
  return (
    generationLag(obj) ??
    stalled(obj) ??
    reconciling(obj) ??
    rule?.(obj, now) ??
    readyCondition(obj) ?? { status: 'Current', message: 'current' }
  );
}

/** `group/Kind`, or `Kind` for the core group (as kstatus keys its rules). */
export function kindKey(obj: Pick<KubeObject, 'apiVersion' | 'kind'>): string {
  const { group } = splitApiVersion(obj.apiVersion ?? '');
  return group === '' ? obj.kind : `${group}/${obj.kind}`;
}

// ---------------------------------------------------------------- reading unstructured objects

function at(obj: unknown, path: string): unknown {
  let value: unknown = obj;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function int(obj: unknown, path: string, fallback: number): number {
  const value = at(obj, path);
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

function optionalInt(obj: unknown, path: string): number | undefined {
  const value = at(obj, path);
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function str(obj: unknown, path: string, fallback = ''): string {
  const value = at(obj, path);
  return typeof value === 'string' ? value : fallback;
}

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

function conditions(obj: unknown): Condition[] {
  const list = at(obj, 'status.conditions');
  if (!Array.isArray(list)) return [];
  return list
    .filter((c): c is Record<string, unknown> => c !== null && typeof c === 'object')
    .map((c) => ({ type: text(c.type), status: text(c.status), reason: text(c.reason), message: text(c.message) }));
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function condition(obj: unknown, type: string): Condition | undefined {
  return conditions(obj).find((c) => c.type === type);
}

function isTrue(obj: unknown, type: string): boolean {
  return condition(obj, type)?.status === 'True';
}

/** One line, at most MAX_HEALTH_MESSAGE characters. */
function clip(message: string): string {
  const line = message.replace(/\s+/g, ' ').trim();
  return line.length <= MAX_HEALTH_MESSAGE ? line : `${line.slice(0, MAX_HEALTH_MESSAGE - 1)}…`;
}

/** What a condition says: its message, else its reason, else the fallback. */
function explain(c: Condition, fallback: string): string {
  return c.message || c.reason || fallback;
}

const current = (message: string): Verdict => ({ status: 'Current', message });
const inProgress = (message: string): Verdict => ({ status: 'InProgress', message });
const failed = (message: string): Verdict => ({ status: 'Failed', message });

const of = (have: number, want: number, what: string): string => `${have} of ${want} ${what}`;
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

// ---------------------------------------------------------------- generic conventions

/** The controller has not seen the latest spec (only when it reports observedGeneration). */
function generationLag(obj: KubeObject): Verdict | undefined {
  const generation = obj.metadata?.generation;
  const observed = optionalInt(obj, 'status.observedGeneration');
  if (typeof generation !== 'number' || observed === undefined || observed === generation) return undefined;
  return inProgress(`generation ${generation} not observed yet (observed ${observed})`);
}

function stalled(obj: KubeObject): Verdict | undefined {
  const c = condition(obj, 'Stalled');
  return c?.status === 'True' ? failed(`stalled: ${explain(c, 'Stalled')}`) : undefined;
}

function reconciling(obj: KubeObject): Verdict | undefined {
  const c = condition(obj, 'Reconciling');
  return c?.status === 'True' ? inProgress(`reconciling: ${explain(c, 'Reconciling')}`) : undefined;
}

/** For kinds without rules of their own: a `Ready` condition, when there is one, decides. */
function readyCondition(obj: KubeObject): Verdict | undefined {
  const c = condition(obj, 'Ready');
  if (c === undefined) return undefined;
  if (c.status === 'True') return current(c.message || 'ready');
  return inProgress(`not ready: ${explain(c, `Ready=${c.status || 'Unknown'}`)}`);
}

/** Kinds that need `status.observedGeneration` before anything else is believed. */
function generationSet(obj: KubeObject): Verdict | undefined {
  if (typeof obj.metadata?.generation !== 'number') return inProgress('metadata.generation not set');
  if (optionalInt(obj, 'status.observedGeneration') === undefined) {
    return inProgress('not observed by its controller yet');
  }
  return undefined;
}

// ---------------------------------------------------------------- our own kinds

const OWN_KINDS: ReadonlySet<string> = new Set(SYNC_KINDS.map((kind) => `${GROUP}/${kind}`));

/** Sync, RemoteSync, ProxySync: the rules of API.md for a met dependency with `requiredStatus: Current`. */
function ownKindHealth(obj: KubeObject): Verdict {
  if (optionalInt(obj, 'status.observedGeneration') !== obj.metadata?.generation) {
    return inProgress('not reconciled yet');
  }
  const attempted = str(obj, 'status.lastAttemptedRevision');
  if (attempted !== str(obj, 'status.lastAppliedRevision')) return inProgress(`applying revision ${attempted}`);
  const ready = condition(obj, 'Ready');
  if (ready?.status === 'True') return current(ready.message || 'ready');
  return inProgress(ready ? explain(ready, `Ready=${ready.status}`) : 'no Ready condition yet');
}

// ---------------------------------------------------------------- apps

/** Deployment: replica counts first, then the Progressing and Available conditions. */
function deploymentHealth(obj: KubeObject): Verdict {
  const progressingCondition = condition(obj, 'Progressing');
  if (progressingCondition?.reason === 'ProgressDeadlineExceeded') {
    return failed(`progress deadline exceeded: ${explain(progressingCondition, 'ProgressDeadlineExceeded')}`);
  }
  const counts = deploymentCounts(obj);
  if (counts) return counts;
  // Without spec.progressDeadlineSeconds the controller never writes Progressing.
  const noDeadline = optionalInt(obj, 'spec.progressDeadlineSeconds') === undefined;
  const progressing =
    noDeadline || (progressingCondition?.status === 'True' && progressingCondition.reason === 'NewReplicaSetAvailable');
  if (!progressing) return inProgress('new ReplicaSet not available yet');
  if (!isTrue(obj, 'Available')) return inProgress('not Available (minimum replicas unavailable)');
  return current(`${plural(int(obj, 'status.replicas', 0), 'replica')} available`);
}

function deploymentCounts(obj: KubeObject): Verdict | undefined {
  const want = int(obj, 'spec.replicas', 1);
  const replicas = int(obj, 'status.replicas', 0);
  const updated = int(obj, 'status.updatedReplicas', 0);
  const available = int(obj, 'status.availableReplicas', 0);
  const ready = int(obj, 'status.readyReplicas', 0);
  if (replicas < want) return inProgress(of(replicas, want, 'replicas created'));
  if (updated < want) return inProgress(of(updated, want, 'replicas updated'));
  if (replicas > want) return inProgress(`${plural(replicas - want, 'old replica')} pending termination`);
  if (available < updated) return inProgress(of(available, updated, 'replicas available'));
  if (ready < want) return inProgress(of(ready, want, 'replicas ready'));
  return undefined;
}

/** StatefulSet: its controller writes no conditions; counts and revisions only. */
function statefulSetHealth(obj: KubeObject): Verdict {
  if (str(obj, 'spec.updateStrategy.type') === 'OnDelete') return current('OnDelete update strategy (user managed)');
  const want = int(obj, 'spec.replicas', 1);
  const replicas = int(obj, 'status.replicas', 0);
  const ready = int(obj, 'status.readyReplicas', 0);
  if (replicas < want) return inProgress(of(replicas, want, 'replicas created'));
  if (ready < want) return inProgress(of(ready, want, 'replicas ready'));
  if (replicas > want) return inProgress(`${plural(replicas - want, 'replica')} pending termination`);
  const partition = optionalInt(obj, 'spec.updateStrategy.rollingUpdate.partition');
  return partition === undefined ? statefulSetRollout(obj, want) : statefulSetPartition(obj, want, partition);
}

function statefulSetPartition(obj: KubeObject, want: number, partition: number): Verdict {
  const updated = int(obj, 'status.updatedReplicas', 0);
  const target = want - partition;
  if (updated < target) return inProgress(`${of(updated, target, 'replicas updated')} (partition ${partition})`);
  return current(`partitioned rollout complete: ${plural(updated, 'replica')} updated`);
}

function statefulSetRollout(obj: KubeObject, want: number): Verdict {
  const currentReplicas = int(obj, 'status.currentReplicas', 0);
  if (currentReplicas < want) return inProgress(of(currentReplicas, want, 'replicas at the current revision'));
  const currentRevision = str(obj, 'status.currentRevision');
  const updateRevision = str(obj, 'status.updateRevision');
  if (currentRevision !== updateRevision) {
    return inProgress(`rolling out revision ${updateRevision || '(none)'} (current ${currentRevision || '(none)'})`);
  }
  return current(`${plural(want, 'replica')} ready`);
}

/** DaemonSet: one pod per eligible node. */
function daemonSetHealth(obj: KubeObject): Verdict {
  const notObserved = generationSet(obj);
  if (notObserved) return notObserved;
  const desired = optionalInt(obj, 'status.desiredNumberScheduled');
  if (desired === undefined) return inProgress('status.desiredNumberScheduled not set yet');
  const steps: [string, string][] = [
    ['status.currentNumberScheduled', 'pods scheduled'],
    ['status.updatedNumberScheduled', 'pods updated'],
    ['status.numberAvailable', 'pods available'],
    ['status.numberReady', 'pods ready'],
  ];
  for (const [path, what] of steps) {
    const have = int(obj, path, 0);
    if (have < desired) return inProgress(of(have, desired, what));
  }
  return current(`${plural(desired, 'pod')} ready`);
}

/** ReplicaSet: ReplicaFailure (quota, admission) is a wait in kstatus, not a failure. */
function replicaSetHealth(obj: KubeObject): Verdict {
  const failure = condition(obj, 'ReplicaFailure');
  if (failure?.status === 'True') return inProgress(`replica failure: ${explain(failure, 'ReplicaFailure')}`);
  const want = int(obj, 'spec.replicas', 1);
  const steps: [string, string][] = [
    ['status.fullyLabeledReplicas', 'replicas labelled'],
    ['status.availableReplicas', 'replicas available'],
    ['status.readyReplicas', 'replicas ready'],
  ];
  for (const [path, what] of steps) {
    const have = int(obj, path, 0);
    if (have < want) return inProgress(of(have, want, what));
  }
  const replicas = int(obj, 'status.replicas', 0);
  if (replicas > want) return inProgress(`${plural(replicas - want, 'replica')} pending termination`);
  return current(`${plural(want, 'replica')} available`);
}

// ---------------------------------------------------------------- batch

/** Job: Current once Complete (as Flux's reader; kstatus says Current once started). */
function jobHealth(obj: KubeObject): Verdict {
  const parallelism = int(obj, 'spec.parallelism', 1);
  const completions = int(obj, 'spec.completions', parallelism);
  const succeeded = int(obj, 'status.succeeded', 0);
  const failedPods = int(obj, 'status.failed', 0);
  if (isTrue(obj, 'Complete')) return current(`complete: ${of(succeeded, completions, 'succeeded')}`);
  const failure = condition(obj, 'Failed');
  if (failure?.status === 'True') {
    return failed(`failed: ${explain(failure, 'Failed')} (${failedPods} pods failed)`);
  }
  if (isTrue(obj, 'Suspended')) return inProgress('suspended');
  if (!str(obj, 'status.startTime')) return inProgress('not started');
  const active = int(obj, 'status.active', 0);
  return inProgress(`running: ${of(succeeded, completions, 'succeeded')}, ${active} active, ${failedPods} failed`);
}

// ---------------------------------------------------------------- core

function podHealth(obj: KubeObject, now: number): Verdict {
  const phase = str(obj, 'status.phase');
  switch (phase) {
    case 'Succeeded':
      return current('succeeded');
    case 'Failed':
      return failed(`failed: ${str(obj, 'status.message') || str(obj, 'status.reason') || failedContainer(obj)}`);
    case 'Running':
      return runningPodHealth(obj);
    case 'Pending':
      return pendingPodHealth(obj, now);
    case '':
      return inProgress('no phase yet');
    default:
      return { status: 'Unknown', message: `phase ${phase}` };
  }
}

function runningPodHealth(obj: KubeObject): Verdict {
  if (isTrue(obj, 'Ready')) return current('ready');
  const crashing = crashLoopingContainers(obj);
  if (crashing.length > 0) return failed(`CrashLoopBackOff: ${crashing.join(', ')}`);
  return inProgress('running, not ready');
}

function crashLoopingContainers(obj: KubeObject): string[] {
  const statuses = at(obj, 'status.containerStatuses');
  if (!Array.isArray(statuses)) return [];
  return statuses
    .filter((s) => str(s, 'state.waiting.reason') === 'CrashLoopBackOff')
    .map((s) => str(s, 'name', '(unnamed)'));
}

/** `container app exited with code 1 (Error)`: the first container that ended badly. */
function failedContainer(obj: KubeObject): string {
  const statuses = [at(obj, 'status.initContainerStatuses'), at(obj, 'status.containerStatuses')].flatMap((list) =>
    Array.isArray(list) ? list : [],
  );
  const bad = statuses.find((s) => int(s, 'state.terminated.exitCode', 0) !== 0);
  if (bad === undefined) return 'a container failed';
  const reason = str(bad, 'state.terminated.reason');
  const code = int(bad, 'state.terminated.exitCode', 0);
  return `container ${str(bad, 'name', '(unnamed)')} exited with code ${code}${reason ? ` (${reason})` : ''}`;
}

function pendingPodHealth(obj: KubeObject, now: number): Verdict {
  const scheduled = condition(obj, 'PodScheduled');
  if (scheduled?.status !== 'False' || scheduled.reason !== 'Unschedulable') return inProgress('pending');
  // No creationTimestamp: as kstatus, which counts from the zero time, long past the window.
  const created = Date.parse(str(obj, 'metadata.creationTimestamp'));
  if (!Number.isNaN(created) && now - created < SCHEDULE_WINDOW_MS) return inProgress('not scheduled yet');
  return failed(`unschedulable: ${explain(scheduled, 'Unschedulable')}`);
}

function pvcHealth(obj: KubeObject): Verdict {
  const phase = str(obj, 'status.phase');
  if (phase === 'Bound') return current('bound');
  // Lost: the bound volume is gone; only a person can fix that (kstatus: InProgress).
  if (phase === 'Lost') return failed('lost its volume');
  return inProgress(`not bound (phase ${phase || 'unknown'})`);
}

/** Service: a LoadBalancer waits for its address, unless it has external IPs (as Helm). */
function serviceHealth(obj: KubeObject): Verdict {
  if (str(obj, 'spec.type', 'ClusterIP') !== 'LoadBalancer') return current('ready');
  if (!str(obj, 'spec.clusterIP')) return inProgress('no cluster IP yet');
  const externalIPs = at(obj, 'spec.externalIPs');
  if (Array.isArray(externalIPs) && externalIPs.length > 0) return current(`external IPs ${externalIPs.join(', ')}`);
  const ingress = at(obj, 'status.loadBalancer.ingress');
  const addresses = (Array.isArray(ingress) ? ingress : [])
    .map((entry) => str(entry, 'ip') || str(entry, 'hostname'))
    .filter(Boolean);
  if (addresses.length === 0) return inProgress('waiting for a load balancer address');
  return current(`load balancer ${addresses.join(', ')}`);
}

function namespaceHealth(obj: KubeObject): Verdict {
  const phase = str(obj, 'status.phase');
  if (phase === 'Terminating') return { status: 'Terminating', message: 'terminating' };
  if (phase === 'Active' || phase === '') return current('active');
  return { status: 'Unknown', message: `phase ${phase}` };
}

/** PodDisruptionBudget: observed, and enough healthy pods (kstatus: Current once observed). */
function pdbHealth(obj: KubeObject): Verdict {
  const notObserved = generationSet(obj);
  if (notObserved) return notObserved;
  const allowed = condition(obj, 'DisruptionAllowed');
  if (allowed?.status === 'False' && allowed.reason === 'SyncFailed') {
    return inProgress(`sync failed: ${explain(allowed, 'SyncFailed')}`);
  }
  const healthy = int(obj, 'status.currentHealthy', 0);
  const desired = int(obj, 'status.desiredHealthy', 0);
  if (healthy < desired) return inProgress(of(healthy, desired, 'healthy pods'));
  const disruptions = int(obj, 'status.disruptionsAllowed', 0);
  return current(`${plural(healthy, 'healthy pod')}, ${plural(disruptions, 'disruption')} allowed`);
}

function crdHealth(obj: KubeObject): Verdict {
  for (const c of conditions(obj)) {
    if (c.type === 'NamesAccepted' && c.status === 'False') {
      return failed(`names not accepted: ${explain(c, 'NamesAccepted=False')}`);
    }
    if (c.type === 'Established' && c.status === 'False' && c.reason !== 'Installing') {
      return failed(`not established: ${explain(c, 'Established=False')}`);
    }
    if (c.type === 'Established' && c.status === 'True') return current('established');
  }
  return inProgress('installing');
}

/** Kind-specific rules, keyed like kstatus (`group/Kind`, core kinds bare). */
const KIND_RULES: Readonly<Record<string, Rule>> = {
  'apps/Deployment': deploymentHealth,
  'extensions/Deployment': deploymentHealth,
  'apps/StatefulSet': statefulSetHealth,
  'apps/DaemonSet': daemonSetHealth,
  'extensions/DaemonSet': daemonSetHealth,
  'apps/ReplicaSet': replicaSetHealth,
  'extensions/ReplicaSet': replicaSetHealth,
  'batch/Job': jobHealth,
  Pod: podHealth,
  PersistentVolumeClaim: pvcHealth,
  Service: serviceHealth,
  Namespace: namespaceHealth,
  'policy/PodDisruptionBudget': pdbHealth,
  'apiextensions.k8s.io/CustomResourceDefinition': crdHealth,
};
