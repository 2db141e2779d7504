// The account the bootstrap Sync applies as in the multi-tenant mode (where
// the operator's own account writes nothing of what syncs apply): it may
// change the operator's own objects, by name, and read its source. Its
// rules are derived from the manifests, so they follow them.
import type { KubeObject } from '../../kube/resources.js';
import { installManifests, type InstallOptions } from './install-manifests.js';
import { bindingObject, roleObject, type PolicyRule } from './install-rbac.js';

export const BOOTSTRAP_ACCOUNT = 'syncprims-bootstrap';
const LABELS = { 'app.kubernetes.io/name': 'syncprims', 'app.kubernetes.io/component': 'bootstrap' };

/** An object the bootstrap Sync's account reads or writes, by name. */
export interface NamedObject {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** Verbs on the operator's objects by name: apply (a create when missing: SSA checks `create` too), correct, prune. */
const WRITE = ['get', 'create', 'update', 'patch', 'delete'];
/** RBAC refuses a role granting what its writer lacks, or a binding to such a role, without these (by role name). */
const RBAC_GRANT = ['bind', 'escalate'];

/**
 * The ServiceAccount, a ClusterRole and a Role (the namespace's objects)
 * with their bindings, for `namespace`. `reads` are the source objects the
 * Sync reads as its account (the ConfigMap, or the Flux source).
 */
export function bootstrapAccount(opts: InstallOptions, namespace: string, reads: NamedObject[]): KubeObject[] {
  const account = { name: BOOTSTRAP_ACCOUNT, namespace };
  const managed = managedObjects(opts);
  const clusterRules = rulesFor(managed.filter((o) => o.namespace === undefined), WRITE);
  const namespaceRules = [...rulesFor(managed.filter((o) => o.namespace !== undefined), WRITE), ...rulesFor(reads, ['get', 'list', 'watch'])];
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: BOOTSTRAP_ACCOUNT, namespace, labels: { ...LABELS } } },
    roleObject(BOOTSTRAP_ACCOUNT, clusterRules, LABELS),
    bindingObject(BOOTSTRAP_ACCOUNT, BOOTSTRAP_ACCOUNT, account, LABELS),
    roleObject(BOOTSTRAP_ACCOUNT, namespaceRules, LABELS, namespace),
    bindingObject(BOOTSTRAP_ACCOUNT, BOOTSTRAP_ACCOUNT, account, LABELS, namespace),
  ];
}

/**
 * The operator's objects in either mode: switching mode by the bootstrap
 * Sync prunes the other mode's roles (the default mode's apply-everything
 * ClusterRole first of all), so its account may delete those too.
 */
function managedObjects(opts: InstallOptions): NamedObject[] {
  const objects = [...installManifests({ ...opts, multiTenant: false }), ...installManifests({ ...opts, multiTenant: true })];
  return objects.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name ?? '', namespace: o.metadata.namespace }));
}

/** One rule per resource, naming its objects; roles may be granted and bound (only those named). */
function rulesFor(objects: NamedObject[], verbs: string[]): PolicyRule[] {
  const byResource = new Map<string, { group: string; resource: string; names: Set<string> }>();
  for (const o of objects) {
    const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0]! : '';
    const resource = resourceOf(o.kind);
    const key = `${group}/${resource}`;
    const entry = byResource.get(key) ?? { group, resource, names: new Set<string>() };
    entry.names.add(o.name);
    byResource.set(key, entry);
  }
  return [...byResource.values()].map(({ group, resource, names }) => ({
    apiGroups: [group],
    resources: [resource],
    resourceNames: [...names].sort(),
    verbs: group === 'rbac.authorization.k8s.io' && resource.endsWith('roles') ? [...verbs, ...RBAC_GRANT] : verbs,
  }));
}

/** The resource (plural) of the kinds the manifests and bootstrap sources hold: Deployment, GitRepository, ... */
function resourceOf(kind: string): string {
  const lower = kind.toLowerCase();
  return /[^aeiou]y$/.test(lower) ? `${lower.slice(0, -1)}ies` : `${lower}s`;
}
