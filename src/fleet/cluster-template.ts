// What one cluster's child of a FleetSync is made from: the revision's
// template, with the overrides that select the cluster applied in order,
// then (with `substitute`) the cluster's values written into its strings, and
// checked again as a template. A cluster whose template cannot be made gets
// no write: it fails alone, saying why (fleet.md, "Values and overrides").
// Pure.
import { createHash } from 'node:crypto';
import { Reason } from '../api/conditions.js';
import { fleetTemplateSchema, templateProblems, type FleetTemplate } from '../api/fleet.js';
import { issuesLeft } from '../api/fleet-references.js';
import { describeIssues } from '../api/validate.js';
import { canonicalJson } from '../kube/canonical-json.js';
import { applyOverrides, OverrideError, overridesOf, type OverrideTarget } from './overrides.js';
import type { RevisionData } from './revisions.js';
import { substitute, SubstitutionError } from './substitute.js';

/** A cluster as its template needs it: its name, labels (for the overrides) and values (for substitution). */
export interface TemplateTarget extends OverrideTarget {
  values: Readonly<Record<string, string>>;
}

export type ClusterTemplate =
  | {
      ok: true;
      template: FleetTemplate;
      /** The overrides applied (their indexes). */
      overrides: number[];
      /** With `substitute`: the digest of the values the template used (each name and what it was given), as the child records it. */
      valuesDigest?: string;
      /** Those values. */
      used?: Record<string, string>;
    }
  | { ok: false; reason: typeof Reason.OverrideFailed | typeof Reason.SubstitutionFailed; message: string };

/** The template `cluster`'s child of revision `data` gets, or why it gets none. */
export function clusterTemplate(data: RevisionData, cluster: TemplateTarget): ClusterTemplate {
  const overrides = overridesOf(data.overrides, cluster);
  let template = data.template;
  try {
    template = applyOverrides(template, data.overrides, cluster);
  } catch (err) {
    if (err instanceof OverrideError) return { ok: false, reason: Reason.OverrideFailed, message: `${err.message}; nothing is written to this cluster` };
    throw err;
  }
  if (overrides.length > 0) {
    // Checked after the overrides too, so that what they broke is theirs (a reference left for substitution is not yet an issue).
    const checked = checkedTemplate(data.kind, template, data.substitute !== undefined);
    if ('invalid' in checked) return { ok: false, reason: Reason.OverrideFailed, message: `with overrides ${overrides.join(', ')} the template is not valid: ${checked.invalid}; nothing is written to this cluster` };
    if (!data.substitute) template = checked.template;
  }
  if (!data.substitute) return { ok: true, template, overrides };
  let substituted;
  try {
    substituted = substitute(template, cluster.values);
  } catch (err) {
    if (err instanceof SubstitutionError) return { ok: false, reason: Reason.SubstitutionFailed, message: `${err.message}; nothing is written to this cluster` };
    throw err;
  }
  // Parsed again: as written (references in fields with rules of their own, api/fleet-references.ts), it has no defaults yet.
  const checked = checkedTemplate(data.kind, substituted.value);
  if ('invalid' in checked) return { ok: false, reason: Reason.SubstitutionFailed, message: `with this cluster's values the template is not valid: ${checked.invalid}; nothing is written to this cluster` };
  return { ok: true, template: checked.template, overrides, valuesDigest: valuesDigest(substituted.used), used: substituted.used };
}

/** The first 16 hex digits of the SHA-256 of the values used, as canonical JSON. */
export function valuesDigest(used: Record<string, string>): string {
  return createHash('sha256').update(canonicalJson(used)).digest('hex').slice(0, 16);
}

/**
 * The template parsed (its defaults in), or why it is not one (its schema,
 * and what its kind of child may not hold); `references`: issues a
 * reference explains do not count (the template given back as it is).
 */
function checkedTemplate(kind: RevisionData['kind'], template: FleetTemplate, references = false): { template: FleetTemplate } | { invalid: string } {
  const parsed = fleetTemplateSchema.safeParse(template);
  const issues = parsed.success ? [] : references ? issuesLeft(parsed.error.issues, template) : parsed.error.issues;
  if (issues.length > 0) return { invalid: describeIssues({ issues }) };
  const problems = templateProblems(kind, parsed.data ?? template);
  return problems.length > 0 ? { invalid: problems.map((p) => `${p.path.join('.')}: ${p.message}`).join('; ') } : { template: parsed.data ?? template };
}

/** How many revisions' templates are remembered per cluster (the update one, the one it keeps, one more). */
const REMEMBERED_REVISIONS = 3;

/**
 * `clusterTemplate`, remembered per FleetSync, cluster and revision while the
 * cluster's labels and values stay the same: a reconcile of a fleet of a
 * thousand clusters does not substitute and check a thousand templates again.
 */
export class ClusterTemplates {
  /** FleetSync (uid) -> cluster -> revision -> what it was made for (the cluster object, its labels and values) and what it made. */
  private readonly memo = new Map<string, Map<string, Map<string, { cluster: TemplateTarget; key: string; made: ClusterTemplate }>>>();

  of(fleet: string, revision: string, data: RevisionData, cluster: TemplateTarget): ClusterTemplate {
    if (!data.substitute && (data.overrides ?? []).length === 0) return { ok: true, template: data.template, overrides: [] };
    let clusters = this.memo.get(fleet);
    if (!clusters) this.memo.set(fleet, (clusters = new Map()));
    let revisions = clusters.get(cluster.name);
    if (!revisions) clusters.set(cluster.name, (revisions = new Map()));
    const known = revisions.get(revision);
    // The inventory gives the same object until the cluster changes: compared by identity first, by content after.
    if (known?.cluster === cluster) return known.made;
    const key = JSON.stringify([cluster.labels, cluster.values]);
    if (known?.key === key) return known.made;
    const made = clusterTemplate(data, cluster);
    revisions.delete(revision);
    revisions.set(revision, { cluster, key, made });
    if (revisions.size > REMEMBERED_REVISIONS) revisions.delete(revisions.keys().next().value!);
    return made;
  }

  /** Forgets a FleetSync's clusters not in `keep` (all of them without it). */
  forget(fleet: string, keep?: ReadonlySet<string> | ReadonlyMap<string, unknown>): void {
    const clusters = this.memo.get(fleet);
    if (!clusters) return;
    if (!keep) return void this.memo.delete(fleet);
    for (const name of clusters.keys()) if (!keep.has(name)) clusters.delete(name);
  }
}
