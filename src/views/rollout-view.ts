// A FleetSync's progressive rollout as the views show it (get's progress,
// tree's waves, the web view's rollout panel): read from its status (the
// waves the planner wrote, fleet/rollout.ts) and its spec (which waves need
// an approval, whether unreachable clusters are skipped). Pure.
import type { FleetSyncSpec, FleetSyncStatus, WaveStatus } from '../api/fleet.js';
import type { KubeObject } from '../kube/resources.js';

/** A wave's name and counts, as status says them. */
export type WaveNumbers = Pick<WaveStatus, 'name' | 'clusters' | 'updated' | 'ready' | 'failed' | 'unreachable'>;

/** One wave of the rollout. */
export interface WaveView extends WaveNumbers {
  /** When its soak ends (or ended). */
  soakUntil?: string;
  /** `approved`: approved for this revision; `required`: it waits for `syncprims rollout approve`. */
  approval?: 'approved' | 'required';
  /** Who approved it (the creator of its RolloutApproval, as the API server checked it). */
  approvedBy?: string;
  /** Every cluster of it is Ready with the update revision (or unreachable and skipped). */
  done: boolean;
  /** The wave the rollout is at. */
  current?: true;
  /** Its clusters, decided when the rollout started. */
  members: string[];
}

export interface RolloutView {
  phase?: string;
  /** Why the rollout stands where it stands. */
  message?: string;
  currentRevision?: string;
  updateRevision?: string;
  waves: WaveView[];
  wavesDone: number;
  /** Clusters with the update revision, of those selected. */
  updated: number;
  selected: number;
  /** `3/5 waves, 412/1000`. */
  progress: string;
}

/** The rollout of a FleetSync with `status.waves`; undefined without (no rollout, or none yet). */
export function rolloutView(obj: KubeObject): RolloutView | undefined {
  const status = (obj.status ?? {}) as Partial<FleetSyncStatus>;
  if (obj.kind !== 'FleetSync' || !Array.isArray(status.waves)) return undefined;
  const rollout = ((obj.spec ?? {}) as Partial<FleetSyncSpec>).rollout;
  const skip = rollout?.onUnreachable === 'Skip';
  const needsApproval = new Set((rollout?.waves ?? []).filter((w) => w.approval).map((w) => w.name));
  const waves = status.waves.map((w) => waveView(w, skip, needsApproval.has(w.name)));
  const at = currentWave(waves, status.phase);
  if (at !== undefined) waves[at]!.current = true;
  const wavesDone = waves.filter((w) => w.done).length;
  const updated = status.clusters?.updated ?? sum(waves, 'updated');
  const selected = status.clusters?.selected ?? sum(waves, 'clusters');
  return {
    ...present({ phase: status.phase, message: status.message, currentRevision: status.currentRevision, updateRevision: status.updateRevision }),
    waves,
    wavesDone,
    updated,
    selected,
    progress: `${wavesDone}/${waves.length} waves, ${updated}/${selected}`,
  };
}

function waveView(w: WaveStatus, skipUnreachable: boolean, needsApproval: boolean): WaveView {
  const done = w.ready + (skipUnreachable ? w.unreachable : 0) >= w.clusters;
  const approval = w.approved ? 'approved' : needsApproval ? 'required' : undefined;
  return {
    ...waveNumbers(w),
    ...(w.soakUntil ? { soakUntil: w.soakUntil } : {}),
    ...(approval ? { approval } : {}),
    ...(w.approvedBy ? { approvedBy: w.approvedBy } : {}),
    done,
    members: w.members ?? [],
  };
}

/**
 * The wave the rollout is at: none when Complete; when Soaking, the last wave
 * with a soak (the planner sets soakUntil only on the waves it reached);
 * else the first wave not done.
 */
export function currentWave(waves: readonly Pick<WaveView, 'done' | 'soakUntil'>[], phase: string | undefined): number | undefined {
  if (phase === 'Complete') return undefined;
  if (phase === 'Soaking') {
    const soaking = waves.map((w, i) => (w.soakUntil ? i : -1)).filter((i) => i >= 0).pop();
    if (soaking !== undefined) return soaking;
  }
  const first = waves.findIndex((w) => !w.done);
  return first < 0 ? undefined : first;
}

/** Items (children, by their cluster) grouped under the wave that has their cluster, in wave order; those of no wave last. */
export function groupByWave<T>(items: readonly T[], clusterOf: (item: T) => string, waves: readonly WaveView[]): { wave?: WaveView; items: T[] }[] {
  const waveOf = new Map<string, number>();
  waves.forEach((w, i) => w.members.forEach((m) => waveOf.set(m, i)));
  const groups: { wave?: WaveView; items: T[] }[] = waves.map((wave) => ({ wave, items: [] }));
  const rest: T[] = [];
  for (const item of items) {
    const at = waveOf.get(clusterOf(item));
    if (at === undefined) rest.push(item);
    else groups[at]!.items.push(item);
  }
  return rest.length > 0 ? [...groups, { items: rest }] : groups;
}

/** Only a wave's name and counts. */
export function waveNumbers(w: WaveNumbers): WaveNumbers {
  return { name: w.name, clusters: w.clusters, updated: w.updated, ready: w.ready, failed: w.failed, unreachable: w.unreachable };
}

/** `1/1 updated, 0/1 ready, 1 failed, 0 unreachable`. */
export function waveCounts(w: Pick<WaveView, 'clusters' | 'updated' | 'ready' | 'failed' | 'unreachable'>): string {
  return `${w.updated}/${w.clusters} updated, ${w.ready}/${w.clusters} ready, ${w.failed} failed, ${w.unreachable} unreachable`;
}

function sum(waves: readonly WaveView[], field: 'updated' | 'clusters'): number {
  return waves.reduce((s, w) => s + w[field], 0);
}

/** The fields that say something (not undefined, not empty). */
function present<T extends Record<string, string | undefined>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v)) as Partial<T>;
}
