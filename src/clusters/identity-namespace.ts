// Where an identity most likely works, known from its kubeconfig before any
// request: a ServiceAccount's own namespace. A tenant's ServiceAccount is
// typically granted a Role there and nothing cluster-wide, so watching the
// objects it applies there cluster-wide first would only buy a 403.
import type { KubeConfig } from '../kube/kubeconfig.js';
import { impersonationOf } from '../kube/kubeconfig-impersonation.js';

const SUBJECT = /^system:serviceaccount:([a-z0-9]([-a-z0-9]*[a-z0-9])?):[^:]+$/;

/**
 * The namespace of the ServiceAccount the kubeconfig's current user acts as:
 * the one it impersonates (`as:`; none when it impersonates another user),
 * else the one whose token it holds (the token's `sub` claim, `system:serviceaccount:<ns>:<name>`,
 * read without verifying it: a hint, not a credential check; the token
 * itself is neither kept nor logged). Undefined for any other user
 * (certificates, basic auth, exec plugins, tokens that are not JWTs).
 */
export function serviceAccountNamespaceOf(kc: KubeConfig): string | undefined {
  const impersonated = impersonationOf(kc.getCurrentUser());
  if (impersonated) return SUBJECT.exec(impersonated.user)?.[1];
  const token = kc.getCurrentUser()?.token;
  const payload = token?.split('.')[1];
  if (!payload || token!.split('.').length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown };
    return typeof claims.sub === 'string' ? SUBJECT.exec(claims.sub)?.[1] : undefined;
  } catch {
    return undefined;
  }
}
