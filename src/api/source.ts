import { z } from 'zod';
import { celRule, exactlyOneOf, matchingString } from './cel.js';
import { apiVersion, dataKey, kindName, objectName } from './names.js';
import { gitSourceSchema, ociSourceSchema } from './repository-sources.js';

/** Where a sync's manifests come from: exactly one of the forms (API.md "The sync spec"). */

export const SOURCE_FORMS = ['inline', 'configMap', 'secret', 'http', 'artifact', 'helmRepository', 'git', 'oci'] as const;
export type SourceForm = (typeof SOURCE_FORMS)[number];

const name = objectName();

/** `{name, key?}`: one key, or every key in key order. */
export const keyRefSchema = z.object({
  name: name.describe('name of the object, in the same namespace as the sync'),
  key: dataKey().optional().describe('the key to read; every key in key order when omitted'),
});

export const secretRefSchema = z.object({ name: name.describe('name of a Secret in the same namespace') });

const HTTP_URL_MESSAGE = 'must be an http:// or https:// URL';
const DIGEST_PATTERN = '^sha256:[0-9a-f]{64}$';
const DIGEST_MESSAGE = 'must be sha256: followed by 64 lowercase hex digits';

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

export const httpSourceSchema = z.object({
  url: z
    .string()
    .max(4096)
    .refine(isHttpUrl, { message: HTTP_URL_MESSAGE })
    .meta(celRule(`self.startsWith('http://') || self.startsWith('https://')`, HTTP_URL_MESSAGE))
    .describe('a .yaml, .yml or .json file, or a .tar.gz or .tgz archive'),
  digest: matchingString(DIGEST_PATTERN, DIGEST_MESSAGE, 71)
    .optional()
    .describe('sha256:<hex> of the bytes fetched; verified'),
  caSecretRef: keyRefSchema
    .optional()
    .describe('a Secret holding the CA bundle (PEM) to trust for https; key ca.crt unless given'),
  headersSecretRef: secretRefSchema
    .optional()
    .describe('a Secret whose keys and values are sent as HTTP headers'),
});

export const artifactSourceSchema = z.object({
  apiVersion: apiVersion().describe('e.g. source.toolkit.fluxcd.io/v1'),
  kind: kindName().describe('GitRepository, OCIRepository, Bucket or ExternalArtifact'),
  name: name.describe('name of the Flux source object, in the same namespace'),
});

export const helmRepositorySourceSchema = z.object({
  url: z
    .string()
    .max(4096)
    .refine(isHttpUrl, { message: HTTP_URL_MESSAGE })
    .meta(celRule(`self.startsWith('http://') || self.startsWith('https://')`, HTTP_URL_MESSAGE))
    .describe('the repository: its index.yaml is read from <url>/index.yaml'),
  chart: name.describe('the chart\'s name in the repository'),
  version: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe('an exact version or a semver range (>=1.2 <2, ~1.4, ^2); the newest stable version when omitted'),
  caSecretRef: keyRefSchema
    .optional()
    .describe('a Secret holding the CA bundle (PEM) to trust for https; key ca.crt unless given'),
  secretRef: secretRefSchema
    .optional()
    .describe('a Secret with username and password (basic auth), or token (bearer), sent to the repository'),
});

const SOURCE_MESSAGE = `source must set exactly one of ${SOURCE_FORMS.join(', ')}`;

export const sourceSchema = z
  .object({
    inline: z
      .array(z.record(z.string(), z.unknown()))
      .optional()
      .describe('Kubernetes objects, as they are'),
    configMap: keyRefSchema.optional().describe('a ConfigMap holding multi-document YAML or JSON'),
    secret: keyRefSchema.optional().describe('a Secret holding multi-document YAML or JSON'),
    http: httpSourceSchema.optional().describe('a file or archive fetched over HTTP(S)'),
    artifact: artifactSourceSchema.optional().describe('the artifact of a Flux source object'),
    helmRepository: helmRepositorySourceSchema.optional().describe('a chart of a Helm repository (with spec.helm)'),
    git: gitSourceSchema.optional().describe('a Git repository: one commit\'s tree'),
    oci: ociSourceSchema.optional().describe('an OCI artifact (Flux\'s format, or a tarball layer)'),
  })
  .superRefine((source, ctx) => {
    const set = SOURCE_FORMS.filter((form) => source[form] !== undefined);
    if (set.length !== 1) {
      const found = set.length ? ` (found ${set.join(', ')})` : '';
      ctx.addIssue({ code: 'custom', message: `${SOURCE_MESSAGE}${found}` });
    }
  })
  .meta(celRule(exactlyOneOf(SOURCE_FORMS), SOURCE_MESSAGE))
  .describe('where the manifests come from: exactly one of the forms');

export type KeyRef = z.infer<typeof keyRefSchema>;
export type HttpSource = z.infer<typeof httpSourceSchema>;
export type ArtifactSource = z.infer<typeof artifactSourceSchema>;
export type HelmRepositorySource = z.infer<typeof helmRepositorySourceSchema>;
export type SyncSource = z.infer<typeof sourceSchema>;

/** The one form a valid source uses. */
export function sourceForm(source: SyncSource): SourceForm {
  const form = SOURCE_FORMS.find((f) => source[f] !== undefined);
  if (!form) throw new Error(SOURCE_MESSAGE);
  return form;
}
