// A FleetSync's template revisions as ControllerRevisions (apps/v1), and
// whether one may be trusted: only a revision this FleetSync's operator wrote
// is used (for the clusters a rollout holds back, by `rollout history` and by
// `rollout undo`). Anyone who may write ControllerRevisions in the namespace
// could otherwise plant content, so a revision is trusted only when its
// controller ownerReference is the FleetSync (by uid) and its data hashes to
// the digest its name and annotation carry. Pure; the operator
// (controllers/fleet-revisions.ts) and the CLI (cli/rollout/) both judge by it.
import { GROUP } from '../api/kinds.js';
import { FLEET_CHILD_KINDS } from '../api/fleet.js';
import type { KubeObject, ResourceInfo } from '../kube/resources.js';
import { FLEET_REVISION_ANNOTATION, templateRevision, type RevisionData } from './children.js';

export const CONTROLLER_REVISIONS: ResourceInfo = { group: 'apps', version: 'v1', kind: 'ControllerRevision', resource: 'controllerrevisions', namespaced: true };

export type { RevisionData } from './children.js';

export interface ControllerRevision extends KubeObject {
  data?: unknown;
  revision?: number;
}

/** `<fleetsync>-<revision>` (a revision is 16 hex digits: at most 80 characters). */
export function revisionName(fleet: string, revision: string): string {
  return `${fleet}-${revision}`;
}

export type RevisionTrust = { trusted: true; digest: string; data: RevisionData } | { trusted: false; why: string };

const DIGEST = /^[0-9a-f]{16}$/;

/** The FleetSync a revision is judged for: its name, uid, and the digests its status says the operator recorded (`status.revisions`; unset before the operator first wrote it). */
export interface RevisionOwner {
  name: string;
  uid: string;
  recorded?: readonly string[];
}

/**
 * Whether `obj` is a revision of FleetSync `fleet` as the operator wrote it:
 * controlled by that FleetSync (its uid), named and annotated with one digest,
 * its data exactly `{kind, template, overrides?, substitute?}` and hashing to that digest, and that
 * digest one the operator recorded. Else why not, in words for an Event or a
 * refusal. (The hash makes a digest name one content; the record, which only
 * the operator writes, says which digests are its own: a revision planted
 * with an honest hash and the FleetSync's uid is not.)
 */
export function revisionTrust(obj: ControllerRevision, fleet: RevisionOwner): RevisionTrust {
  const notOurs = ownerProblem(obj, fleet);
  if (notOurs) return { trusted: false, why: notOurs };
  const digest = obj.metadata.annotations?.[FLEET_REVISION_ANNOTATION] ?? '';
  if (!DIGEST.test(digest)) return { trusted: false, why: `its annotation ${FLEET_REVISION_ANNOTATION} is not a revision (16 hex digits)` };
  if (obj.metadata.name !== revisionName(fleet.name, digest)) return { trusted: false, why: `its name is not ${revisionName(fleet.name, digest)}, as its annotation says` };
  const data = obj.data;
  if (!isRevisionData(data)) return { trusted: false, why: 'its data is not exactly a kind (ProxySync or RemoteSync), a template, and optionally overrides and substitute' };
  const actual = digestOf(data);
  if (actual !== digest) return { trusted: false, why: `its data hashes to ${actual}, not to ${digest} as its name says: it was changed after the operator wrote it` };
  if (fleet.recorded && !fleet.recorded.includes(digest)) {
    return { trusted: false, why: `its digest ${digest} is not one the operator recorded (the FleetSync's status.revisions): the operator did not write it` };
  }
  return { trusted: true, digest, data };
}

/**
 * The digest a revision's data hashes to, remembered per data object: the
 * cache replaces an object when it changes, so a revision is hashed once per
 * version, not on every list of a FleetSync's revisions.
 */
const digests = new WeakMap<object, string>();
function digestOf(data: RevisionData): string {
  let digest = digests.get(data);
  if (digest === undefined) digests.set(data, (digest = templateRevision(data)));
  return digest;
}

/** Why the revision's controller is not FleetSync `fleet` (its uid), or undefined: it is. */
function ownerProblem(obj: ControllerRevision, fleet: RevisionOwner): string | undefined {
  const refs = (obj.metadata.ownerReferences ?? []) as { apiVersion?: string; kind?: string; name?: string; uid?: string; controller?: boolean }[];
  const controller = refs.find((r) => r.controller === true);
  if (!controller) return 'it has no controller ownerReference';
  const group = (controller.apiVersion ?? '').split('/')[0];
  if (group !== GROUP || controller.kind !== 'FleetSync' || controller.name !== fleet.name) {
    return `its controller is ${controller.kind ?? '?'} ${controller.name ?? '?'} (${controller.apiVersion ?? '?'}), not this FleetSync`;
  }
  if (controller.uid !== fleet.uid) return `its controller is another FleetSync of this name (uid ${controller.uid ?? 'none'}, not ${fleet.uid})`;
  return undefined;
}

const REVISION_KEYS: ReadonlySet<string> = new Set(['kind', 'template', 'overrides', 'substitute']);

function isRevisionData(data: unknown): data is RevisionData {
  if (!isObject(data)) return false;
  const keys = Object.keys(data);
  return (
    keys.every((k) => REVISION_KEYS.has(k)) &&
    (FLEET_CHILD_KINDS as readonly unknown[]).includes(data.kind) &&
    isObject(data.template) &&
    (data.overrides === undefined || Array.isArray(data.overrides)) &&
    (data.substitute === undefined || isObject(data.substitute))
  );
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
