// The web view's rollout panel of a selected FleetSync rolling out in waves:
// its phase, message, revisions, progress and one row per wave (the current
// one marked), each cell as the page shows it. Pure.
import type { KubeObject } from '../kube/resources.js';
import { rolloutView, waveNumbers, type WaveNumbers, type WaveView } from '../views/rollout-view.js';

export interface WaveRow extends WaveNumbers {
  /** `until 2030-01-01T00:10:00.000Z`, or `-`. */
  soak: string;
  /** `Approved by <user>` (`Approved` where status names nobody), `Awaiting approval` (the rollout waits for it), `Required`, or `-`. */
  approval: string;
  /** The wave the rollout is at. */
  current: boolean;
}

export interface RolloutPanel {
  phase: string;
  message?: string;
  currentRevision?: string;
  updateRevision?: string;
  /** `3/5 waves, 412/1000`. */
  progress: string;
  waves: WaveRow[];
}

/** The panel of a FleetSync with `status.waves`; undefined for any other sync. */
export function rolloutPanel(obj: KubeObject): RolloutPanel | undefined {
  const view = rolloutView(obj);
  if (!view) return undefined;
  return {
    phase: view.phase ?? 'no phase yet',
    ...(view.message ? { message: view.message } : {}),
    ...(view.currentRevision ? { currentRevision: view.currentRevision } : {}),
    ...(view.updateRevision ? { updateRevision: view.updateRevision } : {}),
    progress: view.progress,
    waves: view.waves.map((w) => waveRow(w, view.phase)),
  };
}

function waveRow(w: WaveView, phase: string | undefined): WaveRow {
  return {
    ...waveNumbers(w),
    soak: w.soakUntil ? `until ${w.soakUntil}` : '-',
    approval: approvalText(w, phase),
    current: w.current === true,
  };
}

function approvalText(w: WaveView, phase: string | undefined): string {
  if (w.approval === 'approved') return w.approvedBy ? `Approved by ${w.approvedBy}` : 'Approved';
  if (w.approval !== 'required') return '-';
  return w.current && phase === 'AwaitingApproval' ? 'Awaiting approval' : 'Required';
}
