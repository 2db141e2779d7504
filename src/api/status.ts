import { z } from 'zod';
import { KSTATUS_ORDER, PENDING_REASONS } from './conditions.js';
import { KINDS } from './kinds.js';

/** The status of the sync kinds (API.md "Status"). */

const generation = z.number().int().min(0);
const count = z.number().int().min(0);

/** metav1.Condition. */
export const conditionSchema = z.object({
  type: z.string().min(1).max(316),
  status: z.enum(['True', 'False', 'Unknown']),
  observedGeneration: generation.optional(),
  lastTransitionTime: z.string().meta({ format: 'date-time' }),
  reason: z.string().min(1).max(1024),
  message: z.string().max(32768),
});

export const inventoryEntrySchema = z.object({
  id: z.string().describe('<namespace>_<name>_<group>_<kind>'),
  v: z.string().describe('the API version the object was applied with'),
});

export const inventorySchema = z.object({ entries: z.array(inventoryEntrySchema) });

export const summarySchema = z.object({
  total: count,
  current: count,
  inProgress: count,
  failed: count,
  terminating: count,
  notFound: count,
  unknown: count,
  leastStatus: z
    .enum(KSTATUS_ORDER)
    .optional()
    .describe('the least ready object: NotFound < Failed < Terminating < Unknown < InProgress < Current'),
});

export const pendingDependencySchema = z.object({
  kind: z.enum(KINDS),
  name: z.string(),
  namespace: z.string().optional(),
  reason: z.enum(PENDING_REASONS),
});

/** Where a chart's hooks of a revision are (docs/helm-hooks.md). */
export const HOOK_PHASES = ['Pre', 'Set', 'Post', 'Done'] as const;

export const hooksStatusSchema = z.object({
  revision: z.string().describe('the revision whose hooks these are'),
  phase: z
    .enum(HOOK_PHASES)
    .describe('Pre: its pre hooks run; Set: the set is applied, its post hooks wait for it to be Ready; Post: its post hooks run; Done'),
  weight: z.number().int().optional().describe('the weight of the group of hooks applied and waited for now (phases Pre and Post)'),
  since: z.string().optional().meta({ format: 'date-time' }).describe("when that group was applied: the sync's timeout counts from then"),
  failed: z
    .string()
    .max(32768)
    .optional()
    .describe('which hook failed and why: nothing more runs for this revision until the spec changes or a reconcile is requested'),
  generation: generation.optional().describe('the generation that ran them'),
  requestedAt: z.string().optional().describe('the reconcile request (syncprims.dev/reconcile-requested-at) that ran them'),
  entries: z
    .array(inventoryEntrySchema)
    .describe('hooks applied and perhaps still there (not in the inventory, never pruned): deleted with the sync'),
});

export const syncStatusSchema = z.object({
  observedGeneration: generation.optional().describe('the generation last reconciled'),
  conditions: z
    .array(conditionSchema)
    .optional()
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
  lastAttemptedRevision: z.string().optional().describe('the revision being applied or last tried'),
  lastAppliedRevision: z.string().optional().describe('the revision last applied in full'),
  inventory: inventorySchema.optional().describe('the objects applied'),
  summary: summarySchema.optional().describe('kstatus of the applied objects'),
  pendingDependencies: z.array(pendingDependencySchema).optional().describe('dependencies not met yet'),
  lastHandledReconcileAt: z
    .string()
    .optional()
    .describe('echo of the syncprims.dev/reconcile-requested-at annotation'),
  hooks: hooksStatusSchema.optional().describe("a chart's hooks of the last revision that had any"),
});

export const remoteSyncRefSchema = z.object({
  cluster: z.string().describe('the kubeconfig Secret or the Cluster'),
  namespace: z.string(),
  name: z.string(),
  observedGeneration: generation.optional().describe("the remote Sync's observedGeneration"),
  pendingDependencies: z.array(pendingDependencySchema).optional().describe("the remote Sync's own dependencies not met yet"),
  lastSeenAt: z.string().optional().describe("when a change of the remote Sync's status was last seen (an unchanged value: nothing changed there since)"),
});

export const proxySyncStatusSchema = syncStatusSchema.extend({
  remote: remoteSyncRefSchema.optional().describe('the Sync this ProxySync maintains'),
});

export type Condition = z.infer<typeof conditionSchema>;
export type InventoryEntry = z.infer<typeof inventoryEntrySchema>;
export type Inventory = z.infer<typeof inventorySchema>;
export type Summary = z.infer<typeof summarySchema>;
export type PendingDependency = z.infer<typeof pendingDependencySchema>;
export type SyncStatus = z.infer<typeof syncStatusSchema>;
export type HooksStatus = z.infer<typeof hooksStatusSchema>;
export type HookStatusPhase = (typeof HOOK_PHASES)[number];
export type RemoteSyncRef = z.infer<typeof remoteSyncRefSchema>;
export type ProxySyncStatus = z.infer<typeof proxySyncStatusSchema>;
