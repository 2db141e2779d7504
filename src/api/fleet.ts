import { z } from 'zod';
import { celRule } from './cel.js';
import { boundedDurationSchema } from './duration.js';
import { MAX_NAME_LENGTH } from './kinds.js';
import { namespaceName, objectName } from './names.js';
import { conditionSchema, pendingDependencySchema } from './status.js';
import { commonMetadataSchema, DELETION_POLICIES, dependsOnSchema, syncSpecSchema } from './sync-spec.js';

/** FleetSync (API.md "Clusters and FleetSync"): one ProxySync or RemoteSync per selected cluster. */

export const FLEET_CHILD_KINDS = ['ProxySync', 'RemoteSync'] as const;
export type FleetChildKind = (typeof FLEET_CHILD_KINDS)[number];

const LABEL_KEY_MESSAGE = 'a label key: an optional DNS subdomain prefix and "/", then at most 63 characters of [A-Za-z0-9._-]';
const labelKey = z.string().min(1).max(317).describe(LABEL_KEY_MESSAGE);

/** metav1.LabelSelector. */
export const labelSelectorSchema = z.object({
  matchLabels: z.record(z.string(), z.string().max(63)).optional(),
  matchExpressions: z
    .array(
      z
        .object({
          key: labelKey,
          operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
          values: z.array(z.string().max(63)).max(100).optional(),
        })
        .refine((e) => (e.operator === 'In' || e.operator === 'NotIn') === (e.values !== undefined && e.values.length > 0), {
          message: 'In and NotIn need values; Exists and DoesNotExist take none',
        })
        .meta(
          celRule(
            "(self.operator in ['In', 'NotIn']) == (has(self.values) && size(self.values) > 0)",
            'In and NotIn need values; Exists and DoesNotExist take none',
          ),
        ),
    )
    .max(20)
    .optional(),
});

const CLUSTERS_MESSAGE = 'spec.clusters needs a selector, names, or both';

/** `{selector?, names?}` over the namespace's clusters, at most `maxNames` names. */
function clustersSchema(maxNames: number) {
  return z
    .object({
      selector: labelSelectorSchema.optional().describe("over the labels of the namespace's clusters ({} selects all)"),
      names: z.array(objectName(MAX_NAME_LENGTH)).max(maxNames).optional().describe('clusters by name (with a selector: both must match)'),
    })
    .refine((c) => c.selector !== undefined || c.names !== undefined, { message: CLUSTERS_MESSAGE })
    .meta(celRule('has(self.selector) || has(self.names)', CLUSTERS_MESSAGE));
}

export const fleetClustersSchema = clustersSchema(1000);

/**
 * What each child gets: `{metadata?, spec}`. For ProxySync children it is a
 * ProxySync template (metadata names the remote Sync); for RemoteSync
 * children `spec` is the sync spec (the cluster is filled in per cluster) and
 * metadata gives the child's labels and annotations.
 */
export const fleetTemplateSchema = z.object({
  metadata: commonMetadataSchema
    .extend({
      name: objectName(MAX_NAME_LENGTH).optional().describe("ProxySync children: the remote Sync's name (the child's by default)"),
      namespace: namespaceName().optional().describe("ProxySync children: the remote Sync's namespace (the FleetSync's by default)"),
    })
    .optional(),
  spec: syncSpecSchema,
});

export const ON_UNREACHABLE = ['Wait', 'Skip', 'Fail'] as const;
export const UNMATCHED = ['LastWave', 'Error'] as const;

/** What every wave may set, and the rollout sets for all. */
const waveLimits = {
  maxInFlight: z.number().int().min(1).optional().describe('at most this many clusters of a wave take the new revision at once (default: the whole wave)'),
  maxFailures: z.number().int().min(0).optional().describe('a wave with more failing clusters halts the rollout (default 0)'),
  soak: boundedDurationSchema.optional().describe('how long a wave stays Ready with the new revision before the next wave starts (default 0s)'),
};

export const waveSchema = z.object({
  name: objectName(MAX_NAME_LENGTH),
  selector: labelSelectorSchema.optional().describe("the clusters of this wave, over their labels (none: every cluster not in an earlier wave)"),
  ...waveLimits,
  approval: z.boolean().optional().describe('the wave starts only once approved: a RolloutApproval for the update revision (syncprims rollout approve)'),
  gates: z
    .object({ dependsOn: dependsOnSchema.describe('syncs that must be Ready before the wave starts (e.g. a smoke test)') })
    .optional(),
});

export const rolloutSchema = z.object({
  waves: z.array(waveSchema).max(20).optional().describe('in order; each selected cluster is in the first wave that selects it'),
  ...waveLimits,
  progressDeadline: boundedDurationSchema.optional().describe('a cluster not Ready with the new revision this long after it took it has failed (default 15m)'),
  onUnreachable: z.enum(ON_UNREACHABLE).optional().describe('Wait (default): an unreachable cluster holds its wave; Skip: it does not; Fail: it counts as failed'),
  unmatched: z.enum(UNMATCHED).optional().describe('clusters no wave selects: LastWave (default) goes last; Error refuses the rollout'),
  paused: z.boolean().optional().describe('admit no more clusters'),
});

const ARTIFACT_MESSAGE =
  'an artifact source cannot be proxied: the remote clusters cannot read the Flux objects of the managing cluster; use kind RemoteSync, or serve the artifact over http';
const REMOTE_NAME_MESSAGE = 'template.metadata.name and namespace name the remote Sync: only for ProxySync children';

/**
 * Secrets inline in a template are refused: the template is kept whole in
 * every child and in the FleetSync's ControllerRevisions, which whoever may
 * read the namespace's ordinary objects (the built-in `view` role) reads,
 * also after the Secret left the template (docs/fleet.md).
 */
function inlineSecretMessage(found: string[]): string {
  return (
    `a FleetSync template may not hold Secrets inline (${found.join(', ')}): the template is kept in every child and in ControllerRevisions, ` +
    `which readers without access to Secrets can read; put them in a Secret of this namespace and name it as the source ` +
    `(source.secret: {name, key}; a ProxySync child copies it to its cluster), or use an http source with headersSecretRef`
  );
}

/** The inline objects that are Secrets (in Lists too, to a bounded depth), as `inline[2] Secret app-creds`. */
export function inlineSecrets(inline: readonly Record<string, unknown>[] | undefined): string[] {
  const found: string[] = [];
  const visit = (obj: unknown, where: string, depth: number): void => {
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj) || depth > 10) return;
    const o = obj as { kind?: unknown; metadata?: { name?: unknown }; items?: unknown };
    if (o.kind === 'Secret') found.push(`${where} Secret ${typeof o.metadata?.name === 'string' ? o.metadata.name : '(no name)'}`);
    if (typeof o.kind === 'string' && o.kind.endsWith('List') && Array.isArray(o.items)) {
      // A SecretList's items may leave out their kind.
      o.items.forEach((item, i) => visit(o.kind === 'SecretList' && isRecord(item) && item.kind === undefined ? { ...item, kind: 'Secret' } : item, `${where}.items[${i}]`, depth + 1));
    }
  };
  (inline ?? []).forEach((obj, i) => visit(obj, `inline[${i}]`, 0));
  return found;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const POINTER_MESSAGE = 'a JSON pointer into the template ("" or "/spec/...", RFC 6901); no segment may be __proto__, constructor or prototype';
/** RFC 6901, with the segments that name a JavaScript object's machinery refused. */
const jsonPointer = z
  .string()
  .max(1024)
  .regex(/^(\/[^/]*)*$/, POINTER_MESSAGE)
  .refine((p) => !p.split('/').some((seg) => FORBIDDEN_SEGMENTS.has(seg)), { message: POINTER_MESSAGE });
const FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

const VALUE_MESSAGE = 'add, replace and test need a value (not null, which the API server drops: to take a field away, remove it); remove, move and copy take none';
const FROM_MESSAGE = 'move and copy need from; the other operations take none';

/** One RFC 6902 operation on the template. */
export const jsonPatchOperationSchema = z
  .object({
    op: z.enum(['add', 'remove', 'replace', 'move', 'copy', 'test']),
    path: jsonPointer.describe('where in the template (RFC 6901), e.g. /spec/source/inline/0/metadata/labels/canary'),
    value: z.unknown().optional().describe('for add, replace and test'),
    from: jsonPointer.optional().describe('for move and copy'),
  })
  .refine((o) => ['add', 'replace', 'test'].includes(o.op) === (o.value !== undefined && o.value !== null), { message: VALUE_MESSAGE })
  .refine((o) => ['move', 'copy'].includes(o.op) === (o.from !== undefined), { message: FROM_MESSAGE })
  // Only `from` at admission: CEL cannot see `value` (any JSON, so untyped); the operator checks it (InvalidSpec).
  .meta(celRule("(self.op in ['move', 'copy']) == has(self.from)", FROM_MESSAGE));

/** An override: RFC 6902 patches on the template of the clusters it selects. */
export const fleetOverrideSchema = z.object({
  // Fewer names than spec.clusters takes: the CEL rule on each name is costed for every name of every override.
  clusters: clustersSchema(100).describe('the clusters it applies to (as spec.clusters selects; at most 100 names: select more by label)'),
  patches: z.array(jsonPatchOperationSchema).min(1).max(50).describe('RFC 6902 operations on the template ({metadata?, spec}), in order'),
});

/** `{}`: substitution on (later fields may refine it). */
export const substituteSchema = z.object({}).strict();

/**
 * What a template may not hold for its kind of child (the FleetSync's own,
 * and each cluster's once its overrides and values are in): an artifact
 * source proxied, a remote Sync's name on a RemoteSync, Secrets inline.
 */
export function templateProblems(kind: FleetChildKind, template: FleetTemplate): { message: string; path: string[] }[] {
  const problems: { message: string; path: string[] }[] = [];
  if (kind !== 'RemoteSync' && template.spec.source.artifact !== undefined) problems.push({ message: ARTIFACT_MESSAGE, path: ['spec', 'source'] });
  if (kind === 'RemoteSync' && (template.metadata?.name !== undefined || template.metadata?.namespace !== undefined)) {
    problems.push({ message: REMOTE_NAME_MESSAGE, path: ['metadata'] });
  }
  const secrets = inlineSecrets(template.spec.source.inline);
  if (secrets.length > 0) problems.push({ message: inlineSecretMessage(secrets), path: ['spec', 'source', 'inline'] });
  return problems;
}

export const fleetSyncSpecSchema = z
  .object({
    clusters: fleetClustersSchema.describe("which of the namespace's clusters get a child"),
    kind: z.enum(FLEET_CHILD_KINDS).default('ProxySync').describe('the child made per cluster: ProxySync or RemoteSync'),
    template: fleetTemplateSchema.describe('what each child gets'),
    dependsOn: dependsOnSchema
      .optional()
      .describe('an entry of kind FleetSync is per cluster (each child waits for the same cluster\'s child of it); other kinds gate every child'),
    suspend: z.boolean().optional().describe('passed to the children'),
    deletionPolicy: z.enum(DELETION_POLICIES).optional().describe("passed to the children (the template's by default)"),
    rollout: rolloutSchema.optional().describe('how a template change reaches the clusters: in waves (all at once when absent)'),
    substitute: substituteSchema
      .optional()
      .describe("{} turns on ${name} and ${name:=default} in every string of the template, from each cluster's values ($${ is a literal ${)"),
    overrides: z
      .array(fleetOverrideSchema)
      .max(20)
      .optional()
      .describe('applied in order, before substitution, to the template of each cluster they select'),
  })
  .superRefine((spec, ctx) => {
    for (const p of templateProblems(spec.kind, spec.template)) ctx.addIssue({ code: 'custom', message: p.message, path: ['template', ...p.path] });
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: "self.kind == 'RemoteSync' || !has(self.template.spec.source.artifact)", message: ARTIFACT_MESSAGE },
      {
        rule: "self.kind != 'RemoteSync' || !has(self.template.metadata) || (!has(self.template.metadata.name) && !has(self.template.metadata.namespace))",
        message: REMOTE_NAME_MESSAGE,
      },
    ],
  });

export const FLEET_PHASES = ['Progressing', 'Soaking', 'AwaitingApproval', 'Paused', 'Halted', 'Complete'] as const;
export type FleetPhase = (typeof FLEET_PHASES)[number];

const count = z.number().int().min(0);

/** At most this many revisions are listed in status as recorded (the 10 kept, and those children still have). */
export const MAX_RECORDED_REVISIONS = 50;

/** At most this many failing clusters are listed in status (the children say the rest). */
export const MAX_FLEET_FAILURES = 20;

export const fleetSyncStatusSchema = z.object({
  observedGeneration: z.number().int().min(0).optional(),
  conditions: z
    .array(conditionSchema)
    .optional()
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
  phase: z.enum(FLEET_PHASES).optional(),
  currentRevision: z.string().optional().describe('the template revision every selected cluster is Ready with'),
  updateRevision: z.string().optional().describe('the template revision being rolled out'),
  revisions: z
    .array(z.string().max(16))
    .max(MAX_RECORDED_REVISIONS)
    .optional()
    .describe('the template revisions the operator recorded as ControllerRevisions and keeps: the only ones rollout history and undo take'),
  clusters: z
    .object({ selected: count, updated: count, ready: count, failed: count, unreachable: count, progressing: count })
    .optional()
    .describe('how many clusters are selected, have the update revision, are Ready with it, failed, unreachable, still progressing'),
  readyClusters: z.string().optional().describe('ready/selected (the Clusters printer column)'),
  waves: z
    .array(
      z.object({
        name: z.string(),
        clusters: count,
        updated: count,
        ready: count,
        failed: count,
        unreachable: count,
        soakUntil: z.string().optional(),
        approved: z.boolean().optional(),
        approvedBy: z.string().optional().describe('who approved the wave for updateRevision (the creator of its RolloutApproval, as the API server checked it)'),
        approvedAt: z.string().optional().describe('when (the RolloutApproval was created)'),
        members: z.array(z.string()).optional().describe('the clusters of the wave, decided when the rollout started'),
      }),
    )
    .optional()
    .describe('the rollout of updateRevision, wave by wave'),
  message: z.string().optional().describe('why the rollout stands where it stands (halted, waiting for approval, a gate, a soak)'),
  failures: z
    .array(z.object({ cluster: z.string(), reason: z.string(), message: z.string() }))
    .max(MAX_FLEET_FAILURES)
    .optional()
    .describe(`failing clusters, at most ${MAX_FLEET_FAILURES} (each child says more)`),
  pendingDependencies: z.array(pendingDependencySchema).optional().describe('dependencies not met yet (those that gate every child)'),
  lastHandledReconcileAt: z.string().optional().describe('echo of the syncprims.dev/reconcile-requested-at annotation'),
});

export type LabelSelector = z.infer<typeof labelSelectorSchema>;
export type FleetTemplate = z.infer<typeof fleetTemplateSchema>;
export type FleetSyncSpec = z.infer<typeof fleetSyncSpecSchema>;
export type FleetSyncStatus = z.infer<typeof fleetSyncStatusSchema>;
export type RolloutSpec = z.infer<typeof rolloutSchema>;
export type WaveSpec = z.infer<typeof waveSchema>;
export type FleetOverride = z.infer<typeof fleetOverrideSchema>;
export type JsonPatchOperation = z.infer<typeof jsonPatchOperationSchema>;
export type WaveStatus = NonNullable<FleetSyncStatus['waves']>[number];
