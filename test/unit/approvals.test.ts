import { describe, expect, test } from '@jest/globals';
import { reportApprovals } from '../../src/controllers/fleet-approvals.js';
import type { EventRecorder } from '../../src/runtime/events.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { rolloutApprovalSpecSchema } from '../../src/api/approval.js';
import type { FleetSyncStatus } from '../../src/api/fleet.js';
import { approverPolicy } from '../../src/api/approval.js';
import { approvalName, approvalOf, approverTrust, newlyApproved, type ApprovalObject, type PolicyObject } from '../../src/fleet/approvals.js';

const R = '0123456789abcdef';
/** The approver policy in force since before every approval below. */
const TRUSTED = { since: '2026-12-01T00:00:00Z' };
const OTHER = 'fedcba9876543210';

function approval(name: string, at: string, spec: Partial<ApprovalObject['spec']> = {}, deleting = false): ApprovalObject {
  return {
    metadata: { name, creationTimestamp: at, ...(deleting ? { deletionTimestamp: '2026-12-01T12:00:00Z' } : {}) },
    spec: { fleetSync: 'app', revision: R, wave: 'prod', approver: `${name}-user`, ...spec },
  };
}

describe('which approval approves a wave', () => {
  test('one naming the FleetSync, revision and wave: its creator and creation time, as the API server recorded them', () => {
    expect(approvalOf([approval('a', '2026-12-01T10:00:00Z')], 'app', R, 'prod', TRUSTED)).toEqual({ approvedBy: 'a-user', approvedAt: '2026-12-01T10:00:00Z', approval: 'a' });
  });

  test('another revision, wave or FleetSync approves nothing; nor one being deleted, nor one without an approver', () => {
    const others = [
      approval('rev', '2026-12-01T10:00:00Z', { revision: OTHER }),
      approval('wave', '2026-12-01T10:00:00Z', { wave: 'canary' }),
      approval('fleet', '2026-12-01T10:00:00Z', { fleetSync: 'other' }),
      approval('gone', '2026-12-01T10:00:00Z', {}, true),
      approval('nobody', '2026-12-01T10:00:00Z', { approver: '' }),
    ];
    expect(approvalOf(others, 'app', R, 'prod', TRUSTED)).toBeUndefined();
    expect(approvalOf(others, 'app', OTHER, 'prod', TRUSTED)).toMatchObject({ approval: 'rev' });
    expect(approvalOf(others, 'app', R, 'canary', TRUSTED)).toMatchObject({ approval: 'wave' });
  });

  test('several: the first made, then by name, whatever the order they come in', () => {
    const later = approval('b', '2026-12-01T11:00:00Z');
    const first = approval('c', '2026-12-01T10:00:00Z');
    const tie = approval('a', '2026-12-01T11:00:00Z');
    expect(approvalOf([later, tie, first], 'app', R, 'prod', TRUSTED)).toMatchObject({ approvedBy: 'c-user' });
    expect(approvalOf([later, tie], 'app', R, 'prod', TRUSTED)).toMatchObject({ approvedBy: 'a-user' });
  });
});

describe('an approver is believed only while the admission policy checks it', () => {
  const [policy, binding] = approverPolicy().map((o, i) => ({ ...o, metadata: { ...o.metadata, creationTimestamp: `2026-12-01T0${i + 1}:00:00Z` } })) as unknown as [PolicyObject, PolicyObject];
  const withSpec = (o: PolicyObject, spec: Record<string, unknown>): PolicyObject => ({ ...o, spec: { ...o.spec, ...spec } });
  const problem = (p?: PolicyObject, b?: PolicyObject): string => {
    const trust = approverTrust(p, b);
    return 'problem' in trust ? trust.problem : `trusted since ${trust.since}`;
  };

  test('as shipped (the API server adds its defaults): trusted since the later of the two was made', () => {
    const defaulted = withSpec(policy, { matchConstraints: { ...(policy.spec!.matchConstraints as object), namespaceSelector: {}, objectSelector: {}, matchPolicy: 'Equivalent' } });
    expect(approverTrust(defaulted, binding)).toEqual({ since: '2026-12-01T02:00:00.000Z' });
  });

  test('missing, being deleted, or changed so that some approval goes unchecked: not trusted, saying what to do', () => {
    expect(problem(undefined, binding)).toContain('ValidatingAdmissionPolicy rolloutapprovals.syncprims.dev, which makes an approval\'s approver its creator, is not installed (syncprims install puts it back)');
    expect(problem(policy, undefined)).toContain('the binding of the ValidatingAdmissionPolicy rolloutapprovals.syncprims.dev is not installed');
    expect(problem({ ...policy, metadata: { ...policy.metadata, deletionTimestamp: '2026-12-01T03:00:00Z' } }, binding)).toContain('is not installed');
    const changed = [
      withSpec(policy, { validations: [{ expression: 'true' }] }),
      withSpec(policy, { failurePolicy: 'Ignore' }),
      withSpec(policy, { matchConditions: [{ name: 'skip', expression: 'false' }] }),
      withSpec(policy, { matchConstraints: { resourceRules: [{ apiGroups: ['syncprims.dev'], apiVersions: ['*'], operations: ['UPDATE'], resources: ['rolloutapprovals'] }] } }),
      withSpec(policy, { matchConstraints: { ...(policy.spec!.matchConstraints as object), namespaceSelector: { matchLabels: { checked: 'yes' } } } }),
    ];
    for (const p of changed) expect(problem(p, binding)).toContain('has been changed: it no longer checks every new RolloutApproval\'s approver');
    const unbound = [
      withSpec(binding, { validationActions: ['Audit'] }),
      withSpec(binding, { policyName: 'other' }),
      withSpec(binding, { matchResources: { objectSelector: { matchLabels: { checked: 'yes' } } } }),
      withSpec(binding, { paramRef: { name: 'x' } }),
    ];
    for (const b of unbound) expect(problem(policy, b)).toContain('the binding of the ValidatingAdmissionPolicy rolloutapprovals.syncprims.dev has been changed');
  });

  test('no approval counts without trust, nor one made before the policy: the wave says why', () => {
    const made = approval('a', '2026-12-01T10:00:00Z');
    expect(approvalOf([made], 'app', R, 'prod', { problem: 'the policy is not installed' })).toEqual({ problem: 'RolloutApprovals are not counted: the policy is not installed' });
    expect(approvalOf([made], 'app', R, 'prod', { since: '2026-12-01T11:00:00Z' })).toEqual({
      problem: 'RolloutApproval a was made before the approver policy rolloutapprovals.syncprims.dev (2026-12-01T11:00:00Z), so its approver is unchecked: delete it and approve again',
    });
    expect(approvalOf([made, approval('b', '2026-12-01T11:00:00Z')], 'app', R, 'prod', { since: '2026-12-01T11:00:00Z' })).toMatchObject({ approvedBy: 'b-user' });
    expect(approvalOf([], 'app', R, 'prod', { problem: 'x' })).toBeUndefined();
  });
});

describe('the waves newly approved (a WaveApproved Event each)', () => {
  const wave = (name: string, by?: string, at = '2026-12-01T10:00:00Z') => ({
    name,
    clusters: 1,
    updated: 0,
    ready: 0,
    failed: 0,
    unreachable: 0,
    ...(by ? { approved: true, approvedBy: by, approvedAt: at } : {}),
  });
  const status = (revision: string, ...waves: ReturnType<typeof wave>[]): FleetSyncStatus => ({ updateRevision: revision, waves });

  test('a wave approved now and not before is told; one told before is not told again', () => {
    expect(newlyApproved(status(R, wave('canary'), wave('prod')), status(R, wave('canary'), wave('prod', 'alice'))).map((w) => w.name)).toEqual(['prod']);
    expect(newlyApproved(status(R, wave('prod', 'alice')), status(R, wave('prod', 'alice')))).toEqual([]);
  });

  test('another approver or approval of the same wave is told; a new revision tells its approvals anew', () => {
    expect(newlyApproved(status(R, wave('prod', 'alice')), status(R, wave('prod', 'bob'))).map((w) => w.approvedBy)).toEqual(['bob']);
    expect(newlyApproved(status(R, wave('prod', 'alice')), status(R, wave('prod', 'alice', '2026-12-01T11:00:00Z')))).toHaveLength(1);
    expect(newlyApproved(status(OTHER, wave('prod', 'alice')), status(R, wave('prod', 'alice')))).toHaveLength(1);
    expect(newlyApproved({}, status(R, wave('prod')))).toEqual([]);
  });
});

describe('the Events of approvals', () => {
  const recorder = () => {
    const told: string[] = [];
    const events = { record: async (_obj: unknown, type: string, reason: string, message: string) => void told.push(`${type} ${reason}: ${message}`) } as unknown as EventRecorder;
    return { told, events };
  };
  const obj = { apiVersion: 'syncprims.dev/v1alpha1', kind: 'FleetSync', metadata: { name: 'app', namespace: 'fleet' } };
  const rest = (by?: string) => ({ name: 'rest', clusters: 1, updated: 0, ready: 0, failed: 0, unreachable: 0, ...(by ? { approved: true, approvedBy: by, approvedAt: '2026-12-01T10:00:00Z' } : {}) });

  test('WaveApproved names the approver and the time; ApprovalsNotCounted says why, once per message', async () => {
    const { told, events } = recorder();
    await reportApprovals(events, obj, { updateRevision: R, waves: [rest()] }, { updateRevision: R, waves: [rest('alice')] }, silentLogger);
    const waiting = { updateRevision: R, waves: [rest()], message: 'wave rest waits for approval: RolloutApprovals are not counted: x' };
    await reportApprovals(events, obj, { updateRevision: R, waves: [rest()] }, waiting, silentLogger, 'RolloutApprovals are not counted: x');
    await reportApprovals(events, obj, waiting, { ...waiting, clusters: { selected: 1, updated: 0, ready: 0, failed: 0, unreachable: 0, progressing: 1 } }, silentLogger, 'RolloutApprovals are not counted: x');
    expect(told).toEqual([`Normal WaveApproved: wave rest approved for revision ${R} by alice at 2026-12-01T10:00:00Z`, 'Warning ApprovalsNotCounted: RolloutApprovals are not counted: x']);
  });
});

describe('RolloutApproval', () => {
  test('its name: fleetsync, wave and revision; bounded to 63 characters, two waves never meeting', () => {
    expect(approvalName('app', 'prod', R)).toBe(`app-prod-${R}`);
    const long = 'a'.repeat(40);
    const [x, y] = [approvalName(long, `${'w'.repeat(30)}1`, R), approvalName(long, `${'w'.repeat(30)}2`, R)];
    expect([x.length, y.length]).toEqual([63, 63]);
    expect(x).not.toBe(y);
  });

  test('the spec: a revision of 16 hex digits, names for the FleetSync and the wave, an approver', () => {
    const good = { fleetSync: 'app', revision: R, wave: 'prod', approver: 'system:serviceaccount:team:approver' };
    expect(rolloutApprovalSpecSchema.safeParse(good).success).toBe(true);
    expect(rolloutApprovalSpecSchema.safeParse({ ...good, revision: 'v2' }).error?.issues[0]?.message).toContain('16 hex digits');
    expect(rolloutApprovalSpecSchema.safeParse({ ...good, wave: 'Prod!' }).success).toBe(false);
    expect(rolloutApprovalSpecSchema.safeParse({ ...good, approver: '' }).success).toBe(false);
  });
});
