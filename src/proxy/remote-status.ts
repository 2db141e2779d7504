// The status of a remote Sync as a ProxySync may copy it upward. Whoever may
// write that status in the remote cluster writes what it likes there: each
// field is read for what it must be (a field of another shape is left out, as
// if absent, so that it cannot make our own status write fail), and every
// text is stripped of control characters (an escape sequence that erases a
// line on a terminal must not reach `rollout status` through us) and bounded.
import { ConditionType } from '../api/conditions.js';
import { pendingDependencySchema, summarySchema, type Summary } from '../api/status.js';
import type { KubeObject } from '../kube/resources.js';
import { stripControls } from '../runtime/control-chars.js';
import { fitMessage } from '../runtime/messages.js';

/** A condition of the remote Sync, as copied: no lastTransitionTime (ours is our own). */
export interface RemoteCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
}

/** The remote Sync's status, as far as it may be copied. */
export interface RemoteStatus {
  observedGeneration?: number;
  conditions: RemoteCondition[];
  lastAttemptedRevision?: string;
  lastAppliedRevision?: string;
  summary?: Summary;
  pendingDependencies?: unknown[];
  lastHandledReconcileAt?: string;
}

/** The longest remote condition message copied (the rest is cut, and said so). */
export const MAX_REMOTE_MESSAGE = 4096;
/** The longest remote reason copied. */
const MAX_REMOTE_REASON = 128;
/** The longest remote revision copied (a Git ref and digest, a chart's version and digest fit many times). */
export const MAX_REMOTE_REVISION = 512;
/** How many of the remote Sync's pending dependencies are copied. */
const MAX_REMOTE_PENDING = 20;

/** The condition types a ProxySync mirrors. */
const MIRRORED: readonly string[] = [ConditionType.Ready, ConditionType.Reconciling, ConditionType.Stalled];
const STATUSES: readonly string[] = ['True', 'False', 'Unknown'];
/** A name or namespace a pending dependency may have (a DNS-1123 subdomain); another one is left out. */
const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The remote Sync's status, each field checked, each text stripped and bounded (see the top of this file). */
export function remoteStatusOf(live: KubeObject): RemoteStatus {
  const s = (isRecord(live.status) ? live.status : {}) as Record<string, unknown>;
  const pending = (Array.isArray(s.pendingDependencies) ? s.pendingDependencies : []).flatMap((p) => {
    const parsed = pendingDependencySchema.safeParse(p);
    return parsed.success && DNS_NAME.test(parsed.data.name) && (parsed.data.namespace === undefined || DNS_NAME.test(parsed.data.namespace)) ? [parsed.data] : [];
  });
  const summary = summarySchema.safeParse(s.summary);
  return {
    observedGeneration: generationOf(s.observedGeneration),
    conditions: (Array.isArray(s.conditions) ? s.conditions : []).flatMap((c) => conditionOf(c) ?? []),
    lastAttemptedRevision: textOf(s.lastAttemptedRevision, MAX_REMOTE_REVISION),
    lastAppliedRevision: textOf(s.lastAppliedRevision, MAX_REMOTE_REVISION),
    summary: summary.success ? summary.data : undefined,
    pendingDependencies: pending.length > 0 ? pending.slice(0, MAX_REMOTE_PENDING) : undefined,
    lastHandledReconcileAt: textOf(s.lastHandledReconcileAt, MAX_REMOTE_REVISION),
  };
}

/**
 * A reason as kstatus and metav1.Condition want it (a word of letters,
 * digits, `_`, `,` and `:`): what is left of it once control sequences and
 * every other character are out, bounded; `Unknown` when nothing is left.
 */
export function remoteReason(reason: string): string {
  return stripControls(reason).replace(/[^A-Za-z0-9_,:]/g, '').slice(0, MAX_REMOTE_REASON) || 'Unknown';
}

/** A text on one line: control sequences out, line breaks and tabs as spaces, at most `max` characters (cut, and said so). */
export function oneLine(text: string, max: number): string {
  return fitMessage(stripControls(text).replace(/[\n\t]+/g, ' '), max);
}

function conditionOf(c: unknown): RemoteCondition | undefined {
  if (!isRecord(c) || typeof c.type !== 'string' || !MIRRORED.includes(c.type)) return undefined;
  if (typeof c.status !== 'string' || !STATUSES.includes(c.status)) return undefined;
  const observedGeneration = generationOf(c.observedGeneration);
  return {
    type: c.type,
    status: c.status as RemoteCondition['status'],
    reason: remoteReason(typeof c.reason === 'string' ? c.reason : ''),
    message: typeof c.message === 'string' ? oneLine(c.message, MAX_REMOTE_MESSAGE) : '',
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
  };
}

function textOf(v: unknown, max: number): string | undefined {
  return typeof v === 'string' ? oneLine(v, max) : undefined;
}

function generationOf(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
