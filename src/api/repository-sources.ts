import { z } from 'zod';
import { celRule, matchingString } from './cel.js';
import { dataKey, objectName } from './names.js';

/**
 * `source.git` and `source.oci`: a user's Git repository or OCI artifact,
 * fetched by the operator itself (API.md "The sync spec"; docs/adr/0014).
 */

const name = objectName();

const secretRef = z.object({ name: name.describe('name of a Secret in the same namespace') });
const caSecretRef = z
  .object({
    name: name.describe('name of a Secret in the same namespace'),
    key: dataKey().optional().describe('the key holding the PEM bundle; ca.crt unless given'),
  })
  .describe('a Secret holding the CA bundle (PEM) to trust for https; key ca.crt unless given');
const webhookSecretRef = z
  .object({
    name: name.describe('name of a Secret in the same namespace'),
    key: dataKey().optional().describe('the key holding the token; token unless given'),
  })
  .describe('a Secret holding the token of `syncprims run --webhook-addr`: POST /hooks/<token> with a push event naming this URL makes the sync look at once');

/** A Git URL: https://, http://, ssh://, or scp-like `user@host:path`. */
const GIT_URL_PATTERN = '^(https?://[^@/]+/.+|ssh://[^/]+/.+|[A-Za-z0-9._-]+@[^/:]+:.+)$';
const GIT_URL_MESSAGE = 'must be an https://, http:// or ssh:// URL, or user@host:path, without credentials (put them in secretRef)';
const COMMIT_PATTERN = '^[0-9a-f]{40}$';
const COMMIT_MESSAGE = 'must be a full commit hash: 40 lowercase hex digits';
const DIGEST_PATTERN = '^sha256:[0-9a-f]{64}$';
const DIGEST_MESSAGE = 'must be sha256: followed by 64 lowercase hex digits';
const OCI_URL_PATTERN = '^oci://[^/@]+/[a-z0-9]+([._/-][a-z0-9]+)*$';
const OCI_URL_MESSAGE = 'must be oci://host[:port]/repository (lowercase repository path, no tag or digest: use ref)';

const refName = z.string().min(1).max(255);
const semverRange = z.string().min(1).max(256);

const GIT_REF_MESSAGE = 'ref may set at most one of branch, tag and semver (commit alone, or with a branch or tag)';

export const gitRefSchema = z
  .object({
    branch: refName.optional().describe('a branch: its tip'),
    tag: refName.optional().describe('a tag'),
    semver: semverRange.optional().describe('the highest tag matching this semver range (>=1.2 <2, ~1.4, ^2); never a pre-release unless the range names one'),
    commit: matchingString(COMMIT_PATTERN, COMMIT_MESSAGE, 40).optional().describe('a commit; with a branch or tag, that ref names it in the revision'),
  })
  .refine((r) => [r.branch, r.tag, r.semver].filter((v) => v !== undefined).length <= 1 && !(r.semver !== undefined && r.commit !== undefined), {
    message: GIT_REF_MESSAGE,
  })
  .meta(celRule(`[has(self.branch), has(self.tag), has(self.semver)].filter(x, x).size() <= 1 && !(has(self.semver) && has(self.commit))`, GIT_REF_MESSAGE));

export const gitSourceSchema = z.object({
  url: matchingString(GIT_URL_PATTERN, GIT_URL_MESSAGE, 4096).describe('the repository: https://host/org/repo.git, ssh://git@host/org/repo.git or git@host:org/repo.git'),
  ref: gitRefSchema.optional().describe("what to fetch; the remote's HEAD when omitted"),
  secretRef: secretRef
    .optional()
    .describe('a Secret with username and password (basic auth) or bearerToken (https), or identity and known_hosts (ssh: a host key not in known_hosts is refused)'),
  caSecretRef: caSecretRef.optional(),
  webhookSecretRef: webhookSecretRef.optional(),
});

const OCI_REF_MESSAGE = 'ref may set at most one of tag and semver (digest alone, or with a tag)';

export const ociRefSchema = z
  .object({
    tag: refName.optional().describe('a tag'),
    semver: semverRange.optional().describe('the highest tag matching this semver range; never a pre-release unless the range names one'),
    digest: matchingString(DIGEST_PATTERN, DIGEST_MESSAGE, 71).optional().describe('a manifest digest; with a tag, the tag names it in the revision'),
  })
  .refine((r) => !(r.tag !== undefined && r.semver !== undefined) && !(r.semver !== undefined && r.digest !== undefined), { message: OCI_REF_MESSAGE })
  .meta(celRule(`!(has(self.tag) && has(self.semver)) && !(has(self.semver) && has(self.digest))`, OCI_REF_MESSAGE));

export const LAYER_OPERATIONS = ['extract', 'copy'] as const;

export const ociSourceSchema = z.object({
  url: matchingString(OCI_URL_PATTERN, OCI_URL_MESSAGE, 4096).describe('the artifact\'s repository: oci://host[:port]/repository'),
  ref: ociRefSchema.optional().describe('what to fetch; the tag latest when omitted'),
  layerSelector: z
    .object({
      mediaType: z.string().min(1).max(255).optional().describe("the layer's media type; Flux's content layer, else the first tar+gzip layer, when omitted"),
      operation: z.enum(LAYER_OPERATIONS).optional().describe('extract (default): the layer is a tarball of manifests; copy: the layer is one file'),
    })
    .optional()
    .describe('which layer holds the manifests'),
  secretRef: secretRef.optional().describe('a kubernetes.io/dockerconfigjson Secret with the registry\'s credentials'),
  caSecretRef: caSecretRef.optional(),
  insecure: z.boolean().optional().describe('plain HTTP to the registry (as Flux\'s insecure)'),
  verify: z
    .object({
      provider: z.enum(['cosign']).describe('cosign: a signature made with a key pair (cosign sign --key)'),
      secretRef: secretRef.describe('a Secret whose keys ending in .pub are the cosign public keys (PEM) to trust'),
    })
    .optional()
    .describe('the artifact is used only when its signature holds for one of the keys (condition SourceVerified)'),
  webhookSecretRef: webhookSecretRef.optional(),
});

export type GitSource = z.infer<typeof gitSourceSchema>;
export type OciSource = z.infer<typeof ociSourceSchema>;
