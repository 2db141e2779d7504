import type { KubeObject } from '../kube/resources.js';
import { compareIds, formatObjectId, objectRef, parseObjectId, type ObjectRef } from './inventory.js';

/**
 * The order in which a set is applied and pruned (after fluxcd/pkg `ssa`:
 * `ApplyAllStaged` and `sort.go`; the facts, our own lists).
 *
 * Stages: the engine applies one stage in full (and waits for its CRDs to be
 * Established) before the next, so the kinds later stages need are served.
 * 1. Cluster definitions: CustomResourceDefinitions, Namespaces and
 *    ClusterRoles. CRs need their CRD served; namespaced objects need their
 *    Namespace; a (Cluster)RoleBinding to a ClusterRole that does not exist yet
 *    is refused by RBAC escalation checks unless the applier may `bind`.
 * 2. Class definitions: every kind whose name ends in `Class` (StorageClass,
 *    PriorityClass, IngressClass, RuntimeClass, GatewayClass, ClusterClass,
 *    VolumeSnapshotClass, ...). Admission refuses a Pod naming a PriorityClass
 *    that does not exist, and webhooks of CRs such as Cluster API's validate
 *    the class they name; a class may itself be a CR of a stage-1 CRD.
 * 3. Everything else.
 * Empty stages are left out.
 *
 * Within a stage: by kind rank (the list below; kinds not in it in the middle,
 * admission configuration last, so that webhooks are registered only once
 * the Services behind them exist and cannot refuse the rest of the set), then
 * kind, group and id. Built-in kinds are matched with their group, so that
 * Knative's `serving.knative.dev` Service is not taken for a core Service.
 */

const FIRST: readonly (readonly [kind: string, group: string])[] = [
  ['Namespace', ''],
  ['CustomResourceDefinition', 'apiextensions.k8s.io'],
  ['ResourceQuota', ''],
  ['LimitRange', ''],
  ['PriorityClass', 'scheduling.k8s.io'],
  ['StorageClass', 'storage.k8s.io'],
  ['RuntimeClass', 'node.k8s.io'],
  ['IngressClass', 'networking.k8s.io'],
  ['PodSecurityPolicy', 'policy'],
  ['NetworkPolicy', 'networking.k8s.io'],
  ['ServiceAccount', ''],
  ['Role', 'rbac.authorization.k8s.io'],
  ['ClusterRole', 'rbac.authorization.k8s.io'],
  ['RoleBinding', 'rbac.authorization.k8s.io'],
  ['ClusterRoleBinding', 'rbac.authorization.k8s.io'],
  ['ConfigMap', ''],
  ['Secret', ''],
  ['PersistentVolume', ''],
  ['PersistentVolumeClaim', ''],
  ['Service', ''],
  ['Endpoints', ''],
  ['EndpointSlice', 'discovery.k8s.io'],
  ['DaemonSet', 'apps'],
  ['Pod', ''],
  ['ReplicationController', ''],
  ['ReplicaSet', 'apps'],
  ['Deployment', 'apps'],
  ['StatefulSet', 'apps'],
  ['Job', 'batch'],
  ['CronJob', 'batch'],
  ['HorizontalPodAutoscaler', 'autoscaling'],
  ['PodDisruptionBudget', 'policy'],
  ['Ingress', 'networking.k8s.io'],
  ['APIService', 'apiregistration.k8s.io'],
];

const LAST: readonly (readonly [kind: string, group: string])[] = [
  ['ValidatingAdmissionPolicy', 'admissionregistration.k8s.io'],
  ['ValidatingAdmissionPolicyBinding', 'admissionregistration.k8s.io'],
  ['MutatingAdmissionPolicy', 'admissionregistration.k8s.io'],
  ['MutatingAdmissionPolicyBinding', 'admissionregistration.k8s.io'],
  ['MutatingWebhookConfiguration', 'admissionregistration.k8s.io'],
  ['ValidatingWebhookConfiguration', 'admissionregistration.k8s.io'],
];

/** Known kinds rank below zero, unknown kinds zero, admission configuration above. */
const RANKS: ReadonlyMap<string, number> = new Map([
  ...FIRST.map(([kind, group], i) => [`${kind}.${group}`, i - FIRST.length] as const),
  ...LAST.map(([kind, group], i) => [`${kind}.${group}`, i + 1] as const),
]);

type KindRef = Pick<ObjectRef, 'group' | 'kind'>;

export function kindRank(ref: KindRef): number {
  return RANKS.get(`${ref.kind}.${ref.group}`) ?? 0;
}

/** CRDs, Namespaces and ClusterRoles: what everything else may need. */
function isClusterDefinition(ref: KindRef): boolean {
  return (
    (ref.kind === 'CustomResourceDefinition' && ref.group === 'apiextensions.k8s.io') ||
    (ref.kind === 'Namespace' && ref.group === '') ||
    (ref.kind === 'ClusterRole' && ref.group === 'rbac.authorization.k8s.io')
  );
}

/** Any kind named `...Class`. */
function isClassDefinition(ref: KindRef): boolean {
  return ref.kind.endsWith('Class');
}

/** 0, 1 or 2: the index of the stage that applies this kind (see the module comment). */
export function stageOf(ref: KindRef): number {
  if (isClusterDefinition(ref)) return 0;
  return isClassDefinition(ref) ? 1 : 2;
}

const STAGE_COUNT = 3;

function compareRefs(a: ObjectRef, b: ObjectRef): number {
  return (
    stageOf(a) - stageOf(b) ||
    kindRank(a) - kindRank(b) ||
    compareIds(a.kind, b.kind) ||
    compareIds(a.group, b.group) ||
    compareIds(formatObjectId(a), formatObjectId(b))
  );
}

/** The objects in apply order, in stages; the input is not changed. */
export function applyStages(objects: readonly KubeObject[]): KubeObject[][] {
  const stages: KubeObject[][] = Array.from({ length: STAGE_COUNT }, () => []);
  const sorted = objects
    .map((obj) => ({ obj, ref: objectRef(obj) }))
    .sort((a, b) => compareRefs(a.ref, b.ref));
  for (const { obj, ref } of sorted) stages[stageOf(ref)]?.push(obj);
  return stages.filter((stage) => stage.length > 0);
}

/** All objects in apply order, as one list. */
export function applyOrder(objects: readonly KubeObject[]): KubeObject[] {
  return applyStages(objects).flat();
}

/**
 * Ids in delete order: the reverse of the apply order, so that webhooks go
 * first and dependents go before the Namespaces, ClusterRoles and CRDs they
 * need. Throws on a string that is not an id.
 */
export function pruneOrder(ids: readonly string[]): string[] {
  return ids
    .map((id) => ({ id, ref: parseObjectId(id) }))
    .sort((a, b) => compareRefs(b.ref, a.ref))
    .map(({ id }) => id);
}
