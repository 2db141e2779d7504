import { z } from 'zod';
import { celRule } from './cel.js';
import { dataKey, namespaceName, objectName } from './names.js';

/**
 * `spec.helm`: the source is a Helm chart, rendered as `helm template`
 * renders it (API.md "The sync spec"; docs/adr/0013-helm-charts.md).
 */

export const VALUES_FROM_KINDS = ['ConfigMap', 'Secret'] as const;

/** A release name as Helm checks it (`helm template` refuses others): a DNS-1123 label of at most 53 characters. */
export const RELEASE_NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const RELEASE_NAME_MESSAGE = "must be a Helm release name: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 53 characters";

/** A chart path inside the source: relative, `/`-separated, no `..` segment. */
const CHART_PATH_PATTERN = '^[^/]+(/[^/]+)*$';
const CHART_PATH_MESSAGE = 'must be a relative path inside the source (no leading /, no .. segment)';

/** A Kubernetes version as `--kube-version` takes it: `1.36`, `v1.36.0`. */
export const KUBE_VERSION_PATTERN = '^v?[0-9]+[.][0-9]+([.][0-9]+)?$';
const KUBE_VERSION_MESSAGE = 'must be a Kubernetes version such as v1.36.0 or 1.36';

function isChartPath(path: string): boolean {
  return new RegExp(CHART_PATH_PATTERN).test(path) && !path.split('/').some((s) => s === '..' || s === '.');
}

export const valuesFromSchema = z.object({
  kind: z.enum(VALUES_FROM_KINDS).describe('ConfigMap or Secret, in the same namespace, read as the sync\'s account'),
  name: objectName().describe('name of the object'),
  key: dataKey().optional().describe('the key holding the values (YAML); values.yaml unless given'),
  targetPath: z
    .string()
    .min(1)
    .max(1024)
    .optional()
    .describe('the values path the key\'s text is set at, as `helm --set` names it (a.b[0].c); the whole key is a values document when omitted'),
  optional: z.boolean().optional().describe('a missing object or key is skipped instead of an error'),
});

export const helmSpecSchema = z.object({
  chart: z
    .string()
    .min(1)
    .max(1024)
    .refine(isChartPath, { message: CHART_PATH_MESSAGE })
    .meta(celRule(`!self.split('/').exists(s, s == '..' || s == '.' || s == '')`, CHART_PATH_MESSAGE))
    .optional()
    .describe('the chart\'s folder inside the source; default its root, or the one top-level folder holding Chart.yaml'),
  releaseName: z
    .string()
    .max(53)
    .refine((s) => new RegExp(RELEASE_NAME_PATTERN).test(s), { message: RELEASE_NAME_MESSAGE })
    .meta(celRule(`self.matches('${RELEASE_NAME_PATTERN}')`, RELEASE_NAME_MESSAGE))
    .optional()
    .describe('.Release.Name; the sync\'s name unless given'),
  namespace: namespaceName()
    .optional()
    .describe('.Release.Namespace, also given to namespaced objects that name none; defaultNamespace, else the sync\'s namespace, unless given'),
  values: z.record(z.string(), z.unknown()).optional().describe('values, merged over the chart\'s and valuesFrom\'s'),
  valuesFrom: z
    .array(valuesFromSchema)
    .max(50)
    .optional()
    .describe('values read from ConfigMaps and Secrets, merged in order, before values'),
  includeCRDs: z.boolean().optional().describe('apply the chart\'s crds/ first (default true); they are never pruned'),
  kubeVersion: z
    .string()
    .max(64)
    .refine((s) => new RegExp(KUBE_VERSION_PATTERN).test(s), { message: KUBE_VERSION_MESSAGE })
    .meta(celRule(`self.matches('${KUBE_VERSION_PATTERN}')`, KUBE_VERSION_MESSAGE))
    .optional()
    .describe('.Capabilities.KubeVersion; the target cluster\'s unless given'),
  apiVersions: z
    .array(z.string().min(1).max(316))
    .max(2000)
    .optional()
    .describe('.Capabilities.APIVersions (group/version or group/version/Kind); the target cluster\'s discovery unless given'),
});

export type HelmSpec = z.infer<typeof helmSpecSchema>;
export type ValuesFrom = z.infer<typeof valuesFromSchema>;
