import type { KubeObject } from '../kube/resources.js';

/** When a chart's hook is applied: before the set (pre-install, pre-upgrade) or after it (post-install, post-upgrade). */
export type HookPhase = 'pre' | 'post';

/** A hook's helm.sh/hook-delete-policy (before-hook-creation when none is given, as Helm does). */
export type HookDeletePolicy = 'before-hook-creation' | 'hook-succeeded' | 'hook-failed';

/** A Helm hook of a rendered chart: applied in a stage of its own on a new revision, not part of the set, never pruned. */
export interface ChartHook {
  /** The hook object, rendered (namespace, owner labels, origin) as the set's objects are. */
  object: KubeObject;
  phase: HookPhase;
  /** helm.sh/hook-weight: lower first; hooks of equal weight form one group. */
  weight: number;
  deletePolicies: HookDeletePolicy[];
}
