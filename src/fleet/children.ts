// What a FleetSync wants for one cluster: its child (a ProxySync or a
// RemoteSync), named, labelled, owned and with its dependencies per cluster.
// Pure; the reconciler (controllers/fleetsync.ts) applies it.
import { createHash } from 'node:crypto';
import type { ClusterRef, KubeConfigRef } from '../api/cluster.js';
import type { FleetChildKind, FleetOverride, FleetSyncSpec, FleetTemplate } from '../api/fleet.js';
import { API_VERSION } from '../api/kinds.js';
import { boundedName } from '../api/names.js';
import { CLUSTER_LABEL } from '../api/marks.js';
import type { DependencyRef } from '../api/sync-spec.js';
import { selectsCluster, type InventoryCluster } from '../clusters/inventory.js';
import { canonicalJson } from '../kube/canonical-json.js';
import type { KubeObject } from '../kube/resources.js';

/** On each child: the FleetSync that made it, and the cluster it is for. */
export const FLEETSYNC_LABEL = 'syncprims.dev/fleetsync';
/** The inventory's label, on a child too: the cluster it is for. */
export const FLEET_CLUSTER_LABEL = CLUSTER_LABEL;
/** On each child: the template revision it was given. */
export const FLEET_REVISION_ANNOTATION = 'syncprims.dev/fleet-revision';
/** On each child: when it was given that revision (for a rollout's progress deadline). */
export const FLEET_ADMITTED_ANNOTATION = 'syncprims.dev/fleet-admitted-at';
/** On each child of a FleetSync with `substitute`: the digest of the values its template was given (fleet/cluster-template.ts). */
export const FLEET_VALUES_ANNOTATION = 'syncprims.dev/fleet-values';
/** The field manager of the children's server-side applies. */
export const FLEET_FIELD_MANAGER = 'syncprims-fleet';

/** A cluster as a child needs it: its name, and the fields that name it in a sync's spec. */
export interface FleetCluster {
  name: string;
  ref: { kubeConfig?: KubeConfigRef; clusterRef?: ClusterRef };
}

/** The FleetSync a child is made for. */
export interface FleetOwner {
  namespace: string;
  name: string;
  uid: string;
  spec: FleetSyncSpec;
  /** The revisions the operator recorded (its status' `revisions`, and the template's own): the only ones it trusts (fleet/revisions.ts). */
  recorded?: readonly string[];
}

/** What a revision holds: what each child of that revision is made from (the kind, the template, and the overrides and substitution given to it per cluster). */
export interface RevisionData {
  kind: FleetChildKind;
  template: FleetTemplate;
  overrides?: FleetOverride[];
  substitute?: Record<string, never>;
}

/** The revision's part of a FleetSync's spec: its kind and template, and its overrides and substitution when it has them. */
export function revisionDataOf(spec: Pick<FleetSyncSpec, 'kind' | 'template' | 'overrides' | 'substitute'>): RevisionData {
  const data: RevisionData = { kind: spec.kind, template: spec.template };
  if (spec.overrides !== undefined && spec.overrides.length > 0) data.overrides = spec.overrides;
  if (spec.substitute !== undefined) data.substitute = spec.substitute;
  return data;
}

/**
 * The revision: the first 16 hex digits of the SHA-256 of `revisionDataOf`,
 * as canonical JSON (of the kind and template alone, as before overrides and
 * substitution were, when it has neither: an upgrade rolls nothing).
 */
export function templateRevision(spec: Pick<FleetSyncSpec, 'kind' | 'template' | 'overrides' | 'substitute'>): string {
  return createHash('sha256').update(canonicalJson(revisionDataOf(spec))).digest('hex').slice(0, 16);
}

/** `<fleetsync>-<cluster>`, or past 63 characters a prefix of it and a hash of the whole, so that two clusters never share a name. */
export function childName(fleet: string, cluster: string): string {
  return boundedName(`${fleet}-${cluster}`);
}

/**
 * What a child waits for of a FleetSync its FleetSync depends on: that
 * FleetSync's child in the same cluster (of the kind its children are), or,
 * where that FleetSync does not select the cluster (a pull cluster that an
 * `install` FleetSync of RemoteSyncs leaves out), that FleetSync as a whole.
 */
export type DependencyTarget = FleetChildKind | 'FleetSync';

/**
 * What `cluster`'s child waits for of the FleetSync whose spec is `spec`:
 * its child there (of the kind its children are; ProxySync when the
 * FleetSync is not there yet, so that the child waits on one NotFound), or
 * the FleetSync itself when its selection leaves the cluster out.
 */
export function dependencyTarget(spec: Partial<FleetSyncSpec> | undefined, cluster: InventoryCluster): DependencyTarget {
  if (spec?.clusters && !selectsCluster(cluster, spec.clusters)) return 'FleetSync';
  return spec?.kind ?? 'ProxySync';
}

/**
 * The child's `dependsOn`: an entry of kind FleetSync becomes the same
 * cluster's child of that FleetSync, or that FleetSync itself (`targetOf`
 * says which: see DependencyTarget); the entries of other kinds gate the
 * FleetSync itself, not its children.
 */
export function childDependencies(spec: FleetSyncSpec, cluster: string, targetOf: (namespace: string | undefined, name: string) => DependencyTarget): DependencyRef[] {
  return (spec.dependsOn ?? [])
    .filter((d) => d.kind === 'FleetSync')
    .map((d) => {
      const kind = targetOf(d.namespace, d.name);
      const ref: DependencyRef = { kind, name: kind === 'FleetSync' ? d.name : childName(d.name, cluster), requiredStatus: d.requiredStatus };
      if (d.namespace !== undefined) ref.namespace = d.namespace;
      return ref;
    });
}

/** What a child is given besides its template: its revision, when it took it (RFC 3339), its dependencies, the digest of its values. */
export interface ChildInputs {
  revision: string;
  dependsOn: DependencyRef[];
  admittedAt?: string;
  valuesDigest?: string;
}

/** The child of `owner` for `cluster` (`owner.spec.template`: the cluster's own, its overrides and values in). */
export function desiredChild(owner: FleetOwner, cluster: FleetCluster, { revision, dependsOn, admittedAt, valuesDigest }: ChildInputs): KubeObject {
  const { spec } = owner;
  const kind = spec.kind;
  const annotations: Record<string, string> = { [FLEET_REVISION_ANNOTATION]: revision };
  if (admittedAt !== undefined) annotations[FLEET_ADMITTED_ANNOTATION] = admittedAt;
  if (valuesDigest !== undefined) annotations[FLEET_VALUES_ANNOTATION] = valuesDigest;
  const metadata: KubeObject['metadata'] = {
    name: childName(owner.name, cluster.name),
    namespace: owner.namespace,
    labels: { [FLEETSYNC_LABEL]: owner.name, [FLEET_CLUSTER_LABEL]: cluster.name },
    annotations,
    ownerReferences: [{ apiVersion: API_VERSION, kind: 'FleetSync', name: owner.name, uid: owner.uid, controller: true }],
  };
  const common: Record<string, unknown> = { ...cluster.ref };
  if (spec.suspend !== undefined) common.suspend = spec.suspend;
  if (kind === 'ProxySync') {
    const template = {
      metadata: { ...spec.template.metadata, name: spec.template.metadata?.name ?? owner.name },
      spec: spec.template.spec,
    };
    const childSpec: Record<string, unknown> = { ...common, template };
    if (dependsOn.length > 0) childSpec.dependsOn = dependsOn;
    if (spec.deletionPolicy !== undefined) childSpec.deletionPolicy = spec.deletionPolicy;
    return { apiVersion: API_VERSION, kind, metadata, spec: childSpec };
  }
  // A RemoteSync: the template's labels and annotations are its own, beside ours.
  metadata.labels = { ...spec.template.metadata?.labels, ...metadata.labels };
  metadata.annotations = { ...spec.template.metadata?.annotations, ...metadata.annotations };
  const own = spec.template.spec.dependsOn ?? [];
  const childSpec: Record<string, unknown> = { ...spec.template.spec, ...common };
  if (own.length + dependsOn.length > 0) childSpec.dependsOn = [...own, ...dependsOn];
  if (spec.deletionPolicy !== undefined) childSpec.deletionPolicy = spec.deletionPolicy;
  return { apiVersion: API_VERSION, kind, metadata, spec: childSpec };
}

/**
 * The child `cluster` gets of a revision of kind `kind` whose template for it
 * is `made` (fleet/cluster-template.ts): its dependencies per cluster
 * (`targetOf`: what of the FleetSync an entry names it waits for) and
 * the digest of its values. The one rule the operator and `syncprims build
 * fleetsync/NAME --cluster C` share; returns what the child was given too.
 */
export function clusterChild(
  owner: FleetOwner,
  cluster: FleetCluster,
  made: { template: FleetTemplate; valuesDigest?: string },
  given: { kind: FleetChildKind; revision: string; admittedAt?: string },
  targetOf: (namespace: string, name: string) => DependencyTarget,
): { child: KubeObject; inputs: ChildInputs } {
  const dependsOn = childDependencies(owner.spec, cluster.name, (ns, n) => targetOf(ns ?? owner.namespace, n));
  const inputs: ChildInputs = { revision: given.revision, dependsOn, admittedAt: given.admittedAt, valuesDigest: made.valuesDigest };
  return { child: desiredChild({ ...owner, spec: { ...owner.spec, kind: given.kind, template: made.template } }, cluster, inputs), inputs };
}

/** Whether `live` is the child of the FleetSync with `uid` (its controller ownerReference). */
export function ownedByFleet(live: KubeObject, uid: string): boolean {
  const refs = (live.metadata.ownerReferences ?? []) as { kind?: string; uid?: string }[];
  return refs.some((r) => r.kind === 'FleetSync' && r.uid === uid);
}
