import type { Scope } from '../../apply/render.js';

/**
 * The scope of the kinds a stock Kubernetes API server serves, for `build`
 * without a cluster: what discovery answers on the local control plane
 * (kube-apiserver v1.36.3, default API groups and versions), group-version by
 * group-version. A kind not here (an older version, a CRD's kind, even
 * syncprims' own) is unknown unless a CustomResourceDefinition in the set
 * defines it or `--kubeconfig` names a cluster to ask, as the operator asks its.
 */
const SERVED: Record<string, { namespaced: string[]; cluster: string[] }> = {
  v1: {
    namespaced: ['Binding', 'ConfigMap', 'Endpoints', 'Event', 'LimitRange', 'PersistentVolumeClaim', 'Pod', 'PodTemplate', 'ReplicationController', 'ResourceQuota', 'Secret', 'Service', 'ServiceAccount'],
    cluster: ['ComponentStatus', 'Namespace', 'Node', 'PersistentVolume'],
  },
  'admissionregistration.k8s.io/v1': {
    namespaced: [],
    cluster: ['MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding', 'MutatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'ValidatingWebhookConfiguration'],
  },
  'apiextensions.k8s.io/v1': { namespaced: [], cluster: ['CustomResourceDefinition'] },
  'apiregistration.k8s.io/v1': { namespaced: [], cluster: ['APIService'] },
  'apps/v1': { namespaced: ['ControllerRevision', 'DaemonSet', 'Deployment', 'ReplicaSet', 'StatefulSet'], cluster: [] },
  'authentication.k8s.io/v1': { namespaced: [], cluster: ['SelfSubjectReview', 'TokenReview'] },
  'authorization.k8s.io/v1': { namespaced: ['LocalSubjectAccessReview'], cluster: ['SelfSubjectAccessReview', 'SelfSubjectRulesReview', 'SubjectAccessReview'] },
  'autoscaling/v1': { namespaced: ['HorizontalPodAutoscaler'], cluster: [] },
  'autoscaling/v2': { namespaced: ['HorizontalPodAutoscaler'], cluster: [] },
  'batch/v1': { namespaced: ['CronJob', 'Job'], cluster: [] },
  'certificates.k8s.io/v1': { namespaced: [], cluster: ['CertificateSigningRequest'] },
  'coordination.k8s.io/v1': { namespaced: ['Lease'], cluster: [] },
  'discovery.k8s.io/v1': { namespaced: ['EndpointSlice'], cluster: [] },
  'events.k8s.io/v1': { namespaced: ['Event'], cluster: [] },
  'flowcontrol.apiserver.k8s.io/v1': { namespaced: [], cluster: ['FlowSchema', 'PriorityLevelConfiguration'] },
  'networking.k8s.io/v1': { namespaced: ['Ingress', 'NetworkPolicy'], cluster: ['IPAddress', 'IngressClass', 'ServiceCIDR'] },
  'node.k8s.io/v1': { namespaced: [], cluster: ['RuntimeClass'] },
  'policy/v1': { namespaced: ['PodDisruptionBudget'], cluster: [] },
  'rbac.authorization.k8s.io/v1': { namespaced: ['Role', 'RoleBinding'], cluster: ['ClusterRole', 'ClusterRoleBinding'] },
  'resource.k8s.io/v1': { namespaced: ['ResourceClaim', 'ResourceClaimTemplate'], cluster: ['DeviceClass', 'ResourceSlice'] },
  'scheduling.k8s.io/v1': { namespaced: [], cluster: ['PriorityClass'] },
  'storage.k8s.io/v1': {
    namespaced: ['CSIStorageCapacity'],
    cluster: ['CSIDriver', 'CSINode', 'StorageClass', 'VolumeAttachment', 'VolumeAttributesClass'],
  },
};

const TABLE: ReadonlyMap<string, Scope> = new Map(
  Object.entries(SERVED).flatMap(([apiVersion, { namespaced, cluster }]) => [
    ...namespaced.map((kind) => [`${apiVersion}|${kind}`, 'Namespaced'] as [string, Scope]),
    ...cluster.map((kind) => [`${apiVersion}|${kind}`, 'Cluster'] as [string, Scope]),
  ]),
);

/** The scope of a built-in kind; undefined for any other. */
export function builtinScope(apiVersion: string, kind: string): Scope | undefined {
  return TABLE.get(`${apiVersion}|${kind}`);
}
