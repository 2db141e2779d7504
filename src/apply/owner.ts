// Who owns an object, decided here only: the owner labels a sync puts on
// what it applies (written and read), the owner a sync object is, and the
// rule that keeps an object from a prune. The engine, the owned-object
// cache, ProxySync, `tree` and `diff` all ask this module.
import { ORIGIN_LABEL, OWNER_KIND_LABEL, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL, PRUNE_ANNOTATION, PRUNE_DISABLED } from '../api/marks.js';
import type { KubeObject } from '../kube/resources.js';

/** The sync that owns what the engine applies, as its labels say. */
export interface Owner {
  kind: string;
  namespace: string;
  name: string;
  /**
   * In a remote cluster: the managing cluster (`--cluster-id`) the sync is
   * in, which every object it applies there carries as its origin label. An
   * object of another origin is not ours, whatever its owner labels say (two
   * managing clusters may each have a RemoteSync of the same namespace and
   * name). Unset: the origin is not looked at (the home cluster).
   */
  origin?: string;
}

/** The keys of the owner labels, in the order they are written. */
export const OWNER_LABEL_KEYS: readonly string[] = [OWNER_KIND_LABEL, OWNER_NAMESPACE_LABEL, OWNER_NAME_LABEL];

/** The label selector of every object some sync owns. */
export const ANY_OWNER_SELECTOR = OWNER_KIND_LABEL;

/** `Kind/namespace/name`. */
export function ownerKey(owner: Owner): string {
  return `${owner.kind}/${owner.namespace}/${owner.name}`;
}

/**
 * The owner a sync object is (`kind`: where the object read may lack its
 * kind, as list items do); with `origin`, in a remote cluster: only objects
 * of that managing cluster are its (see Owner.origin). The one place the
 * owner of a sync's objects is made, for the operator, `diff` and `tree`.
 */
export function ownerOf(sync: KubeObject, kind: string = sync.kind, origin?: string): Owner {
  const owner: Owner = { kind, namespace: sync.metadata.namespace ?? '', name: sync.metadata.name ?? '' };
  if (origin !== undefined) owner.origin = origin;
  return owner;
}

/** The owner a sync's key (`namespace/name`) names. */
export function ownerOfKey(kind: string, key: string): Owner {
  const [namespace = '', name = ''] = key.split('/');
  return { kind, namespace, name };
}

/** The labels an object the owner applies carries: its owner labels, and its origin where it has one (a remote cluster). */
export function ownerMarks(owner: Owner): Record<string, string> {
  return owner.origin === undefined ? ownerLabels(owner) : { ...ownerLabels(owner), [ORIGIN_LABEL]: owner.origin };
}

/** The owner labels that say `owner` applied an object. */
export function ownerLabels(owner: Owner): Record<string, string> {
  return { [OWNER_KIND_LABEL]: owner.kind, [OWNER_NAMESPACE_LABEL]: owner.namespace, [OWNER_NAME_LABEL]: owner.name };
}

/** `syncprims.dev/owner-kind=...,owner-namespace=...,owner-name=...`. */
export function ownerSelector(owner: Owner): string {
  return Object.entries(ownerLabels(owner))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** The values of an object's owner labels as they are, a missing one empty. */
export function ownerLabelValues(obj: KubeObject): Owner {
  const l = obj.metadata.labels ?? {};
  return { kind: l[OWNER_KIND_LABEL] ?? '', namespace: l[OWNER_NAMESPACE_LABEL] ?? '', name: l[OWNER_NAME_LABEL] ?? '' };
}

/** The owner an object's labels name, when all three are set; undefined otherwise. */
export function labelledOwner(obj: KubeObject): Owner | undefined {
  const owner = ownerLabelValues(obj);
  return owner.kind && owner.namespace && owner.name ? owner : undefined;
}

/** `Kind/namespace/name` of the sync the owner labels name (a missing namespace or name as empty), or empty when there is no owner kind. */
export function ownerLabelOf(obj: KubeObject): string {
  const owner = ownerLabelValues(obj);
  return owner.kind ? ownerKey(owner) : '';
}

/** Whether the object carries no owner labels: applying adopts it. */
export function unowned(obj: KubeObject): boolean {
  return ownerLabelOf(obj) === '';
}

/** The managing cluster an object in a remote cluster was applied from (its origin label), if any. */
export function originOf(obj: KubeObject): string | undefined {
  return obj.metadata.labels?.[ORIGIN_LABEL];
}

export function ownedBy(obj: KubeObject, owner: Owner): boolean {
  return ownerLabelOf(obj) === ownerKey(owner) && (owner.origin === undefined || originOf(obj) === owner.origin);
}

/**
 * Who holds `obj`, as a message to `owner` says it: its owner labels, and the
 * managing cluster it came from when that is not `owner`'s (else the same
 * owner's name could read as a conflict with itself).
 */
export function holderText(obj: KubeObject, owner: Owner): string {
  const origin = originOf(obj);
  const elsewhere = owner.origin !== undefined && origin !== undefined && origin !== owner.origin;
  return `${ownerLabelOf(obj) || 'none'}${elsewhere ? ` (applied from managing cluster ${origin})` : ''}`;
}

/** Owned by another sync. An object without owner labels is adopted, not a conflict. */
export function ownedByOther(obj: KubeObject, owner: Owner): boolean {
  return !unowned(obj) && !ownedBy(obj, owner);
}

/** The key of the sync an object's owner labels name (all three set), or empty. */
export function holderOf(obj: KubeObject | undefined): string {
  const owner = obj && labelledOwner(obj);
  return owner ? ownerKey(owner) : '';
}

/** Why `existing` is not deleted by `owner`'s prune; undefined: it may be (or is gone). */
export function keptFromPrune(existing: KubeObject | undefined, owner: Owner): string | undefined {
  if (!existing) return undefined;
  if (!ownedBy(existing, owner)) return `not ours (owner: ${holderText(existing, owner)})`;
  if (existing.metadata.annotations?.[PRUNE_ANNOTATION] === PRUNE_DISABLED) return `${PRUNE_ANNOTATION}: ${PRUNE_DISABLED}`;
  return undefined;
}
