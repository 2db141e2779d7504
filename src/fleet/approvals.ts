// Which RolloutApproval approves a wave of a FleetSync's rollout, and which
// waves a reconcile newly found approved (for the WaveApproved Event). Pure:
// the controller gives it the approvals of the namespace, from its watch.
import { APPROVAL_NAMES, APPROVER_EXPRESSION, APPROVER_POLICY, type RolloutApprovalSpec } from '../api/approval.js';
import { GROUP } from '../api/kinds.js';
import type { FleetSyncStatus, WaveStatus } from '../api/fleet.js';
import { boundedName } from '../api/names.js';

/** A RolloutApproval as the rule reads it. */
export interface ApprovalObject {
  metadata: { name?: string; creationTimestamp?: string; deletionTimestamp?: string };
  spec?: Partial<RolloutApprovalSpec>;
}

/** Who approved a wave, and when: both recorded by the API server (the creator, as admission checked it; the creation time). */
export interface WaveApproval {
  approvedBy: string;
  approvedAt: string;
  /** The RolloutApproval's name. */
  approval: string;
}

/** Whether an approver can be believed: the admission policy is there as shipped (since when), or what is wrong with it. */
export type ApproverTrust = { since: string } | { problem: string };

/** Why a wave waits although approvals name it (the policy is missing or changed; they were made before it). */
export interface ApprovalProblem {
  problem: string;
}

/**
 * The approval of `wave` of FleetSync `fleet` for `revision`: among the
 * approvals of its namespace, those naming exactly that FleetSync, revision
 * and wave, not being deleted; the first made (then by name) when several
 * are. An approval of another revision or wave approves nothing. None
 * counts unless `trust` says the approver policy is in force, nor one made
 * before it was (its approver is its author's word): then why.
 */
export function approvalOf(approvals: readonly ApprovalObject[], fleet: string, revision: string, wave: string, trust: ApproverTrust): WaveApproval | ApprovalProblem | undefined {
  const named = approvals
    .filter((a) => !a.metadata.deletionTimestamp && a.spec?.fleetSync === fleet && a.spec.revision === revision && a.spec.wave === wave && a.spec.approver)
    .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  if (named.length === 0) return undefined;
  if ('problem' in trust) return { problem: `RolloutApprovals are not counted: ${trust.problem}` };
  const since = Date.parse(trust.since);
  const first = named.find((a) => Date.parse(a.metadata.creationTimestamp ?? '') >= since);
  if (!first) {
    return { problem: `RolloutApproval ${named[0]!.metadata.name} was made before the approver policy ${APPROVER_POLICY} (${trust.since}), so its approver is unchecked: delete it and approve again` };
  }
  return { approvedBy: first.spec!.approver!, approvedAt: first.metadata.creationTimestamp ?? '', approval: first.metadata.name ?? '' };
}

/** A ValidatingAdmissionPolicy or its binding, as the trust rule reads them. */
export interface PolicyObject {
  metadata: { name?: string; creationTimestamp?: string; deletionTimestamp?: string };
  spec?: Record<string, unknown>;
}

interface PolicySpec {
  failurePolicy?: string;
  matchConstraints?: { resourceRules?: { apiGroups?: string[]; resources?: string[]; operations?: string[] }[]; excludeResourceRules?: unknown[]; namespaceSelector?: Selector; objectSelector?: Selector };
  matchConditions?: unknown[];
  validations?: { expression?: string }[];
}
interface BindingSpec {
  policyName?: string;
  paramRef?: unknown;
  validationActions?: string[];
  matchResources?: { resourceRules?: unknown[]; excludeResourceRules?: unknown[]; namespaceSelector?: Selector; objectSelector?: Selector };
}
type Selector = { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };

const everything = (s: Selector | undefined): boolean => Object.keys(s?.matchLabels ?? {}).length === 0 && (s?.matchExpressions ?? []).length === 0;
const none = (list: unknown[] | undefined): boolean => (list ?? []).length === 0;

/**
 * Whether the approver policy is in force as shipped (api/approval.ts): the
 * policy checks the approver on every create of a RolloutApproval, fails
 * closed and is narrowed by nothing; its binding denies, with no parameters
 * and over everything. `since`: the later of the two creation times.
 */
export function approverTrust(policy: PolicyObject | undefined, binding: PolicyObject | undefined): ApproverTrust {
  const what = `ValidatingAdmissionPolicy ${APPROVER_POLICY}`;
  const fix = 'syncprims install puts it back';
  if (!policy || policy.metadata.deletionTimestamp) return { problem: `the ${what}, which makes an approval's approver its creator, is not installed (${fix})` };
  if (!binding || binding.metadata.deletionTimestamp) return { problem: `the binding of the ${what} is not installed (${fix})` };
  if (!policyChecksAll((policy.spec ?? {}) as PolicySpec)) return { problem: `the ${what} has been changed: it no longer checks every new RolloutApproval's approver (${fix})` };
  if (!bindingDeniesAll((binding.spec ?? {}) as BindingSpec)) return { problem: `the binding of the ${what} has been changed: it no longer denies every forged approver (${fix})` };
  const times = [policy.metadata.creationTimestamp, binding.metadata.creationTimestamp].map((t) => Date.parse(t ?? ''));
  return { since: new Date(Math.max(...times.map((t) => (Number.isNaN(t) ? 0 : t)))).toISOString() };
}

/** The policy checks the approver of every create of a RolloutApproval, and fails closed. */
function policyChecksAll(p: PolicySpec): boolean {
  const m = p.matchConstraints ?? {};
  const covers = (m.resourceRules ?? []).some(
    (r) => (r.apiGroups ?? []).some((g) => g === GROUP || g === '*') && (r.resources ?? []).some((x) => x === APPROVAL_NAMES.plural || x === '*') && (r.operations ?? []).some((o) => o === 'CREATE' || o === '*'),
  );
  const checks = (p.validations ?? []).some((v) => v.expression === APPROVER_EXPRESSION);
  return covers && checks && p.failurePolicy !== 'Ignore' && none(p.matchConditions) && none(m.excludeResourceRules) && everything(m.namespaceSelector) && everything(m.objectSelector);
}

/** The binding denies, with no parameters, over everything. */
function bindingDeniesAll(b: BindingSpec): boolean {
  const r = b.matchResources ?? {};
  const narrowed = !none(r.resourceRules) || !none(r.excludeResourceRules) || !everything(r.namespaceSelector) || !everything(r.objectSelector);
  return b.policyName === APPROVER_POLICY && (b.validationActions ?? []).includes('Deny') && b.paramRef === undefined && !narrowed;
}

/**
 * The waves `next` has approved that `before` did not (for the same update
 * revision; a new revision's approvals are all new), or approved by
 * someone else: each is told once, in a WaveApproved Event.
 */
export function newlyApproved(before: FleetSyncStatus, next: FleetSyncStatus): WaveStatus[] {
  const same = before.updateRevision === next.updateRevision;
  return (next.waves ?? []).filter((w) => {
    if (!w.approvedBy) return false;
    const was = same ? before.waves?.find((b) => b.name === w.name) : undefined;
    return was?.approvedBy !== w.approvedBy || was.approvedAt !== w.approvedAt;
  });
}

/**
 * The name `syncprims rollout approve` gives its RolloutApproval:
 * `<fleetsync>-<wave>-<revision>`, bounded as a child's name is. One per wave and revision: a second approve finds the first.
 */
export function approvalName(fleet: string, wave: string, revision: string): string {
  return boundedName(`${fleet}-${wave}-${revision}`);
}
