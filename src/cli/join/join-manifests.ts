// `syncprims join`'s manifests (docs/pull.md): the install's, with the join
// bundle in a Secret of the operator's namespace, mounted into the
// Deployment, which runs with `--upstream-kubeconfig` on it and
// `--upstream-secret` naming it (the mount is read-only: the operator writes
// its renewed token into the Secret, which the kubelet brings to the file),
// and a Role that lets the operator's account update that Secret only.
import type { KubeObject } from '../../kube/resources.js';
import { DEFAULT_NAMESPACE, installManifests, type InstallOptions } from '../install/install-manifests.js';
import { bindingObject, OPERATOR_LABELS, OPERATOR_NAME, roleObject } from '../install/install-rbac.js';

/** The Secret holding the join bundle (key `value`), in the operator's namespace. */
export const UPSTREAM_SECRET = 'syncprims-upstream';
const MOUNT = '/etc/syncprims/upstream';

/** The install's objects for a pull cluster joining with `bundle` (the join file's text). */
export function joinManifests(opts: InstallOptions, bundle: string): KubeObject[] {
  const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
  const objects = installManifests(opts);
  const at = objects.findIndex((o) => o.kind === 'Deployment');
  const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: UPSTREAM_SECRET, namespace, labels: { ...OPERATOR_LABELS } } };
  (secret as unknown as { stringData: Record<string, string> }).stringData = { value: bundle };
  const role = `${OPERATOR_NAME}-upstream`;
  const rbac = [
    roleObject(role, [{ apiGroups: [''], resources: ['secrets'], resourceNames: [UPSTREAM_SECRET], verbs: ['get', 'update', 'patch'] }], OPERATOR_LABELS, namespace),
    bindingObject(role, role, { name: OPERATOR_NAME, namespace }, OPERATOR_LABELS, namespace),
  ];
  return [...objects.slice(0, at), secret, ...rbac, withUpstream(objects[at]!), ...objects.slice(at + 1)];
}

/** The Deployment with the bundle mounted and the flags that use it. */
function withUpstream(deployment: KubeObject): KubeObject {
  const copy = structuredClone(deployment) as KubeObject & {
    spec: { template: { spec: { containers: { args: string[]; volumeMounts: unknown[] }[]; volumes: unknown[] } } };
  };
  const pod = copy.spec.template.spec;
  const container = pod.containers[0]!;
  container.args.push(`--upstream-kubeconfig=${MOUNT}/value`, `--upstream-secret=${UPSTREAM_SECRET}`);
  container.volumeMounts.push({ name: 'upstream', mountPath: MOUNT, readOnly: true });
  pod.volumes.push({ name: 'upstream', secret: { secretName: UPSTREAM_SECRET, defaultMode: 0o400 } });
  return copy;
}
