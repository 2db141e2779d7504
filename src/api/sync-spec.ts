import { z } from 'zod';
import { boundedDurationSchema, intervalSchema } from './duration.js';
import { helmSpecSchema } from './helm.js';
import { KINDS, MAX_NAME_LENGTH } from './kinds.js';
import { namespaceName, objectName } from './names.js';
import { sourceSchema } from './source.js';

/** The sync spec: Sync.spec, RemoteSync.spec (plus a cluster), ProxySync.spec.template.spec. */

export const REQUIRED_STATUSES = ['Current', 'InProgress'] as const;
export type RequiredStatus = (typeof REQUIRED_STATUSES)[number];

export const DELETION_POLICIES = ['Delete', 'Orphan'] as const;
export type DeletionPolicy = (typeof DELETION_POLICIES)[number];

/** Defaults the API server fills in (they are OpenAPI defaults in the CRDs). */
export const SPEC_DEFAULTS = {
  prune: true,
  wait: true,
  timeout: '5m',
  interval: '10m',
  deletionPolicy: 'Delete',
} as const satisfies Record<string, unknown>;

export const dependencyRefSchema = z.object({
  kind: z.enum(KINDS).default('Sync').describe('Sync, RemoteSync, ProxySync or FleetSync'),
  name: objectName(MAX_NAME_LENGTH),
  namespace: namespaceName()
    .optional()
    .describe('another namespace (only when the operator allows cross-namespace references)'),
  requiredStatus: z
    .enum(REQUIRED_STATUSES)
    .default('Current')
    .describe('Current: Ready; InProgress: its current revision applied, whatever the health of its objects'),
});

/** At most this many dependencies: the API server bounds the cost of the CEL rules on their names by it. */
export const MAX_DEPENDENCIES = 100;

export const dependsOnSchema = z.array(dependencyRefSchema).max(MAX_DEPENDENCIES);

const stringMap = z.record(z.string(), z.string());

export const commonMetadataSchema = z.object({
  labels: stringMap.optional(),
  annotations: stringMap.optional(),
});

/** The fields of the sync spec, as an object schema that other specs extend. */
export const syncSpecSchema = z.object({
  source: sourceSchema,
  paths: z
    .array(z.string().min(1))
    .optional()
    .describe('relative paths of files or folders inside an archive; the whole source when omitted'),
  defaultNamespace: namespaceName()
    .optional()
    .describe('namespace given to namespaced objects that name none'),
  dependsOn: dependsOnSchema.optional().describe('syncs that must be ready before this one applies'),
  prune: z.boolean().default(SPEC_DEFAULTS.prune).describe('delete objects that left the set'),
  wait: z.boolean().default(SPEC_DEFAULTS.wait).describe('Ready only once every applied object is Current'),
  timeout: boundedDurationSchema.default(SPEC_DEFAULTS.timeout).describe('how long to wait for health'),
  interval: intervalSchema
    .default(SPEC_DEFAULTS.interval)
    .describe('re-read the source and correct drift at least this often'),
  suspend: z.boolean().optional().describe('stop reconciling'),
  serviceAccountName: objectName()
    .optional()
    .describe('apply and prune as this service account of the namespace'),
  force: z.boolean().optional().describe('delete and recreate an object whose immutable fields changed'),
  deletionPolicy: z
    .enum(DELETION_POLICIES)
    .default(SPEC_DEFAULTS.deletionPolicy)
    .describe('Delete prunes everything owned when the sync is deleted; Orphan leaves it'),
  commonMetadata: commonMetadataSchema.optional().describe('labels and annotations added to every applied object'),
  helm: helmSpecSchema.optional().describe('render the source as a Helm chart, as helm template does'),
});

export type DependencyRef = z.infer<typeof dependencyRefSchema>;
export type CommonMetadata = z.infer<typeof commonMetadataSchema>;
/** The spec after parsing: defaults filled. */
export type SyncSpec = z.infer<typeof syncSpecSchema>;
/** The spec as a person writes it: defaulted fields optional. */
export type SyncSpecInput = z.input<typeof syncSpecSchema>;
