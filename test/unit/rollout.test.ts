import { describe, expect, test } from '@jest/globals';
import type { FleetSyncStatus, RolloutSpec } from '../../src/api/fleet.js';
import type { ClusterState } from '../../src/fleet/fleet-status.js';
import { planRollout, type RolloutInput, type RolloutMember } from '../../src/fleet/rollout.js';
import { withRollout } from '../../src/fleet/rollout-status.js';

const NOW = Date.parse('2026-11-28T10:00:00Z');
const U = 'new';
const OLD = 'old';

type Where = 'old-ready' | 'new-ready' | 'new-progressing' | 'new-failed' | 'old-failed' | 'new-unreachable' | 'none';
const STATES: Record<Where, { revision?: string; state: ClusterState }> = {
  'old-ready': { revision: OLD, state: { state: 'progressing', updated: false } },
  'new-ready': { revision: U, state: { state: 'ready' } },
  'new-progressing': { revision: U, state: { state: 'progressing', updated: true } },
  'new-failed': { revision: U, state: { state: 'failed', updated: true, reason: 'ApplyFailed', message: 'no' } },
  'old-failed': { revision: OLD, state: { state: 'failed', updated: false, reason: 'ApplyFailed', message: 'no' } },
  'new-unreachable': { revision: U, state: { state: 'unreachable', updated: true, message: 'down' } },
  none: { state: { state: 'progressing', updated: false } },
};

/** Clusters `name:where:tier`. */
function members(...specs: string[]): RolloutMember[] {
  return specs.map((s) => {
    const [name, where, tier = 'rest'] = s.split(':') as [string, Where, string?];
    return { name, labels: { tier }, ...STATES[where], admittedAt: where.startsWith('new') ? NOW - 60_000 : undefined };
  });
}

const twoWaves: RolloutSpec = { waves: [{ name: 'canary', selector: { matchLabels: { tier: 'canary' } } }, { name: 'rest' }] };

function plan(rollout: RolloutSpec, ms: RolloutMember[], over: Partial<RolloutInput> = {}) {
  return planRollout({ rollout, update: U, previous: {}, members: ms, now: NOW, approvalOf: () => undefined, unmetGates: new Map(), ...over });
}
const sorted = (s: Set<string>) => [...s].sort();

describe('a cluster whose template of the revision cannot be made (a value missing, an override that does not apply)', () => {
  const unmade = (name: string, tier: string, revision?: string): RolloutMember => ({
    name,
    labels: { tier },
    revision,
    state: { state: 'failed', updated: false, reason: 'SubstitutionFailed', message: 'no value for region' },
    unmade: true,
  });

  test('fails the revision in its wave, whatever its child has: past maxFailures the rollout halts there, and the next wave never starts', () => {
    for (const revision of [undefined, OLD]) {
      const p = plan(twoWaves, [unmade('a', 'canary', revision), ...members('b:old-ready')]);
      expect(p.phase).toBe('Halted');
      expect(p.message).toBe('wave canary: 1 failing (at most 0): a');
      expect(p.update.has('b')).toBe(false);
    }
  });

  test('within the failure budget the wave goes on without it', () => {
    const p = plan({ waves: [{ name: 'canary', selector: { matchLabels: { tier: 'canary' } }, maxFailures: 1 }, { name: 'rest' }] }, [unmade('a', 'canary'), ...members('c:new-ready:canary', 'b:old-ready')]);
    expect(p.phase).not.toBe('Halted');
    expect(p.waves[0]).toMatchObject({ name: 'canary', failed: 1 });
  });

  test('the same failure at an older revision, not unmade, is not counted against the new one (it fixes forward)', () => {
    const p = plan(twoWaves, members('a:old-failed:canary', 'b:old-ready'));
    expect(p.phase).not.toBe('Halted');
    expect(p.update.has('a')).toBe(true);
  });
});

describe('waves in order', () => {
  test('only the first wave is admitted while it is not Ready; the rest keep their revision', () => {
    const p = plan(twoWaves, members('a:old-ready:canary', 'b:old-ready', 'c:old-ready'));
    expect(sorted(p.update)).toEqual(['a']);
    expect(p.phase).toBe('Progressing');
    expect(p.waves.map((w) => [w.name, w.members])).toEqual([
      ['canary', ['a']],
      ['rest', ['b', 'c']],
    ]);
  });

  test('the next wave starts once the one before is Ready with the revision', () => {
    const p = plan(twoWaves, members('a:new-ready:canary', 'b:old-ready', 'c:old-ready'));
    expect(sorted(p.update)).toEqual(['a', 'b', 'c']);
  });

  test('Complete once every wave is Ready', () => {
    expect(plan(twoWaves, members('a:new-ready:canary', 'b:new-ready')).phase).toBe('Complete');
  });

  test('maxInFlight: at most so many of a wave take the revision at once; Ready ones free their place', () => {
    const rollout: RolloutSpec = { maxInFlight: 2 };
    expect(sorted(plan(rollout, members('a:old-ready', 'b:old-ready', 'c:old-ready', 'd:old-ready')).update)).toEqual(['a', 'b']);
    expect(sorted(plan(rollout, members('a:new-ready', 'b:new-progressing', 'c:old-ready', 'd:old-ready')).update)).toEqual(['a', 'b', 'c']);
  });

  test('membership is kept from the status while the same revision rolls; a newcomer is placed by its labels', () => {
    const previous: FleetSyncStatus = {
      updateRevision: U,
      waves: [
        { name: 'canary', clusters: 1, updated: 0, ready: 0, failed: 0, unreachable: 0, members: ['b'] },
        { name: 'rest', clusters: 1, updated: 0, ready: 0, failed: 0, unreachable: 0, members: ['a'] },
      ],
    };
    const p = plan(twoWaves, members('a:old-ready:canary', 'b:old-ready', 'n:none:canary'), { previous });
    expect(p.waves.map((w) => w.members)).toEqual([['b', 'n'], ['a']]);
    expect(sorted(p.update)).toEqual(['b', 'n']);
    // Another revision: decided again from the labels.
    expect(plan(twoWaves, members('a:old-ready:canary', 'b:old-ready'), { previous: { ...previous, updateRevision: 'older' } }).waves[0]!.members).toEqual(['a']);
  });

  test('clusters no wave selects go last, or halt the rollout with unmatched: Error', () => {
    const only: RolloutSpec = { waves: [{ name: 'canary', selector: { matchLabels: { tier: 'canary' } } }] };
    expect(plan(only, members('a:new-ready:canary', 'b:old-ready')).waves.map((w) => w.name)).toEqual(['canary', 'unmatched']);
    const p = plan({ ...only, unmatched: 'Error' }, members('a:old-ready:canary', 'b:old-ready'));
    expect(p.phase).toBe('Halted');
    expect(p.update.size).toBe(0);
    expect(p.message).toContain('b');
  });
});

describe('failure is a state', () => {
  test('past maxFailures the rollout halts: no more admitted, the updated keep it', () => {
    const p = plan({ maxInFlight: 1 }, members('a:new-failed', 'b:old-ready', 'c:old-ready'));
    expect(p.phase).toBe('Halted');
    expect(sorted(p.update)).toEqual(['a']);
    expect(p.message).toContain('wave all: 1 failing (at most 0): a');
  });

  test('a halted wave of many failing clusters names ten of them and counts the rest (its message stays small at any fleet size)', () => {
    const name = (i: number): string => `c${String(i).padStart(3, '0')}`;
    const failing = Array.from({ length: 1_000 }, (_, i) => `${name(i)}:new-failed`);
    const p = plan({}, members(...failing));
    expect(p.phase).toBe('Halted');
    expect(p.message).toBe(`wave all: 1000 failing (at most 0): ${Array.from({ length: 10 }, (_, i) => name(i)).join(', ')} and 990 more`);
    const only: RolloutSpec = { waves: [{ name: 'canary', selector: { matchLabels: { tier: 'canary' } } }], unmatched: 'Error' };
    const unmatched = plan(only, members('a:old-ready:canary', ...Array.from({ length: 50 }, (_, i) => `u${String(i).padStart(2, '0')}:old-ready`)));
    expect(unmatched.message).toMatch(/^clusters no wave selects \(unmatched: Error\): u00, u01, .*, u09 and 40 more$/);
  });

  test('within maxFailures it goes on', () => {
    const p = plan({ maxInFlight: 1, maxFailures: 1 }, members('a:new-failed', 'b:old-ready', 'c:old-ready'));
    expect(p.phase).toBe('Progressing');
    expect(sorted(p.update)).toEqual(['a', 'b']);
  });

  test('a halt in the first wave never reaches the second', () => {
    const p = plan(twoWaves, members('a:new-failed:canary', 'b:old-ready', 'c:old-ready'));
    expect(p.phase).toBe('Halted');
    expect(sorted(p.update)).toEqual(['a']);
  });

  test('not Ready by the progress deadline is failure', () => {
    const ms = members('a:new-progressing', 'b:old-ready');
    ms[0]!.admittedAt = NOW - 16 * 60_000;
    const p = plan({ maxInFlight: 1 }, ms);
    expect(p.phase).toBe('Halted');
    expect(p.failed.get('a')).toMatchObject({ state: 'failed', reason: 'ProgressDeadlineExceeded' });
    const early = plan({ maxInFlight: 1 }, members('a:new-progressing', 'b:old-ready'));
    expect(early.phase).toBe('Progressing');
    expect(early.wakeInMs).toBe(14 * 60_000 + 1);
  });

  test('a cluster failing at an older revision fixes forward at once, outside maxInFlight, even in a later wave', () => {
    const p = plan({ ...twoWaves, maxInFlight: 1 }, members('a:old-ready:canary', 'b:old-failed', 'c:old-ready'));
    expect(sorted(p.update)).toEqual(['a', 'b']);
  });

  test('unreachable: Wait holds the wave, Skip lets it go on, Fail counts it', () => {
    const ms = () => members('a:new-unreachable:canary', 'b:old-ready');
    expect(sorted(plan(twoWaves, ms()).update)).toEqual(['a']);
    expect(sorted(plan({ ...twoWaves, onUnreachable: 'Skip' }, ms()).update)).toEqual(['a', 'b']);
    const fail = plan({ ...twoWaves, onUnreachable: 'Fail' }, ms());
    expect(fail.phase).toBe('Halted');
    expect(fail.failed.get('a')).toMatchObject({ reason: 'ClusterUnreachable' });
  });
});

describe('gates', () => {
  test('soak: the next wave waits until the wave has been Ready for its soak, kept across reconciles', () => {
    const rollout: RolloutSpec = { ...twoWaves, soak: '10m' };
    const first = plan(rollout, members('a:new-ready:canary', 'b:old-ready'));
    expect(first.phase).toBe('Soaking');
    expect(sorted(first.update)).toEqual(['a']);
    expect(first.waves[0]!.soakUntil).toBe('2026-11-28T10:10:00.000Z');
    expect(first.wakeInMs).toBe(10 * 60_000);
    const previous: FleetSyncStatus = { updateRevision: U, waves: first.waves };
    const later = plan(rollout, members('a:new-ready:canary', 'b:old-ready'), { previous, now: NOW + 10 * 60_000 });
    expect(sorted(later.update)).toEqual(['a', 'b']);
    // A wave that stopped being Ready starts its soak again once it is.
    const dropped = plan(rollout, members('a:new-progressing:canary', 'b:old-ready'), { previous, now: NOW + 5 * 60_000 });
    expect(dropped.waves[0]!.soakUntil).toBeUndefined();
  });

  test('paused: nothing more is admitted', () => {
    const p = plan({ ...twoWaves, paused: true }, members('a:new-ready:canary', 'b:old-ready'));
    expect(p.phase).toBe('Paused');
    expect(sorted(p.update)).toEqual(['a']);
  });

  test('approval: the wave waits for it, for this revision', () => {
    const rollout: RolloutSpec = { waves: [{ name: 'canary', selector: { matchLabels: { tier: 'canary' } } }, { name: 'rest', approval: true }] };
    const ms = () => members('a:new-ready:canary', 'b:old-ready');
    const waiting = plan(rollout, ms());
    expect(waiting.phase).toBe('AwaitingApproval');
    expect(sorted(waiting.update)).toEqual(['a']);
    const by = { approvedBy: 'alice', approvedAt: '2026-12-01T10:00:00Z', approval: 'app-rest' };
    const approved = plan(rollout, ms(), { approvalOf: (w) => (w === 'rest' ? by : undefined) });
    expect(sorted(approved.update)).toEqual(['a', 'b']);
    expect(approved.waves[1]).toMatchObject({ approved: true, approvedBy: 'alice', approvedAt: '2026-12-01T10:00:00Z' });
  });

  test('approval: asked only of waves with approval; a wave done keeps who approved it; a later wave may be approved ahead', () => {
    const rollout: RolloutSpec = { waves: [{ name: 'canary', selector: { matchLabels: { tier: 'canary' } }, approval: true }, { name: 'rest', approval: true }, { name: 'none' }] };
    const asked: string[] = [];
    const by = (w: string) => ({ approvedBy: `${w}-approver`, approvedAt: '2026-12-01T10:00:00Z', approval: w });
    const p = plan(rollout, members('a:new-ready:canary', 'b:old-ready'), { approvalOf: (w) => (asked.push(w), by(w)) });
    expect(asked.sort()).toEqual(['canary', 'rest']);
    expect(p.waves.map((w) => [w.name, w.approvedBy])).toEqual([['canary', 'canary-approver'], ['rest', 'rest-approver'], ['none', undefined]]);
    expect(sorted(p.update)).toEqual(['a', 'b']);
  });

  test('approvals that do not count (the approver policy missing): the wave waits and says why', () => {
    const rollout: RolloutSpec = { waves: [{ name: 'rest', approval: true }] };
    const p = plan(rollout, members('b:old-ready'), { approvalOf: () => ({ problem: 'RolloutApprovals are not counted: the policy is not installed' }) });
    expect([p.phase, p.message, sorted(p.update)]).toEqual(['AwaitingApproval', 'wave rest waits for approval: RolloutApprovals are not counted: the policy is not installed', []]);
    expect(p.approvalProblem).toBe('RolloutApprovals are not counted: the policy is not installed');
    expect(plan(rollout, members('b:old-ready')).approvalProblem).toBeUndefined();
    expect(p.waves[0]!.approved).toBeUndefined();
  });

  test('approval withdrawn: the wave admits no more, and those it admitted keep the revision', () => {
    const rollout: RolloutSpec = { waves: [{ name: 'rest', approval: true, maxInFlight: 1 }] };
    const p = plan(rollout, members('a:new-progressing', 'b:old-ready'));
    expect(p.phase).toBe('AwaitingApproval');
    expect(sorted(p.update)).toEqual(['a']);
    expect(p.waves[0]!.approved).toBeUndefined();
  });

  test('gates.dependsOn: the wave waits while they are not met, and says which', () => {
    const rollout: RolloutSpec = { waves: [{ name: 'canary', selector: { matchLabels: { tier: 'canary' } } }, { name: 'rest', gates: { dependsOn: [{ kind: 'Sync', name: 'smoke', requiredStatus: 'Current' }] } }] };
    const p = plan(rollout, members('a:new-ready:canary', 'b:old-ready'), { unmetGates: new Map([['rest', 'Sync/smoke (NotReady)']]) });
    expect(sorted(p.update)).toEqual(['a']);
    expect(p.message).toBe('wave rest waits for its gates: Sync/smoke (NotReady)');
  });
});

describe('the plan on the status', () => {
  test('every cluster already Ready with the revision (an undo to what the rest run): Complete, with no soak message left', () => {
    // The canary failed at a broken revision; the rest never left this one. Back on it, the canary is Ready again and its wave starts its soak.
    const p = plan({ ...twoWaves, soak: '5m' }, members('a:new-ready:canary', 'b:new-ready', 'c:new-ready'), { previous: { updateRevision: 'broken' } });
    expect(p.phase).toBe('Soaking');
    const status: FleetSyncStatus = { phase: 'Complete', currentRevision: U, updateRevision: U, message: 'wave canary: 1 failing (at most 0): a' };
    const next = withRollout(status, p, 3);
    expect(next.phase).toBe('Complete');
    expect(next.message).toBeUndefined();
    expect(next.waves?.map((w) => w.name)).toEqual(['canary', 'rest']);
  });

  test('a held rollout says why in its phase, its message and Ready; without a plan the waves and message go', () => {
    const p = plan(twoWaves, members('a:new-failed:canary', 'b:old-ready'));
    const next = withRollout({ phase: 'Progressing', updateRevision: U, currentRevision: OLD }, p, 2);
    expect(next).toMatchObject({ phase: 'Halted', message: 'wave canary: 1 failing (at most 0): a' });
    expect(next.conditions).toEqual([expect.objectContaining({ type: 'Ready', status: 'False', reason: 'RolloutHalted', message: 'wave canary: 1 failing (at most 0): a', observedGeneration: 2 })]);
    expect(withRollout(next, undefined, 2)).not.toHaveProperty('message');
    expect(withRollout(next, undefined, 2)).not.toHaveProperty('waves');
  });
});
