import { z } from 'zod';
import { celRule } from './cel.js';
import { clusterFields, withOneCluster } from './cluster.js';
import { fleetSyncSpecSchema, fleetSyncStatusSchema } from './fleet.js';
import { API_VERSION, MAX_NAME_LENGTH, NAME_LENGTH_MESSAGE } from './kinds.js';
import { namespaceName, objectName } from './names.js';
import { proxySyncStatusSchema, syncStatusSchema } from './status.js';
import { commonMetadataSchema, dependsOnSchema, syncSpecSchema } from './sync-spec.js';

/** The kinds as whole objects: spec schemas, status schemas, object schemas and types. */

export const remoteSyncSpecSchema = withOneCluster(syncSpecSchema.extend(clusterFields));

const NO_ARTIFACT_MESSAGE =
  'an artifact source cannot be proxied: the remote cluster cannot read the Flux objects of the managing cluster; serve the artifact over http and use source.http';

export const proxySyncTemplateSchema = z.object({
  metadata: commonMetadataSchema
    .extend({
      name: objectName(MAX_NAME_LENGTH)
        .optional()
        .describe("the remote Sync's name; the ProxySync's by default"),
      namespace: namespaceName()
        .optional()
        .describe("the remote Sync's namespace (created when missing, unless the operator impersonates: then it must exist, and be the ProxySync's); the ProxySync's namespace by default"),
    })
    .optional(),
  spec: syncSpecSchema,
})
  .refine((template) => template.spec.source.artifact === undefined, { message: NO_ARTIFACT_MESSAGE, path: ['spec', 'source'] })
  .meta(celRule('!has(self.spec.source.artifact)', NO_ARTIFACT_MESSAGE));

/**
 * `dependsOn` and `suspend` beside the template gate the ProxySync itself in
 * the managing cluster (so rollouts order ProxySyncs); those inside the
 * template belong to the remote Sync and refer to objects of the remote cluster.
 */
export const proxySyncSpecSchema = withOneCluster(
  z.object({
    ...clusterFields,
    dependsOn: dependsOnSchema
      .optional()
      .describe('syncs in this cluster that must be ready before the remote Sync is created or updated'),
    suspend: z.boolean().optional().describe('stop maintaining the remote Sync (its status is still mirrored)'),
    deletionPolicy: z
      .enum(['Delete', 'Orphan'])
      .optional()
      .describe('Delete (default): deleting the ProxySync deletes the remote Sync, which prunes; Orphan: the remote Sync stays and runs on its own'),
    adopt: z
      .boolean()
      .optional()
      .describe(
        'take over objects in the remote cluster that carry no syncprims owner labels (the remote Sync, the copies): false by default, when they are left alone and reported (OwnershipConflict); refused when the operator impersonates (--default-service-account: the multi-tenant mode)',
      ),
    template: proxySyncTemplateSchema.describe('the Sync to maintain in the remote cluster'),
  }),
);

/** The metadata fields syncprims reads; others are kept. */
export const objectMetaSchema = z.looseObject({
  name: z.string().max(MAX_NAME_LENGTH, { message: NAME_LENGTH_MESSAGE }),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().int().optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  finalizers: z.array(z.string()).optional(),
});

export const syncSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('Sync'),
  metadata: objectMetaSchema,
  spec: syncSpecSchema,
  status: syncStatusSchema.optional(),
});

export const remoteSyncSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('RemoteSync'),
  metadata: objectMetaSchema,
  spec: remoteSyncSpecSchema,
  status: syncStatusSchema.optional(),
});

export const proxySyncSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('ProxySync'),
  metadata: objectMetaSchema,
  spec: proxySyncSpecSchema,
  status: proxySyncStatusSchema.optional(),
});

export const fleetSyncSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('FleetSync'),
  metadata: objectMetaSchema,
  spec: fleetSyncSpecSchema,
  status: fleetSyncStatusSchema.optional(),
});

/** The spec and status schema of each kind: what the CRDs are generated from. */
export const KIND_SCHEMAS = {
  Sync: { object: syncSchema, spec: syncSpecSchema, status: syncStatusSchema },
  RemoteSync: { object: remoteSyncSchema, spec: remoteSyncSpecSchema, status: syncStatusSchema },
  ProxySync: { object: proxySyncSchema, spec: proxySyncSpecSchema, status: proxySyncStatusSchema },
  FleetSync: { object: fleetSyncSchema, spec: fleetSyncSpecSchema, status: fleetSyncStatusSchema },
} as const;

export type ObjectMeta = z.infer<typeof objectMetaSchema>;
export type RemoteSyncSpec = z.infer<typeof remoteSyncSpecSchema>;
export type ProxySyncTemplate = z.infer<typeof proxySyncTemplateSchema>;
export type ProxySyncSpec = z.infer<typeof proxySyncSpecSchema>;
export type Sync = z.infer<typeof syncSchema>;
export type RemoteSync = z.infer<typeof remoteSyncSchema>;
export type ProxySync = z.infer<typeof proxySyncSchema>;
export type FleetSync = z.infer<typeof fleetSyncSchema>;
/** Any of the three sync kinds (FleetSync is over them). */
export type SyncResource = Sync | RemoteSync | ProxySync;
