// What `syncprims install` prints or applies, and what config/ holds as a
// kustomize base: the CRDs (and RolloutApproval's admission policy), the
// operator's namespace, ServiceAccount, RBAC, Deployment and metrics Service
// (the RBAC in install-rbac.ts). Pure: options in, objects out.
import { PRUNE_ANNOTATION, PRUNE_DISABLED } from '../../api/marks.js';
import { approverPolicy } from '../../api/approval.js';
import { customResourceDefinitions } from '../../api/crds.js';
import type { KubeObject } from '../../kube/resources.js';
import { packageVersion } from '../../version.js';
import { OPERATOR_LABELS, OPERATOR_NAME, operatorRbac } from './install-rbac.js';

export interface InstallOptions {
  /** The operator's image (default: `ghcr.io/syncprims/syncprims:<version>`). */
  image?: string;
  /** The operator's namespace (default `syncprims-system`). */
  namespace?: string;
  /** `--cluster-id` of the operator (default: not passed; the operator uses the uid of kube-system). */
  clusterId?: string;
  /** `--default-service-account` of the operator (default: not passed; `default` with `multiTenant`). */
  defaultServiceAccount?: string;
  /**
   * The locked-down setup (docs/rbac.md): syncs that name no account apply as
   * their namespace's `default` account (unless `defaultServiceAccount` names
   * another), and the operator's own account may write no kind of theirs.
   */
  multiTenant?: boolean;
  /**
   * `--replicas N`: N replicas sharing the work (`syncprims run --shards`: each holds some of
   * the remote clusters and namespaces, docs/shards.md) instead of two electing a leader.
   */
  replicas?: number;
}

export const DEFAULT_NAMESPACE = 'syncprims-system';
export { APPLY_ROLE, OPERATOR_NAME, READ_ROLE } from './install-rbac.js';

export function defaultImage(): string {
  return `ghcr.io/syncprims/syncprims:v${packageVersion()}`;
}

const METRICS_PORT = 8080;
const HEALTH_PORT = 8081;

/** Every object, in the order they apply: CRDs and the namespace first. */
export function installManifests(opts: InstallOptions = {}): KubeObject[] {
  const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
  return [
    ...customResourceDefinitions().map((crd) => crd as unknown as KubeObject),
    // RolloutApproval's spec.approver is the creator (docs/adr/0010-rollout-approvals.md).
    ...approverPolicy(),
    namespaceObject(namespace),
    serviceAccount(namespace),
    ...operatorRbac(namespace, opts.multiTenant ?? false),
    deployment(namespace, opts),
    metricsService(namespace),
  ];
}

/** The namespace, kept when the bootstrap Sync that manages it goes (API.md: never pruned). */
function namespaceObject(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { ...OPERATOR_LABELS }, annotations: { [PRUNE_ANNOTATION]: PRUNE_DISABLED } } };
}

function serviceAccount(namespace: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: OPERATOR_NAME, namespace, labels: { ...OPERATOR_LABELS } } };
}

/** The account that syncs naming none apply as: the option's, else `default` in the multi-tenant mode. */
export function defaultServiceAccountOf(opts: Pick<InstallOptions, 'defaultServiceAccount' | 'multiTenant'>): string | undefined {
  return opts.defaultServiceAccount ?? (opts.multiTenant ? 'default' : undefined);
}

/** Without --replicas: two replicas, one leading, the other standing by. */
const ELECTED_REPLICAS = 2;

/** The operator's arguments in the Deployment: sharded with `replicas`, else electing a leader. */
export function operatorArgs(namespace: string, opts: Pick<InstallOptions, 'clusterId' | 'defaultServiceAccount' | 'multiTenant' | 'replicas'>): string[] {
  const account = defaultServiceAccountOf(opts);
  return [
    'run',
    opts.replicas === undefined ? '--leader-elect' : '--shards',
    // With --shards: where the membership and key Leases are.
    `--leader-election-namespace=${namespace}`,
    `--metrics-addr=:${METRICS_PORT}`,
    `--health-addr=:${HEALTH_PORT}`,
    ...(opts.clusterId ? [`--cluster-id=${opts.clusterId}`] : []),
    ...(account ? [`--default-service-account=${account}`] : []),
  ];
}

/** Two replicas, one leading (or `replicas`, sharded); probes on /healthz and /readyz; non-root, read-only root filesystem. */
function deployment(namespace: string, opts: InstallOptions): KubeObject {
  const probe = (path: string, periodSeconds: number) => ({ httpGet: { path, port: 'health' }, periodSeconds, timeoutSeconds: 2 });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: OPERATOR_NAME, namespace, labels: { ...OPERATOR_LABELS } },
    spec: {
      replicas: opts.replicas ?? ELECTED_REPLICAS,
      selector: { matchLabels: { ...OPERATOR_LABELS } },
      template: {
        metadata: { labels: { ...OPERATOR_LABELS } },
        spec: {
          serviceAccountName: OPERATOR_NAME,
          securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } },
          terminationGracePeriodSeconds: 30,
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { ...OPERATOR_LABELS } } },
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
    metadata: { name: `${OPERATOR_NAME}-metrics`, namespace, labels: { ...OPERATOR_LABELS } },
    spec: { selector: { ...OPERATOR_LABELS }, ports: [{ name: 'metrics', port: METRICS_PORT, targetPort: 'metrics' }] },
  };
}
