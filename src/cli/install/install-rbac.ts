// The RBAC objects of the install: what the operator's own account may do,
// in the default mode (it applies whatever syncs that name no account hold,
// as itself) and in the multi-tenant mode (it applies nothing as itself).
// docs/rbac.md says why each rule is there.
import { GROUP } from '../../api/kinds.js';
import type { KubeObject } from '../../kube/resources.js';

export const OPERATOR_NAME = 'syncprims-operator';
/** The role the operator applies with when a sync names no service account (default mode); see docs/rbac.md. */
export const APPLY_ROLE = 'syncprims-apply';
/** The role the operator follows applied objects with (multi-tenant mode): every kind, read only. */
export const READ_ROLE = 'syncprims-read';
export const OPERATOR_LABELS = { 'app.kubernetes.io/name': 'syncprims', 'app.kubernetes.io/component': 'operator' };

const RBAC_API = 'rbac.authorization.k8s.io';
const READ = ['get', 'list', 'watch'];

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

/** A service account a binding names. */
export interface AccountRef {
  name: string;
  namespace: string;
}

type Labels = Record<string, string>;

/** A ClusterRole, or a Role when `namespace` is given. */
export function roleObject(name: string, rules: PolicyRule[], labels: Labels, namespace?: string): KubeObject {
  const kind = namespace === undefined ? 'ClusterRole' : 'Role';
  return { apiVersion: `${RBAC_API}/v1`, kind, metadata: { name, ...(namespace === undefined ? {} : { namespace }), labels: { ...labels } }, rules };
}

/** A ClusterRoleBinding of a ClusterRole, or a RoleBinding of a Role when `namespace` is given, to one account. */
export function bindingObject(name: string, role: string, account: AccountRef, labels: Labels, namespace?: string): KubeObject {
  const cluster = namespace === undefined;
  return {
    apiVersion: `${RBAC_API}/v1`,
    kind: cluster ? 'ClusterRoleBinding' : 'RoleBinding',
    metadata: { name, ...(cluster ? {} : { namespace }), labels: { ...labels } },
    roleRef: { apiGroup: RBAC_API, kind: cluster ? 'ClusterRole' : 'Role', name: role },
    subjects: [{ kind: 'ServiceAccount', name: account.name, namespace: account.namespace }],
  };
}

/**
 * The operator's roles and bindings. Both modes: its own ClusterRole and the
 * Lease Role. Default mode: `syncprims-apply` (everything), which syncs
 * that name no account apply with. Multi-tenant mode: `syncprims-read`
 * instead (get, list and watch of every kind, with which it follows what
 * syncs applied): every write of a sync is made as the sync's account.
 */
export function operatorRbac(namespace: string, multiTenant: boolean): KubeObject[] {
  const account = { name: OPERATOR_NAME, namespace };
  const second = multiTenant ? roleObject(READ_ROLE, readRules(), OPERATOR_LABELS) : roleObject(APPLY_ROLE, applyRules(), OPERATOR_LABELS);
  const secondName = second.metadata.name!;
  return [
    roleObject(OPERATOR_NAME, operatorRules(), OPERATOR_LABELS),
    second,
    bindingObject(OPERATOR_NAME, OPERATOR_NAME, account, OPERATOR_LABELS),
    bindingObject(secondName, secondName, account, OPERATOR_LABELS),
    roleObject(`${OPERATOR_NAME}-leases`, leaseRules(), OPERATOR_LABELS, namespace),
    bindingObject(`${OPERATOR_NAME}-leases`, `${OPERATOR_NAME}-leases`, account, OPERATOR_LABELS, namespace),
  ];
}

/**
 * What the operator needs for itself, whatever the syncs apply: its own
 * kinds; Secrets and ConfigMaps listed and watched (the referenced-object
 * index watches their metadata, and reads one when it changes); Events;
 * CRDs (discovery waits on them); namespaces (kube-system's uid is the
 * default --cluster-id); service accounts to impersonate (serviceAccountName);
 * the cluster inventory's Cluster API Clusters and ClusterProfiles.
 */
function operatorRules(): PolicyRule[] {
  return [
    { apiGroups: [GROUP], resources: ['syncs', 'fleetsyncs'], verbs: [...READ, 'update', 'patch'] },
    // A FleetSync's children are written and deleted by the operator itself.
    { apiGroups: [GROUP], resources: ['remotesyncs', 'proxysyncs'], verbs: [...READ, 'create', 'update', 'patch', 'delete'] },
    { apiGroups: [GROUP], resources: ['syncs/status', 'remotesyncs/status', 'proxysyncs/status', 'fleetsyncs/status'], verbs: ['get', 'update', 'patch'] },
    {
      apiGroups: [GROUP],
      resources: ['syncs/finalizers', 'remotesyncs/finalizers', 'proxysyncs/finalizers', 'fleetsyncs/finalizers'],
      verbs: ['update'],
    },
    { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: READ },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
    { apiGroups: [''], resources: ['namespaces'], verbs: READ },
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: READ },
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] },
    // The cluster inventory: Cluster API Clusters and SIG-Multicluster ClusterProfiles.
    { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters'], verbs: READ },
    { apiGroups: ['multicluster.x-k8s.io'], resources: ['clusterprofiles'], verbs: READ },
    // Approvals of a FleetSync's waves: read only (who may approve is the tenant's RBAC: create rolloutapprovals).
    { apiGroups: [GROUP], resources: ['rolloutapprovals'], verbs: READ },
    // ... and believes their approvers only while the admission policy that checks them is in force.
    { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingadmissionpolicies', 'validatingadmissionpolicybindings'], verbs: READ },
    // A FleetSync's template revisions.
    { apiGroups: ['apps'], resources: ['controllerrevisions'], verbs: [...READ, 'create', 'patch', 'delete'] },
  ];
}

/**
 * What a sync that names no service account applies with (default mode):
 * everything, since a Sync may apply any kind (as Flux's
 * kustomize-controller is bound to cluster-admin).
 */
function applyRules(): PolicyRule[] {
  return [
    { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
    { nonResourceURLs: ['*'], verbs: ['*'] },
  ];
}

/**
 * Multi-tenant mode: the objects syncs apply, whatever their kind, are
 * followed by the operator's own watches (health, drift, no-op applies), so
 * it reads every kind; it writes none of them.
 */
function readRules(): PolicyRule[] {
  return [{ apiGroups: ['*'], resources: ['*'], verbs: READ }];
}

/**
 * The leader Lease, the liveness Leases and, with `--shards` (`install --replicas N`), the
 * membership Lease of each replica and the Lease of each shard key live in the operator's
 * namespace: sharding lists and watches them, creates, updates and deletes them.
 */
function leaseRules(): PolicyRule[] {
  return [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: [...READ, 'create', 'update', 'patch', 'delete'] }];
}
