// The quota on a FleetSync's fan-out: how many children it may make, and how
// many bytes it may place in the managing cluster (each child holds the
// template, and so does each revision kept). Past either, the FleetSync is
// refused before anything is written. Pure; `syncprims run` sets the limits
// (--fleet-max-clusters, --fleet-max-size) and the reconciler measures.
import { formatBytes } from '../source/limits.js';

const MiB = 1024 * 1024;

export interface FleetQuota {
  /** Most children (selected clusters) per FleetSync. */
  maxClusters: number;
  /** Most bytes per FleetSync: the template's size times its children, plus its revisions kept. */
  maxBytes: number;
}

/**
 * 1000 clusters; 64 MiB, a 32nd of etcd's default quota (2 GiB,
 * --quota-backend-bytes): every rollout writes each child again and etcd
 * keeps the old versions until compaction, other FleetSyncs and everything
 * else share the quota, and the operator's cache holds every child in memory.
 */
export const DEFAULT_FLEET_QUOTA: FleetQuota = { maxClusters: 1000, maxBytes: 64 * MiB };

export interface FleetFootprint {
  /** The children it would have: one per selected cluster. */
  children: number;
  /** The bytes of one child's template (its kind and template as JSON). */
  templateBytes: number;
  /** The bytes of the other revisions it keeps (besides the one of the template now). */
  otherRevisionBytes: number[];
}

/** The bytes the FleetSync places in the managing cluster: the template in each child and in its own revision, and the other revisions. */
export function footprintBytes(f: FleetFootprint): number {
  return f.templateBytes * (f.children + 1) + f.otherRevisionBytes.reduce((a, b) => a + b, 0);
}

/** Why the FleetSync is past its quota (the figures and the flag to raise), or undefined: within it. */
export function quotaExceeded(quota: FleetQuota, f: FleetFootprint): string | undefined {
  if (f.children > quota.maxClusters) {
    return `${f.children} clusters selected, more than the ${quota.maxClusters} children a FleetSync may have (--fleet-max-clusters of syncprims run): select fewer clusters, or split the fleet`;
  }
  const bytes = footprintBytes(f);
  if (bytes > quota.maxBytes) {
    const revisions = f.otherRevisionBytes.length + 1;
    return (
      `its children and revisions would take ${formatBytes(bytes)} in the managing cluster (a template of ${formatBytes(f.templateBytes)} ` +
      `in ${f.children} children and ${revisions} revisions), more than the ${formatBytes(quota.maxBytes)} a FleetSync may take ` +
      `(--fleet-max-size of syncprims run): make the template smaller (e.g. a ConfigMap, Secret or http source instead of inline objects), or select fewer clusters`
    );
  }
  return undefined;
}
