import type { FetchedHook } from '../source/chart-set.js';
import type { KubeObject } from '../kube/resources.js';
import type { ChartHook, HookDeletePolicy, HookPhase } from './hooks.js';
import { crdScopes, kindKey, render, type RenderOptions, type RenderResult } from './render.js';

/**
 * A chart's hooks as a `helm template` world has them (docs/source.md, "Helm
 * charts"): `pre-install`/`pre-upgrade` hooks applied before the set, and
 * `post-install`/`post-upgrade` after it; test, delete and rollback hooks
 * never (there is no release to test, delete or roll back). A hook naming
 * both a pre and a post event is applied once, before. Each is rendered as
 * the set's objects are (namespace, owner labels, origin), and they come
 * sorted by phase, weight, Helm's install order of kinds, then name.
 */

/** The phase of a hook's events; undefined when none is one we apply. */
export function hookPhase(events: readonly string[]): HookPhase | undefined {
  if (events.some((e) => e === 'pre-install' || e === 'pre-upgrade')) return 'pre';
  if (events.some((e) => e === 'post-install' || e === 'post-upgrade')) return 'post';
  return undefined;
}

const POLICIES = new Set<string>(['before-hook-creation', 'hook-succeeded', 'hook-failed']);

/** The delete policies we know, in the order given; before-hook-creation when none is given (as Helm does). */
export function hookDeletePolicies(given: readonly string[]): HookDeletePolicy[] {
  const known = [...new Set(given.filter((p) => POLICIES.has(p)))] as HookDeletePolicy[];
  return given.length === 0 ? ['before-hook-creation'] : known;
}

/** Helm's install order of kinds (its release utilities' InstallOrder); other kinds after them, by name. */
const INSTALL_ORDER = [
  'PriorityClass', 'Namespace', 'NetworkPolicy', 'ResourceQuota', 'LimitRange', 'PodSecurityPolicy', 'PodDisruptionBudget',
  'ServiceAccount', 'Secret', 'SecretList', 'ConfigMap', 'StorageClass', 'PersistentVolume', 'PersistentVolumeClaim',
  'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleList', 'ClusterRoleBinding', 'ClusterRoleBindingList', 'Role',
  'RoleList', 'RoleBinding', 'RoleBindingList', 'Service', 'DaemonSet', 'Pod', 'ReplicationController', 'ReplicaSet',
  'Deployment', 'HorizontalPodAutoscaler', 'StatefulSet', 'Job', 'CronJob', 'IngressClass', 'Ingress', 'APIService',
  'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration',
];
const RANK = new Map(INSTALL_ORDER.map((k, i) => [k, i]));

/** Compares two kinds as Helm orders them for install: listed kinds first in their order, then the others by name. */
export function compareInstallKinds(a: string, b: string): number {
  const ra = RANK.get(a);
  const rb = RANK.get(b);
  if (ra !== undefined && rb !== undefined) return ra - rb;
  if (ra !== undefined) return -1;
  if (rb !== undefined) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

const PHASE_RANK: Record<HookPhase, number> = { pre: 0, post: 1 };

/** Hooks in the order they are applied: phase, weight, install kind order, name. */
export function compareHooks(a: ChartHook, b: ChartHook): number {
  const name = (h: ChartHook): string => h.object.metadata.name ?? '';
  return (
    PHASE_RANK[a.phase] - PHASE_RANK[b.phase] ||
    a.weight - b.weight ||
    compareInstallKinds(a.object.kind, b.object.kind) ||
    (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0)
  );
}

/**
 * The hooks applied, rendered with the set's options; kinds the target does
 * not serve may be defined by a CRD of the set (`set`), as for the set's own.
 */
export async function renderHooks(fetched: readonly FetchedHook[], opts: RenderOptions, set: readonly KubeObject[]): Promise<RenderResult & { hooks: ChartHook[] }> {
  const kept = fetched.flatMap((h) => {
    const phase = hookPhase(h.events);
    return phase ? [{ ...h, phase }] : [];
  });
  const fromSet = crdScopes(set);
  const scopeOf: RenderOptions['scopeOf'] = async (apiVersion, kind) => (await opts.scopeOf(apiVersion, kind)) ?? fromSet.get(kindKey({ apiVersion, kind }));
  // Rendered one at a time: render() keeps the objects that render, and each hook's own fields go with its object.
  const hooks: ChartHook[] = [];
  const result: RenderResult = { objects: [], errors: [], unknownKinds: [] };
  for (const h of kept) {
    const one = await render([h.object], { ...opts, scopeOf });
    result.errors.push(...one.errors.map((e) => `hook ${e}`));
    result.unknownKinds.push(...one.unknownKinds);
    for (const object of one.objects) hooks.push({ object, phase: h.phase, weight: h.weight, deletePolicies: hookDeletePolicies(h.deletePolicies) });
  }
  hooks.sort(compareHooks);
  result.objects = hooks.map((h) => h.object);
  return { ...result, hooks };
}
