// A FleetSync's overrides (API.md, `overrides`): RFC 6902 patches on the
// template, each override applied in order to the clusters it selects
// (KubeFleet's ordered overrides by selector). Pure; the patches are applied
// by rfc6902 (a maintained implementation of the RFC) to a copy.
import { applyPatch, type Operation } from 'rfc6902';
import type { FleetOverride, FleetTemplate } from '../api/fleet.js';
import { matchesSelector } from '../clusters/label-selector.js';

/** A cluster as the overrides select it. */
export interface OverrideTarget {
  name: string;
  labels: Record<string, string>;
}

/** Why an override could not be applied to a cluster's template: which override and operation, and the path. */
export class OverrideError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OverrideError';
  }
}

/** Whether `override` selects `cluster` (as spec.clusters selects: by selector and/or names, both when both are given). */
export function selects(override: Pick<FleetOverride, 'clusters'>, cluster: OverrideTarget): boolean {
  const { selector, names } = override.clusters;
  return (!names || names.includes(cluster.name)) && (!selector || matchesSelector(cluster.labels, selector));
}

/** The indexes of the overrides that select `cluster`, in order. */
export function overridesOf(overrides: readonly FleetOverride[] | undefined, cluster: OverrideTarget): number[] {
  return (overrides ?? []).flatMap((o, i) => (selects(o, cluster) ? [i] : []));
}

/**
 * The template with the overrides that select `cluster` applied, in order,
 * to a copy (`template` itself is left as it is; with none selected it is
 * returned as it is). Throws an OverrideError naming the override's index,
 * the operation and its path when one does not apply.
 */
export function applyOverrides(template: FleetTemplate, overrides: readonly FleetOverride[] | undefined, cluster: OverrideTarget): FleetTemplate {
  const selected = overridesOf(overrides, cluster);
  if (selected.length === 0) return template;
  const doc = structuredClone(template) as unknown as Record<string, unknown>;
  for (const i of selected) {
    const patches = overrides![i]!.patches as Operation[];
    // One operation at a time: a later one must not run on what a failed one left.
    patches.forEach((op, j) => {
      const [result] = applyPatch(doc, [op]);
      if (result) throw new OverrideError(`overrides[${i}].patches[${j}] (${op.op} ${op.path}): ${describe(result)}`);
    });
  }
  return doc as unknown as FleetTemplate;
}

function describe(err: Error): string {
  if (err.name === 'MissingError') return 'the template has no value there';
  if (err.name === 'TestError') return `the test failed: ${err.message.replace(/^Test failed: /, '')}`;
  return err.message;
}
