/** Labels, annotations, the finalizer and the field manager that syncprims puts on objects (API.md). */

/** Owner labels on every applied object. */
export const OWNER_KIND_LABEL = 'syncprims.dev/owner-kind';
export const OWNER_NAMESPACE_LABEL = 'syncprims.dev/owner-namespace';
export const OWNER_NAME_LABEL = 'syncprims.dev/owner-name';
/** On objects in remote clusters: the id of the managing cluster. */
export const ORIGIN_LABEL = 'syncprims.dev/origin';

/** `syncprims.dev/prune: disabled` on an object: it is never pruned. */
export const PRUNE_ANNOTATION = 'syncprims.dev/prune';
export const PRUNE_DISABLED = 'disabled';

/** On a chart's hook object as applied: which run of its group it belongs to (that run's `status.hooks.since`). */
export const HOOK_RUN_ANNOTATION = 'syncprims.dev/hook-run';

/** Any value on a sync asks for a reconcile now; echoed in `status.lastHandledReconcileAt`. */
export const RECONCILE_REQUESTED_AT_ANNOTATION = 'syncprims.dev/reconcile-requested-at';

/** On every Sync, RemoteSync and ProxySync. */
export const FINALIZER = 'syncprims.dev/finalizer';

/** The field manager of every server-side apply. */
export const FIELD_MANAGER = 'syncprims';

/** On a kubeconfig Secret (key `value`): registers it in its namespace's cluster inventory under the label's value. */
export const CLUSTER_LABEL = 'syncprims.dev/cluster';
