// Pull mode as pure functions (docs/pull.md). For a ProxySync whose cluster
// is a pull cluster, the remote Sync is written into that cluster's
// assignments namespace in the managing cluster (an assignment: a Sync the
// managing operator never reconciles, PULL_CARRIER_LABEL), named after the
// ProxySync, saying where it goes downstream. The downstream operator keeps a
// Sync of the same spec at home and writes its status back into the
// assignment, its generations told in the assignment's own numbers, so that
// the ProxySync judges it by the same rules as a remote Sync (remoteLag).
import { DNS1123_LABEL, DNS1123_SUBDOMAIN } from '../api/names.js';
import {
  PULL_ASSIGNMENT_LABEL,
  PULL_CARRIER_LABEL,
  PULL_TARGET_ANNOTATION,
  UPSTREAM_GENERATION_ANNOTATION,
} from '../clusters/pull-names.js';
import type { PullTarget } from '../clusters/pull-target.js';
import type { KubeObject } from '../kube/resources.js';

/** Where a ProxySync's remote Sync is kept for a pull cluster: its assignments namespace, the ProxySync's name. */
export function assignmentPlace(obj: KubeObject, pull: PullTarget): { namespace: string; name: string } {
  return { namespace: pull.namespace, name: obj.metadata.name ?? '' };
}

/** The assignment: the remote Sync `desired` (desiredRemoteSync) moved into the assignments namespace, with where it goes. */
export function assignmentOf(desired: KubeObject, obj: KubeObject, pull: PullTarget): KubeObject {
  const { namespace, name } = desired.metadata;
  return {
    ...desired,
    metadata: {
      ...assignmentPlace(obj, pull),
      labels: { ...desired.metadata.labels, [PULL_CARRIER_LABEL]: pull.cluster },
      annotations: { ...desired.metadata.annotations, [PULL_TARGET_ANNOTATION]: `${namespace ?? ''}/${name ?? ''}` },
    },
  };
}

const NAMESPACE = new RegExp(DNS1123_LABEL);
const NAME = new RegExp(DNS1123_SUBDOMAIN);

/** Where an assignment's Sync goes downstream (its annotation), or why it cannot be used. */
export function targetOf(assignment: KubeObject): { namespace: string; name: string } | { problem: string } {
  const target = assignment.metadata.annotations?.[PULL_TARGET_ANNOTATION] ?? '';
  const [namespace = '', name = '', ...rest] = target.split('/');
  if (rest.length > 0 || !NAMESPACE.test(namespace) || !NAME.test(name) || name.length > 63) {
    return { problem: `annotation ${PULL_TARGET_ANNOTATION} is ${JSON.stringify(target)}: want <namespace>/<name> of the Sync to keep` };
  }
  return { namespace, name };
}

/** The downstream Sync an assignment makes: its spec, labels (but the carrier's) and annotations (but the target), marked with the assignment and its generation. */
export function downstreamSync(assignment: KubeObject, target: { namespace: string; name: string }): KubeObject {
  const { [PULL_CARRIER_LABEL]: _carrier, ...labels } = assignment.metadata.labels ?? {};
  const { [PULL_TARGET_ANNOTATION]: _target, ...annotations } = assignment.metadata.annotations ?? {};
  return {
    apiVersion: assignment.apiVersion,
    kind: 'Sync',
    metadata: {
      ...target,
      labels: { ...labels, [PULL_ASSIGNMENT_LABEL]: assignment.metadata.name ?? '' },
      annotations: { ...annotations, [UPSTREAM_GENERATION_ANNOTATION]: String(assignment.metadata.generation ?? 0) },
    },
    spec: assignment.spec,
  };
}

/** The copy of a related object (in the assignments namespace) beside the downstream Sync: its data, its labels, marked with the assignment. */
export function downstreamCopy(copy: KubeObject, target: { namespace: string }, assignment: string): KubeObject {
  const body = copy as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {
    apiVersion: 'v1',
    kind: copy.kind,
    metadata: { name: copy.metadata.name, namespace: target.namespace, labels: { ...copy.metadata.labels, [PULL_ASSIGNMENT_LABEL]: assignment } },
    data: body.data ?? {},
  };
  if (body.type !== undefined) out.type = body.type;
  if (body.binaryData !== undefined) out.binaryData = body.binaryData;
  return out as unknown as KubeObject;
}

/**
 * The status written into the assignment: the downstream Sync's, with every
 * generation it observed told as the assignment's. The downstream Sync's spec
 * is the assignment's of the generation in its annotation: where it observed
 * its own current generation, that is the one; any other generation is 0,
 * which no assignment has (so an older status never passes for the current).
 */
export function upstreamStatus(local: KubeObject): Record<string, unknown> | undefined {
  const status = local.status as Record<string, unknown> | undefined;
  if (!status) return undefined;
  const own = local.metadata.generation;
  const upstream = Number(local.metadata.annotations?.[UPSTREAM_GENERATION_ANNOTATION] ?? 0);
  const told = (g: unknown): number => (typeof g === 'number' && g === own && Number.isSafeInteger(upstream) ? upstream : 0);
  const conditions = Array.isArray(status.conditions)
    ? status.conditions.map((c: unknown) => (c && typeof c === 'object' ? { ...(c as Record<string, unknown>), observedGeneration: told((c as { observedGeneration?: unknown }).observedGeneration) } : c))
    : undefined;
  return { ...status, observedGeneration: told(status.observedGeneration), ...(conditions && { conditions }) };
}

/** Whether an object in the assignments namespace is a copy for `assignment`: it carries the same owner marks. */
export function isCopyOf(copy: KubeObject, assignment: KubeObject, ownerLabels: readonly string[]): boolean {
  const a = assignment.metadata.labels ?? {};
  const c = copy.metadata.labels ?? {};
  return ownerLabels.every((k) => a[k] !== undefined && c[k] === a[k]);
}
