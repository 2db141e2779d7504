/** Condition types and reasons of every kind (kstatus conventions, API.md "Status"). */

export const ConditionType = {
  Ready: 'Ready',
  Reconciling: 'Reconciling',
  Stalled: 'Stalled',
  /** A source with `verify` (source.oci.verify): True once its signature held, False when it did not. */
  SourceVerified: 'SourceVerified',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

export const ConditionStatus = { True: 'True', False: 'False', Unknown: 'Unknown' } as const;
export type ConditionStatus = (typeof ConditionStatus)[keyof typeof ConditionStatus];

export const Reason = {
  /** Ready=Unknown while applying. */
  Progressing: 'Progressing',
  /** Ready=True. */
  Succeeded: 'Succeeded',
  /** Ready keeps its status while suspended. */
  Suspended: 'Suspended',
  // Ready=False:
  DependencyNotReady: 'DependencyNotReady',
  DependencyCycle: 'DependencyCycle',
  InvalidSpec: 'InvalidSpec',
  SourceError: 'SourceError',
  ApplyFailed: 'ApplyFailed',
  HealthCheckFailed: 'HealthCheckFailed',
  PruneFailed: 'PruneFailed',
  ClusterUnreachable: 'ClusterUnreachable',
  /** A pull cluster whose operator has not renewed its Lease in time (or never did): since when it was last seen. */
  ClusterOffline: 'ClusterOffline',
  /** A pull cluster whose identity was revoked (`syncprims cluster revoke`). */
  ClusterRevoked: 'ClusterRevoked',
  /** The kubeconfig in the cluster's Secret is refused (exec, file paths, insecure TLS) or malformed. */
  InvalidKubeconfig: 'InvalidKubeconfig',
  OwnershipConflict: 'OwnershipConflict',
  RemoteNotReady: 'RemoteNotReady',
  /** A ProxySync whose remote Sync was suspended by hand there (not by its template): it applies nothing the ProxySync gives it. */
  RemoteSuspended: 'RemoteSuspended',
  CRDNotInstalled: 'CRDNotInstalled',
  /** A chart's pre or post hook failed, or did not succeed within the sync's timeout (docs/helm-hooks.md). */
  HookFailed: 'HookFailed',
  /** A FleetSync some of whose children failed (status.failures names them). */
  ClustersFailing: 'ClustersFailing',
  /** A FleetSync's rollout past a wave's failure budget: no cluster takes the revision any more. */
  RolloutHalted: 'RolloutHalted',
  /** A FleetSync past its quota (--fleet-max-clusters, --fleet-max-size): nothing is written. */
  QuotaExceeded: 'QuotaExceeded',
  /** A FleetSync's cluster with a problem in the inventory (a name claimed twice, no usable credentials): its child is kept as it is. */
  InventoryProblem: 'InventoryProblem',
  /** A FleetSync's cluster whose overrides do not apply to the template (a path that is not there), or leave it invalid: it gets no write. */
  OverrideFailed: 'OverrideFailed',
  /** A FleetSync's cluster missing a value its template uses (no default), or whose values leave the template invalid: it gets no write. */
  SubstitutionFailed: 'SubstitutionFailed',
  /** SourceVerified=False: the source's signature did not hold for any of the keys (or there was none). */
  VerificationFailed: 'VerificationFailed',
  /** A ControllerRevision labelled with a FleetSync that is not its own (an Event): ignored. */
  UntrustedRevision: 'UntrustedRevision',
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];

/** Reasons that also set Stalled=True: progress needs a spec change. */
export const STALLED_REASONS: readonly Reason[] = [Reason.InvalidSpec, Reason.DependencyCycle];

/** Why a dependency is unmet (`status.pendingDependencies[].reason`). */
export const PENDING_REASONS = ['NotFound', 'NotObserved', 'Progressing', 'NotReady', 'Forbidden', 'Cycle'] as const;
export type PendingReason = (typeof PENDING_REASONS)[number];

/** kstatus statuses, least ready first (the order of `summary.leastStatus`). */
export const KSTATUS_ORDER = ['NotFound', 'Failed', 'Terminating', 'Unknown', 'InProgress', 'Current'] as const;
export type KStatus = (typeof KSTATUS_ORDER)[number];
