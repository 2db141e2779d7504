import { ConditionType, Reason } from '../../api/conditions.js';
import type { FleetSyncSpec, FleetSyncStatus } from '../../api/fleet.js';
import type { KubeObject } from '../../kube/resources.js';
import { someNames } from '../../fleet/fleet-status.js';
import { findCondition } from '../../runtime/conditions.js';
import { formatTable } from '../table.js';
import { PLAIN, type Style } from '../terminal.js';
import { stripControls } from '../sanitize.js';

/**
 * Where a FleetSync's rollout stands, read from its status as the operator
 * writes it (API.md, FleetSync `status`): what `syncprims rollout status`
 * prints and how it ends. Pure.
 */

export interface FleetObject extends KubeObject {
  spec?: Partial<Pick<FleetSyncSpec, 'rollout' | 'kind' | 'template'>>;
  status?: FleetSyncStatus;
}

export type RolloutVerdict =
  /** Still rolling (or the operator has not seen the change yet): what it is doing. */
  | { state: 'working'; doing: string }
  /** Every selected cluster is Ready with the update revision. */
  | { state: 'complete'; message: string }
  /** Halted at the failure budget (or failing, without waves): nothing more is admitted. */
  | { state: 'halted'; message: string }
  /** Waiting on a person: paused, awaiting approval, or the FleetSync suspended. */
  | { state: 'held'; phase: string; message: string; hint: string };

/** Said while the operator has not written a status for the FleetSync's current generation. */
export const NOT_OBSERVED = 'waiting for the operator to take the change';

/**
 * The verdict on one version of the FleetSync (`ref`: `fleetsync/NAME -n NS`, for the hints). Its texts may
 * quote what clusters said: without control sequences (see renderStatus).
 */
export function rolloutVerdict(obj: FleetObject, ref: string): RolloutVerdict {
  const v = verdictOf(obj, ref);
  return 'message' in v ? { ...v, message: stripControls(v.message) } : 'doing' in v ? { ...v, doing: stripControls(v.doing) } : v;
}

function verdictOf(obj: FleetObject, ref: string): RolloutVerdict {
  const status = obj.status ?? {};
  const ready = findCondition(status.conditions, ConditionType.Ready);
  if (status.observedGeneration !== obj.metadata.generation || !status.phase) return { state: 'working', doing: NOT_OBSERVED };
  if (ready?.reason === Reason.Suspended) {
    return { state: 'held', phase: 'Suspended', message: ready.message || 'spec.suspend is true', hint: `syncprims resume ${ref}` };
  }
  const settled = phaseVerdict(status, ready?.message ?? '', ref);
  if (settled) return settled;
  // Without waves nothing halts: failing clusters end it as a halt would.
  if (!obj.spec?.rollout && ready?.status === 'False' && ready.reason === Reason.ClustersFailing) return { state: 'halted', message: ready.message };
  return { state: 'working', doing: doingOf(status) };
}

/** The verdict of a phase that settles the command; undefined while it rolls. */
function phaseVerdict(status: FleetSyncStatus, readyMessage: string, ref: string): RolloutVerdict | undefined {
  const message = status.message ?? readyMessage;
  switch (status.phase) {
    case 'Complete':
      return { state: 'complete', message: readyMessage || `every cluster is Ready with revision ${status.updateRevision}` };
    case 'Halted':
      return { state: 'halted', message };
    case 'Paused':
      return { state: 'held', phase: 'Paused', message, hint: `syncprims rollout resume ${ref}` };
    case 'AwaitingApproval':
      return { state: 'held', phase: 'AwaitingApproval', message, hint: `syncprims rollout approve ${ref}` };
    default:
      return undefined;
  }
}

/** `Progressing: wave canary: 0/1 Ready with revision …; 1/3 clusters Ready`. */
function doingOf(status: FleetSyncStatus): string {
  const counts = status.clusters ? `${status.clusters.ready}/${status.clusters.selected} clusters Ready` : '';
  const message = status.message ?? '';
  return [`${status.phase}:`, [message, counts].filter((t) => t !== '').join('; ')].join(' ').trim();
}


/**
 * The status as `rollout status` prints it: phase, revisions, message,
 * clusters, a table of the waves and the failing clusters (`what`:
 * `FleetSync ns/name`). The texts that came from clusters (the message, the
 * failures: a RemoteSync's message quotes what objects there say) lose their
 * control sequences here, before our own colours are added: the output
 * filter keeps colour codes and the line erase on a terminal, whoever wrote them.
 */
export function renderStatus(obj: FleetObject, what: string, style: Style = PLAIN): string[] {
  const status = obj.status ?? {};
  const phase = status.phase ?? 'Unknown';
  const colour = phase === 'Complete' ? style.green : phase === 'Halted' ? style.red : style.yellow;
  const lines = [`${what}: ${colour(phase)}`];
  const current = status.currentRevision ?? '-';
  const update = status.updateRevision ?? '-';
  lines.push(`revisions:  current ${current}, update ${update === current ? `${update} (the same)` : update}`);
  if (status.message) lines.push(`message:    ${stripControls(status.message)}`);
  const c = status.clusters;
  if (c) lines.push(`clusters:   ${c.ready}/${c.selected} Ready, ${c.updated} updated, ${c.failed} failed, ${c.unreachable} unreachable, ${c.progressing} progressing`);
  lines.push(...wavesTable(obj));
  const failures = status.failures ?? [];
  if (failures.length > 0) lines.push('', 'failing clusters:', ...failures.map((f) => stripControls(`  ${f.cluster}: ${f.reason}: ${f.message}`)));
  return lines;
}

/** The waves, one row each (a blank line first); nothing without waves. */
function wavesTable(obj: FleetObject): string[] {
  const waves = obj.status?.waves ?? [];
  if (waves.length === 0) return [];
  const gated = new Set((obj.spec?.rollout?.waves ?? []).filter((w) => w.approval).map((w) => w.name));
  const rows = waves.map((w) => [
    w.name,
    String(w.clusters),
    String(w.updated),
    String(w.ready),
    String(w.failed),
    String(w.unreachable),
    w.soakUntil ?? '-',
    w.approvedBy ? `by ${w.approvedBy}` : w.approved ? 'yes' : gated.has(w.name) ? 'no' : '-',
    w.members?.length ? someNames(w.members) : '-',
  ]);
  const header = ['WAVE', 'CLUSTERS', 'UPDATED', 'READY', 'FAILED', 'UNREACHABLE', 'SOAK UNTIL', 'APPROVED', 'MEMBERS'];
  return ['', ...formatTable(header, rows).lines];
}

/**
 * The wave `rollout approve` approves by default: the one the rollout waits
 * at (the first wave with `approval` that the status does not show approved
 * for the update revision); undefined when the rollout does not await approval.
 */
export function awaitingWave(obj: FleetObject): string | undefined {
  const status = obj.status ?? {};
  if (status.phase !== 'AwaitingApproval' || status.observedGeneration !== obj.metadata.generation) return undefined;
  const approved = new Set((status.waves ?? []).filter((w) => w.approved).map((w) => w.name));
  const wave = (obj.spec?.rollout?.waves ?? []).find((w) => w.approval && !approved.has(w.name));
  return wave?.name ?? /^wave (\S+) waits for approval/.exec(status.message ?? '')?.[1];
}
