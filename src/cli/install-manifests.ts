// What `syncprims install` prints or applies, and what config/ holds as a
// kustomize base: the CRDs, the operator's namespace, ServiceAccount, RBAC,
// Deployment and metrics Service. Pure: options in, objects out.
import { GROUP } from '../api/kinds.js';
import { PRUNE_ANNOTATION, PRUNE_DISABLED } from '../api/marks.js';
import { customResourceDefinitions } from '../api/crds.js';
import type { KubeObject } from '../kube/resources.js';
import { packageVersion } from '../version.js';

export interface InstallOptions {
  /** The operator's image (default: `ghcr.io/syncprims/syncprims:<version>`). */
  image?: string;
  /** The operator's namespace (default `syncprims-system`). */
  namespace?: string;
  /** `--cluster-id` of the operator (default: not passed; the operator uses the uid of kube-system). */
  clusterId?: string;
  /** `--default-service-account` of the operator (default: not passed). */
  defaultServiceAccount?: string;
}

export const DEFAULT_NAMESPACE = 'syncprims-system';
export const OPERATOR_NAME = 'syncprims-operator';
/** The role the operator applies with when a sync names no service account; see docs/rbac.md. */
export const APPLY_ROLE = 'syncprims-apply';

export function defaultImage(): string {
  return `ghcr.io/syncprims/syncprims:v${packageVersion()}`;
}

const LABELS = { 'app.kubernetes.io/name': 'syncprims', 'app.kubernetes.io/component': 'operator' };
const METRICS_PORT = 8080;
const HEALTH_PORT = 8081;

/** Every object, in the order they apply: CRDs and the namespace first. */
export function installManifests(opts: InstallOptions = {}): KubeObject[] {
  const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
  return [
    ...customResourceDefinitions().map((crd) => crd as unknown as KubeObject),
    namespaceObject(namespace),
    serviceAccount(namespace),
    operatorClusterRole(),
    applyClusterRole(),
    clusterRoleBinding(OPERATOR_NAME, OPERATOR_NAME, namespace),
    clusterRoleBinding(APPLY_ROLE, APPLY_ROLE, namespace),
    leaseRole(namespace),
    leaseRoleBinding(namespace),
    deployment(namespace, opts),
    metricsService(namespace),
  ];
}

/** The namespace, kept when the bootstrap Sync that manages it goes (API.md: never pruned). */
function namespaceObject(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { ...LABELS }, annotations: { [PRUNE_ANNOTATION]: PRUNE_DISABLED } } };
}

function serviceAccount(namespace: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: OPERATOR_NAME, namespace, labels: { ...LABELS } } };
}

/**
 * What the operator needs for itself, whatever the syncs apply: its own
 * kinds; Secrets and ConfigMaps listed and watched (the referenced-object
 * index watches their metadata, and reads one when it changes); Events;
 * CRDs (discovery waits on them); namespaces (kube-system's uid is the
 * default --cluster-id); service accounts to impersonate (serviceAccountName).
 */
function operatorClusterRole(): KubeObject {
  const read = ['get', 'list', 'watch'];
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: OPERATOR_NAME, labels: { ...LABELS } },
    rules: [
      { apiGroups: [GROUP], resources: ['syncs', 'remotesyncs', 'proxysyncs'], verbs: [...read, 'update', 'patch'] },
      { apiGroups: [GROUP], resources: ['syncs/status', 'remotesyncs/status', 'proxysyncs/status'], verbs: ['get', 'update', 'patch'] },
      { apiGroups: [GROUP], resources: ['syncs/finalizers', 'remotesyncs/finalizers', 'proxysyncs/finalizers'], verbs: ['update'] },
      { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: read },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
      { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
      { apiGroups: [''], resources: ['namespaces'], verbs: read },
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: read },
      { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] },
      { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters'], verbs: ['get'] },
    ],
  };
}

/**
 * What a sync that names no service account applies with: everything, since
 * a Sync may apply any kind (as Flux's kustomize-controller is bound to
 * cluster-admin). Tenancy: delete this binding and run the operator with
 * --default-service-account, so that every sync applies as an account of its
 * own namespace.
 */
function applyClusterRole(): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: APPLY_ROLE, labels: { ...LABELS } },
    rules: [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ],
  };
}

function clusterRoleBinding(name: string, role: string, namespace: string): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: { ...LABELS } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'ServiceAccount', name: OPERATOR_NAME, namespace }],
  };
}

/** The leader Lease and the liveness Leases live in the operator's namespace. */
function leaseRole(namespace: string): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: `${OPERATOR_NAME}-leases`, namespace, labels: { ...LABELS } },
    rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }],
  };
}

function leaseRoleBinding(namespace: string): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: `${OPERATOR_NAME}-leases`, namespace, labels: { ...LABELS } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `${OPERATOR_NAME}-leases` },
    subjects: [{ kind: 'ServiceAccount', name: OPERATOR_NAME, namespace }],
  };
}

/** The operator's arguments in the Deployment. */
export function operatorArgs(namespace: string, opts: Pick<InstallOptions, 'clusterId' | 'defaultServiceAccount'>): string[] {
  return [
    'run',
    '--leader-elect',
    `--leader-election-namespace=${namespace}`,
    `--metrics-addr=:${METRICS_PORT}`,
    `--health-addr=:${HEALTH_PORT}`,
    ...(opts.clusterId ? [`--cluster-id=${opts.clusterId}`] : []),
    ...(opts.defaultServiceAccount ? [`--default-service-account=${opts.defaultServiceAccount}`] : []),
  ];
}

/** Two replicas, one leading; probes on /healthz and /readyz; non-root, read-only root filesystem. */
function deployment(namespace: string, opts: InstallOptions): KubeObject {
  const probe = (path: string, periodSeconds: number) => ({ httpGet: { path, port: 'health' }, periodSeconds, timeoutSeconds: 2 });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: OPERATOR_NAME, namespace, labels: { ...LABELS } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { ...LABELS } },
      template: {
        metadata: { labels: { ...LABELS } },
        spec: {
          serviceAccountName: OPERATOR_NAME,
          securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } },
          terminationGracePeriodSeconds: 30,
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { ...LABELS } } },
          ],
          containers: [
            {
              name: 'operator',
              image: opts.image ?? defaultImage(),
              args: operatorArgs(namespace, opts),
              ports: [
                { name: 'metrics', containerPort: METRICS_PORT },
                { name: 'health', containerPort: HEALTH_PORT },
              ],
              livenessProbe: probe('/healthz', 10),
              readinessProbe: probe('/readyz', 5),
              resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '1Gi' } },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: {} }],
        },
      },
    },
  };
}

function metricsService(namespace: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `${OPERATOR_NAME}-metrics`, namespace, labels: { ...LABELS } },
    spec: { selector: { ...LABELS }, ports: [{ name: 'metrics', port: METRICS_PORT, targetPort: 'metrics' }] },
  };
}
