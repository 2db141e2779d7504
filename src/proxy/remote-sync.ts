// What a ProxySync wants in its remote cluster, as pure functions: where the
// remote Sync lives and what it is made of (the template), the copies of the
// related objects (the ConfigMaps and Secrets the template's source names),
// and the mark that asks the remote Sync to handle their content. Below the
// controllers: the ProxySync reconciler (controllers/proxysync.ts, which does
// the I/O) and the CLI's build, diff and events read the same rules.
import { createHash } from 'node:crypto';
import { API_VERSION } from '../api/kinds.js';
import { RECONCILE_REQUESTED_AT_ANNOTATION } from '../api/marks.js';
import type { ProxySyncSpec } from '../api/objects.js';
import { objectId } from '../apply/inventory.js';
import { ownerMarks, ownerOf } from '../apply/owner.js';
import { CORE, objectPath, type KubeObject } from '../kube/resources.js';

/** Where the remote Sync lives: the template's name and namespace, else the ProxySync's. */
export function remoteLocation(obj: KubeObject, spec: ProxySyncSpec): { namespace: string; name: string } {
  return {
    namespace: spec.template.metadata?.namespace ?? obj.metadata.namespace ?? '',
    name: spec.template.metadata?.name ?? obj.metadata.name ?? '',
  };
}

/** The labels that say an object in the remote cluster is this ProxySync's, from this managing cluster. */
export function proxyMarks(obj: KubeObject, origin: string): Record<string, string> {
  return ownerMarks(ownerOf(obj, 'ProxySync', origin));
}

/** A ConfigMap or Secret of the managing cluster, as read (data base64 for a Secret). */
export interface RelatedObject {
  kind: 'ConfigMap' | 'Secret';
  name: string;
  type?: string;
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

/** The copy of a related object in the remote namespace, marked as ours. */
export function relatedCopy(related: RelatedObject, namespace: string, marks: Record<string, string>): KubeObject {
  const copy: KubeObject = { apiVersion: 'v1', kind: related.kind, metadata: { name: related.name, namespace, labels: { ...marks } } };
  const body = copy as unknown as Record<string, unknown>;
  if (related.type) body.type = related.type;
  body.data = related.data ?? {};
  if (related.binaryData) body.binaryData = related.binaryData;
  return copy;
}

/** Whether a live copy carries what `desired` says (its data and our marks). */
export function copyMatches(live: KubeObject | undefined, desired: KubeObject): boolean {
  if (!live) return false;
  const l = live as unknown as Record<string, unknown>;
  const d = desired as unknown as Record<string, unknown>;
  return contains(live.metadata.labels ?? {}, desired.metadata.labels ?? {}) && equalJson(l.data ?? {}, d.data ?? {}) && equalJson(l.binaryData ?? {}, d.binaryData ?? {});
}

/** The path of a related object (a ConfigMap or Secret the template names) in `namespace`. */
export function relatedPath(kind: 'ConfigMap' | 'Secret', name: string, namespace: string): string {
  return objectPath(kind === 'Secret' ? CORE.secrets : CORE.configMaps, name, namespace);
}

/**
 * The account a ProxySync reads its related objects as, in its own namespace
 * of the managing cluster: the template's service account, else
 * `--default-service-account` (the remote Sync applies as the same name in
 * its cluster); undefined: the operator reads them.
 */
export function relatedAccount(spec: ProxySyncSpec, defaultServiceAccount: string | undefined): string | undefined {
  return spec.template.spec.serviceAccountName ?? defaultServiceAccount;
}

/**
 * The account a ProxySync writes as in its remote cluster (the remote Sync,
 * the copies, their removal), in the namespace of the ProxySync's own name
 * there: when the operator impersonates (`--default-service-account`, which
 * `install --multi-tenant` sets), the template's service account, else that
 * default, the account the remote Sync then applies as; undefined otherwise
 * (the kubeconfig's own identity writes, as the one who registered the
 * cluster decided).
 */
export function remoteWriter(spec: ProxySyncSpec, defaultServiceAccount: string | undefined): string | undefined {
  return defaultServiceAccount === undefined ? undefined : (spec.template.spec.serviceAccountName ?? defaultServiceAccount);
}

/**
 * What a ProxySync may not ask for when the operator impersonates (see
 * remoteWriter), as the InvalidSpec message; undefined when it asks for
 * nothing of the kind. A tenant's namespace is, in every remote cluster,
 * the namespace of the same name (as for RemoteSync): the remote Sync names
 * an account of its own namespace, so one in another namespace would run
 * as an account that namespace's tenant owns. And it takes over nothing it
 * did not make (`adopt`).
 */
export function tenancyProblem(obj: KubeObject, spec: ProxySyncSpec, defaultServiceAccount: string | undefined): string | undefined {
  if (defaultServiceAccount === undefined) return undefined;
  const home = obj.metadata.namespace ?? '';
  const mode = `the operator impersonates (--default-service-account ${defaultServiceAccount}: the multi-tenant mode)`;
  const { namespace } = remoteLocation(obj, spec);
  if (namespace !== home) {
    return `spec.template.metadata.namespace ${namespace}: when ${mode}, a ProxySync of namespace ${home} keeps its remote Sync in the namespace ${home} of the remote cluster, written as its account there; the service accounts of ${namespace} are not this namespace's: remove spec.template.metadata.namespace, or make the ProxySync in ${namespace}`;
  }
  if (spec.adopt === true) {
    return `spec.adopt: true is refused when ${mode}: a tenant takes over nothing in the remote cluster it did not make; remove spec.adopt (an object there without syncprims owner labels is then reported as an OwnershipConflict and left alone)`;
  }
  return undefined;
}

/** A ConfigMap or Secret a template names, with the field that names it; an `optional` one that is missing is not copied. */
export interface RelatedRef {
  kind: 'ConfigMap' | 'Secret';
  name: string;
  field: string;
  optional?: boolean;
}

/**
 * The ConfigMaps and Secrets a template's source names, and its chart's
 * `valuesFrom` (copied beside the remote Sync, which reads them there), each
 * once, with the field that first names it.
 */
export function relatedRefs(spec: ProxySyncSpec): RelatedRef[] {
  const { source, helm } = spec.template.spec;
  const named: RelatedRef[] = [];
  const field = 'spec.template.spec.source';
  const add = (kind: RelatedRef['kind'], name: string | undefined, at: string, more: Pick<RelatedRef, 'optional'> = {}): void => {
    if (name === undefined || named.some((n) => n.kind === kind && n.name === name)) return;
    named.push({ kind, name, field: at, ...more });
  };
  add('ConfigMap', source.configMap?.name, `${field}.configMap`);
  add('Secret', source.secret?.name, `${field}.secret`);
  for (const [at, ref] of sourceSecretRefs(source)) add('Secret', ref?.name, `${field}.${at}`);
  for (const [i, v] of (helm?.valuesFrom ?? []).entries()) add(v.kind, v.name, `spec.template.spec.helm.valuesFrom[${i}]`, { optional: v.optional });
  return named;
}

/** The Secrets a source names beside its own (`http`, `helmRepository`, `git`, `oci`), by the field under spec.source. */
function sourceSecretRefs(source: ProxySyncSpec['template']['spec']['source']): [string, { name: string } | undefined][] {
  const { http, helmRepository, git, oci } = source;
  return [
    ['http.caSecretRef', http?.caSecretRef],
    ['http.headersSecretRef', http?.headersSecretRef],
    ['helmRepository.caSecretRef', helmRepository?.caSecretRef],
    ['helmRepository.secretRef', helmRepository?.secretRef],
    ['git.secretRef', git?.secretRef],
    ['git.caSecretRef', git?.caSecretRef],
    ['oci.secretRef', oci?.secretRef],
    ['oci.caSecretRef', oci?.caSecretRef],
    ['oci.verify.secretRef', oci?.verify?.secretRef],
  ];
}

/** A digest of the copies' content; undefined when there are none. */
export function copiesDigest(copies: KubeObject[]): string | undefined {
  if (copies.length === 0) return undefined;
  const h = createHash('sha256');
  for (const c of [...copies].sort((a, b) => objectId(a).localeCompare(objectId(b)))) {
    const body = c as unknown as Record<string, unknown>;
    h.update(JSON.stringify([objectId(c), body.type ?? '', body.data ?? {}, body.binaryData ?? {}]));
  }
  return h.digest('hex');
}

/**
 * The mark the remote Sync is asked to echo (`reconcile-requested-at`, echoed
 * in `status.lastHandledReconcileAt`): from the digest of the related
 * objects' content and the ProxySync's own reconcile request. Their change
 * bumps no generation there, so this is how we know it has handled them.
 * Undefined when there is nothing to mark.
 */
export function remoteMark(digest: string | undefined, requestedAt: string | undefined): string | undefined {
  if (digest === undefined && requestedAt === undefined) return undefined;
  return `syncprims:${createHash('sha256').update(JSON.stringify([digest ?? '', requestedAt ?? ''])).digest('hex').slice(0, 16)}`;
}

/**
 * The remote Sync: the template's spec, its labels and annotations, our marks,
 * and the mark to echo. With `--default-service-account`, a template that names
 * no service account gets it, so that the remote Sync applies as that account
 * of its namespace in the remote cluster.
 */
export function desiredRemoteSync(obj: KubeObject, spec: ProxySyncSpec, origin: string, mark: string | undefined, defaultServiceAccount?: string): KubeObject {
  const { namespace, name } = remoteLocation(obj, spec);
  const annotations: Record<string, string> = { ...spec.template.metadata?.annotations };
  if (mark !== undefined) annotations[RECONCILE_REQUESTED_AT_ANNOTATION] = mark;
  const sync: KubeObject = {
    apiVersion: API_VERSION,
    kind: 'Sync',
    metadata: { name, namespace, labels: { ...spec.template.metadata?.labels, ...proxyMarks(obj, origin) } },
    spec: (defaultServiceAccount && !spec.template.spec.serviceAccountName
      ? { ...spec.template.spec, serviceAccountName: defaultServiceAccount }
      : spec.template.spec) as Record<string, unknown>,
  };
  if (Object.keys(annotations).length > 0) sync.metadata.annotations = annotations;
  return sync;
}

/**
 * Whether `live` already carries every field `desired` sets (its spec, labels
 * and annotations): then there is nothing to apply. Fields the template does
 * not set (defaults, another manager's) are not fought over. The one rule for
 * what the operator keeps from a template: a ProxySync's remote Sync, and a
 * FleetSync's children (a server-side apply could not remove another's field
 * anyway: it is theirs).
 */
export function carriesAll(live: KubeObject | undefined, desired: KubeObject): boolean {
  if (!live) return false;
  return (
    contains(live.metadata.labels ?? {}, desired.metadata.labels ?? {}) &&
    contains(live.metadata.annotations ?? {}, desired.metadata.annotations ?? {}) &&
    contains(live.spec ?? {}, desired.spec ?? {})
  );
}

/** Whether `have` holds everything `want` sets: objects by key, arrays element by element, the rest equal. */
export function contains(have: unknown, want: unknown): boolean {
  if (Array.isArray(want)) {
    return Array.isArray(have) && have.length === want.length && want.every((w, i) => contains(have[i], w));
  }
  if (want !== null && typeof want === 'object') {
    if (have === null || typeof have !== 'object' || Array.isArray(have)) return false;
    const h = have as Record<string, unknown>;
    return Object.entries(want as Record<string, unknown>).every(([k, v]) => v === undefined || contains(h[k], v));
  }
  return have === want;
}

/** Whether the two hold the same (each contains the other). */
export function equalJson(a: unknown, b: unknown): boolean {
  return contains(a, b) && contains(b, a);
}
