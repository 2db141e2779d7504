import { describe, expect, test } from '@jest/globals';
import { rolloutApprovalSpecSchema } from '../../src/api/approval.js';
import type { FleetSyncStatus } from '../../src/api/fleet.js';
import { approvalName, approvalOf, newlyApproved, type ApprovalObject } from '../../src/fleet/approvals.js';

const R = '0123456789abcdef';
const OTHER = 'fedcba9876543210';

function approval(name: string, at: string, spec: Partial<ApprovalObject['spec']> = {}, deleting = false): ApprovalObject {
  return {
    metadata: { name, creationTimestamp: at, ...(deleting ? { deletionTimestamp: '2026-12-01T12:00:00Z' } : {}) },
    spec: { fleetSync: 'app', revision: R, wave: 'prod', approver: `${name}-user`, ...spec },
  };
}

describe('which approval approves a wave', () => {
  test('one naming the FleetSync, revision and wave: its creator and creation time, as the API server recorded them', () => {
    expect(approvalOf([approval('a', '2026-12-01T10:00:00Z')], 'app', R, 'prod')).toEqual({ approvedBy: 'a-user', approvedAt: '2026-12-01T10:00:00Z', approval: 'a' });
  });

  test('another revision, wave or FleetSync approves nothing; nor one being deleted, nor one without an approver', () => {
    const others = [
      approval('rev', '2026-12-01T10:00:00Z', { revision: OTHER }),
      approval('wave', '2026-12-01T10:00:00Z', { wave: 'canary' }),
      approval('fleet', '2026-12-01T10:00:00Z', { fleetSync: 'other' }),
      approval('gone', '2026-12-01T10:00:00Z', {}, true),
      approval('nobody', '2026-12-01T10:00:00Z', { approver: '' }),
    ];
    expect(approvalOf(others, 'app', R, 'prod')).toBeUndefined();
    expect(approvalOf(others, 'app', OTHER, 'prod')?.approval).toBe('rev');
    expect(approvalOf(others, 'app', R, 'canary')?.approval).toBe('wave');
  });

  test('several: the first made, then by name, whatever the order they come in', () => {
    const later = approval('b', '2026-12-01T11:00:00Z');
    const first = approval('c', '2026-12-01T10:00:00Z');
    const tie = approval('a', '2026-12-01T11:00:00Z');
    expect(approvalOf([later, tie, first], 'app', R, 'prod')?.approvedBy).toBe('c-user');
    expect(approvalOf([later, tie], 'app', R, 'prod')?.approvedBy).toBe('a-user');
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
