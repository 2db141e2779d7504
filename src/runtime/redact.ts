// What `/debug/cache` shows of Secret values: nothing but their length,
// wherever a Secret is found. A cached Secret (an owned one is cached in
// full, for the no-op decision), and a Secret written inside another object:
// a Sync's `spec.source.inline`, a RemoteSync's, a ProxySync's template, a
// List's items, and the copy of an object that `kubectl apply` keeps in its
// last-applied-configuration annotation.
import type { KubeObject } from '../kube/resources.js';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

type Json = unknown;

const redactValues = (values: Json): Json =>
  values === null || values === undefined
    ? values
    : typeof values === 'object' && !Array.isArray(values)
    ? Object.fromEntries(Object.entries(values).map(([k, v]) => [k, `(redacted: ${String(v).length} characters)`]))
    : '(redacted)';

/** `obj` (a cached object) with every Secret value in it, at any depth, replaced by its length. */
export function redactSecrets(obj: KubeObject): KubeObject {
  return redact(obj) as KubeObject;
}

function redact(node: Json): Json {
  if (Array.isArray(node)) return node.map(redact);
  if (!node || typeof node !== 'object') return node;
  const isSecret = (node as { kind?: unknown }).kind === 'Secret';
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(node)) {
    if (isSecret && (key === 'data' || key === 'stringData')) out[key] = redactValues(value);
    else if (key === 'metadata') out[key] = redactMetadata(value, isSecret);
    else out[key] = redact(value);
  }
  return out;
}

/** A Secret's annotation copy of itself goes; another object's is redacted as the object is. */
function redactMetadata(metadata: Json, ofSecret: boolean): Json {
  const annotations = (metadata as { annotations?: Record<string, string> } | undefined)?.annotations;
  if (!annotations || typeof annotations !== 'object' || annotations[LAST_APPLIED] === undefined) return redact(metadata);
  const { [LAST_APPLIED]: copy, ...others } = annotations;
  return redact({ ...(metadata as object), annotations: ofSecret ? others : { ...others, [LAST_APPLIED]: redactedCopy(copy!) } });
}

function redactedCopy(text: string): string {
  try {
    return JSON.stringify(redact(JSON.parse(text)));
  } catch {
    return `(redacted: not JSON, ${text.length} characters)`;
  }
}
