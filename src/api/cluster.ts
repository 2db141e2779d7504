import { z } from 'zod';
import { celRule, exactlyOneOf } from './cel.js';
import { dataKey, objectName } from './names.js';

/** How a RemoteSync or ProxySync names its cluster: exactly one of kubeConfig or clusterRef. */

export const DEFAULT_KUBECONFIG_KEY = 'value';

export const kubeConfigRefSchema = z.object({
  secretRef: z.object({
    name: objectName().describe('a Secret in the same namespace'),
    key: dataKey().default(DEFAULT_KUBECONFIG_KEY).describe('the key holding the kubeconfig'),
  }),
});

export const clusterRefSchema = z.object({
  // Room for the suffix: the Secret's name is at most 253 characters too.
  name: objectName(253 - clusterApiKubeconfigSecret('').length).describe('a Cluster API cluster: the Secret <name>-kubeconfig, key value'),
});

/** The two fields, to spread into an object schema beside the others. */
export const clusterFields = {
  kubeConfig: kubeConfigRefSchema.optional().describe('a kubeconfig in a Secret of the same namespace'),
  clusterRef: clusterRefSchema.optional().describe('a Cluster API cluster of the same namespace'),
};

const CLUSTER_FIELDS = ['kubeConfig', 'clusterRef'] as const;
const CLUSTER_MESSAGE = 'spec must name the cluster with exactly one of kubeConfig or clusterRef';

/** Adds the "exactly one of kubeConfig or clusterRef" check (zod and CEL) to a spec schema. */
export function withOneCluster<T extends z.ZodType<{ kubeConfig?: unknown; clusterRef?: unknown }>>(schema: T): T {
  return schema
    .superRefine((spec, ctx) => {
      const set = CLUSTER_FIELDS.filter((f) => spec[f] !== undefined);
      if (set.length !== 1) ctx.addIssue({ code: 'custom', message: CLUSTER_MESSAGE });
    })
    .meta(celRule(exactlyOneOf(CLUSTER_FIELDS), CLUSTER_MESSAGE));
}

export type KubeConfigRef = z.infer<typeof kubeConfigRefSchema>;
export type ClusterRef = z.infer<typeof clusterRefSchema>;

/** The Cluster API convention: cluster `name`'s kubeconfig is in the Secret `<name>-kubeconfig`. */
export function clusterApiKubeconfigSecret(cluster: string): string {
  return `${cluster}-kubeconfig`;
}

/** The Secret and key that hold a cluster's kubeconfig. */
export function kubeconfigSecret(spec: { kubeConfig?: KubeConfigRef; clusterRef?: ClusterRef }): {
  name: string;
  key: string;
} {
  // The schema defaults the key; a spec read from a file (the CLI) may not have been through it.
  if (spec.kubeConfig) return { name: spec.kubeConfig.secretRef.name, key: spec.kubeConfig.secretRef.key ?? DEFAULT_KUBECONFIG_KEY };
  if (spec.clusterRef) return { name: clusterApiKubeconfigSecret(spec.clusterRef.name), key: DEFAULT_KUBECONFIG_KEY };
  throw new Error(CLUSTER_MESSAGE);
}
