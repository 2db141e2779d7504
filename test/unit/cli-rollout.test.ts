import { describe, expect, test } from '@jest/globals';
import { historyLines, undoTarget, type Revision } from '../../src/cli/rollout/rollout-revisions.js';
import { awaitingWave, NOT_OBSERVED, renderStatus, rolloutVerdict, type FleetObject } from '../../src/cli/rollout/rollout-state.js';
import { styleFor } from '../../src/cli/terminal.js';

const REF = 'fleetsync/app -n fleet';
const A = 'aaaaaaaaaaaaaaaa';
const B = 'bbbbbbbbbbbbbbbb';
const C = 'cccccccccccccccc';

function fleet(status: FleetObject['status'], spec: FleetObject['spec'] = { rollout: { waves: [{ name: 'canary' }, { name: 'rest', approval: true }] } }, generation = 2): FleetObject {
  return { apiVersion: 'syncprims.dev/v1alpha1', kind: 'FleetSync', metadata: { name: 'app', namespace: 'fleet', generation }, spec, status: { observedGeneration: 2, ...status } };
}

const wave = (name: string, counts: Partial<Record<'clusters' | 'updated' | 'ready' | 'failed' | 'unreachable', number>>, extra: object = {}) => ({
  name,
  clusters: 0,
  updated: 0,
  ready: 0,
  failed: 0,
  unreachable: 0,
  ...counts,
  ...extra,
});

describe('rolloutVerdict', () => {
  test('a status of an older generation (or none) is the operator not having taken the change', () => {
    expect(rolloutVerdict(fleet({ phase: 'Complete' }, undefined, 3), REF)).toEqual({ state: 'working', doing: NOT_OBSERVED });
    expect(rolloutVerdict(fleet({}), REF)).toEqual({ state: 'working', doing: NOT_OBSERVED });
  });

  test('Complete, Halted, Paused and AwaitingApproval settle it, the last two with what to run', () => {
    const ready = { type: 'Ready', status: 'True' as const, reason: 'Succeeded', message: '2/2 clusters Ready at revision x', lastTransitionTime: '' };
    expect(rolloutVerdict(fleet({ phase: 'Complete', conditions: [ready] }), REF)).toEqual({ state: 'complete', message: '2/2 clusters Ready at revision x' });
    expect(rolloutVerdict(fleet({ phase: 'Halted', message: 'wave canary: 1 failing (at most 0): east' }), REF)).toEqual({ state: 'halted', message: 'wave canary: 1 failing (at most 0): east' });
    expect(rolloutVerdict(fleet({ phase: 'Paused', message: 'paused at wave canary' }), REF)).toEqual({ state: 'held', phase: 'Paused', message: 'paused at wave canary', hint: `syncprims rollout resume ${REF}` });
    expect(rolloutVerdict(fleet({ phase: 'AwaitingApproval', message: 'wave rest waits' }), REF)).toMatchObject({ state: 'held', phase: 'AwaitingApproval', hint: `syncprims rollout approve ${REF}` });
  });

  test('rolling or soaking: what it does, with the clusters Ready', () => {
    const clusters = { selected: 3, updated: 1, ready: 1, failed: 0, unreachable: 0, progressing: 2 };
    expect(rolloutVerdict(fleet({ phase: 'Soaking', message: 'wave canary is Ready: soaking until T', clusters }), REF)).toEqual({
      state: 'working',
      doing: 'Soaking: wave canary is Ready: soaking until T; 1/3 clusters Ready',
    });
  });

  test('without waves, failing clusters end it as Halted (nothing would halt it); with waves they are within the budget', () => {
    const failing = { type: 'Ready', status: 'False' as const, reason: 'ClustersFailing', message: '1/2 clusters Ready; 1 failing: east', lastTransitionTime: '' };
    expect(rolloutVerdict(fleet({ phase: 'Progressing', conditions: [failing] }, {}), REF)).toEqual({ state: 'halted', message: failing.message });
    expect(rolloutVerdict(fleet({ phase: 'Progressing', conditions: [failing] }), REF).state).toBe('working');
  });

  test('a suspended FleetSync waits on a person too', () => {
    const suspended = { type: 'Ready', status: 'Unknown' as const, reason: 'Suspended', message: 'spec.suspend is true', lastTransitionTime: '' };
    expect(rolloutVerdict(fleet({ phase: 'Progressing', conditions: [suspended] }), REF)).toMatchObject({ state: 'held', phase: 'Suspended', hint: `syncprims resume ${REF}` });
  });
});

describe('renderStatus', () => {
  test('phase, revisions, message, clusters, a row per wave (approval asked and given) and the failing clusters', () => {
    const obj = fleet({
      phase: 'Halted',
      currentRevision: A,
      updateRevision: B,
      message: 'wave canary: 1 failing (at most 0): east',
      clusters: { selected: 6, updated: 1, ready: 0, failed: 1, unreachable: 0, progressing: 5 },
      waves: [
        wave('canary', { clusters: 1, updated: 1, failed: 1 }, { members: ['east'], soakUntil: '2030-01-01T00:00:00.000Z' }),
        wave('rest', { clusters: 5 }, { members: ['a', 'b', 'c', 'd', 'e'] }),
      ],
      failures: [{ cluster: 'east', reason: 'ApplyFailed', message: 'namespaces "x" not found' }],
    });
    expect(renderStatus(obj, 'FleetSync fleet/app')).toEqual([
      'FleetSync fleet/app: Halted',
      `revisions:  current ${A}, update ${B}`,
      'message:    wave canary: 1 failing (at most 0): east',
      'clusters:   0/6 Ready, 1 updated, 1 failed, 0 unreachable, 5 progressing',
      '',
      'WAVE     CLUSTERS   UPDATED   READY   FAILED   UNREACHABLE   SOAK UNTIL                 APPROVED   MEMBERS',
      'canary   1          1         0       1        0             2030-01-01T00:00:00.000Z   -          east',
      'rest     5          0         0       0        0             -                          no         a, b, c and 2 more',
      '',
      'failing clusters:',
      '  east: ApplyFailed: namespaces "x" not found',
    ]);
    const approved = fleet({ phase: 'Complete', currentRevision: A, updateRevision: A, waves: [wave('rest', { clusters: 1 }, { approved: true })] });
    expect(renderStatus(approved, 'FleetSync fleet/app')).toContain(`revisions:  current ${A}, update ${A} (the same)`);
    expect(renderStatus(approved, 'FleetSync fleet/app').at(-1)).toMatch(/^rest +1 +0 +0 +0 +0 +- +yes +-$/);
    const named = fleet({ phase: 'Complete', currentRevision: A, updateRevision: A, waves: [wave('rest', { clusters: 1 }, { approved: true, approvedBy: 'alice@example.com' })] });
    expect(renderStatus(named, 'FleetSync fleet/app').at(-1)).toMatch(/^rest +1 +0 +0 +0 +0 +- +by alice@example.com +-$/);
  });
});

describe('approve', () => {
  const spec = { rollout: { waves: [{ name: 'canary', approval: true }, { name: 'eu' }, { name: 'us', approval: true }] } };

  test('the wave awaited: the first with approval that the status does not show approved', () => {
    expect(awaitingWave(fleet({ phase: 'AwaitingApproval', updateRevision: B }, spec))).toBe('canary');
    const canary = { name: 'canary', clusters: 1, updated: 1, ready: 1, failed: 0, unreachable: 0 };
    expect(awaitingWave(fleet({ phase: 'AwaitingApproval', updateRevision: B, waves: [canary] }, spec))).toBe('canary');
    expect(awaitingWave(fleet({ phase: 'AwaitingApproval', updateRevision: B, waves: [{ ...canary, approved: true, approvedBy: 'alice' }] }, spec))).toBe('us');
  });

  test('nothing awaits approval in another phase, or while the operator has not seen the latest spec', () => {
    expect(awaitingWave(fleet({ phase: 'Progressing', updateRevision: B }, spec))).toBeUndefined();
    expect(awaitingWave(fleet({ phase: 'AwaitingApproval', updateRevision: B }, spec, 3))).toBeUndefined();
  });
});

describe('history and undo', () => {
  const data = { kind: 'RemoteSync', template: { spec: { source: { inline: [] } } } } as unknown as Revision['data'];
  const revisions: Revision[] = [
    { number: 1, digest: A, at: '2030-01-01T00:00:00Z', data },
    { number: 3, digest: C, at: '2030-01-01T00:02:00Z', data },
    { number: 2, digest: B, at: '2030-01-01T00:01:00Z', data },
  ];

  test('newest first, marked current and update, with how long ago each was rolled out', () => {
    const now = Date.parse('2030-01-01T00:05:00Z');
    expect(historyLines(revisions, { currentRevision: B, updateRevision: C }, now)).toEqual([
      'REVISION   DIGEST             STATUS    ROLLED OUT',
      `3          ${C}   update    3m`,
      `2          ${B}   current   4m`,
      `1          ${A}   -         5m`,
    ]);
    expect(historyLines(revisions, { currentRevision: C, updateRevision: C }, now)[1]).toContain('current, update');
  });

  test('undo goes by default to the newest revision that is not the template now', () => {
    expect(undoTarget(revisions, C).number).toBe(2);
    // After an undo to A (numbered 4 now), the next undo goes to C.
    expect(undoTarget([...revisions.filter((r) => r.digest !== A), { number: 4, digest: A, data }], A).number).toBe(3);
  });

  test('--to-revision names a kept revision, not the template itself', () => {
    expect(undoTarget(revisions, C, 1).digest).toBe(A);
    expect(() => undoTarget(revisions, C, 7)).toThrow('there is no revision 7 (kept: 3, 2, 1; see syncprims rollout history)');
    expect(() => undoTarget(revisions, C, 3)).toThrow(`revision 3 (${C}) is the template already: nothing to undo`);
    expect(() => undoTarget([{ number: 1, digest: C, data }], C)).toThrow('there is no earlier revision to go back to (kept: 1)');
    expect(() => undoTarget([{ number: 1, digest: A }], C)).toThrow(`revision 1 (${A}) holds no template`);
  });

  const planted: Revision = { number: 9, digest: A, untrusted: { name: 'app-planted', why: 'its data hashes to x, not to y as its name says' } };

  test('a revision that is not the FleetSync\'s own is not listed in the table but named as ignored, with why', () => {
    const now = Date.parse('2030-01-01T00:05:00Z');
    const lines = historyLines([...revisions, planted], { currentRevision: B, updateRevision: C }, now);
    expect(lines.slice(0, 4)).toEqual(historyLines(revisions, { currentRevision: B, updateRevision: C }, now));
    expect(lines.slice(4)).toEqual(['ignored: ControllerRevision app-planted (revision 9): its data hashes to x, not to y as its name says']);
  });

  test('undo refuses one that is not the FleetSync\'s own, saying why, by default and by number; of two of one number it takes its own', () => {
    expect(() => undoTarget([...revisions, planted], C)).toThrow(
      "revision 9 (ControllerRevision app-planted) is not this FleetSync's own: its data hashes to x, not to y as its name says; it is not written back (its own revisions: 3, 2, 1;",
    );
    expect(() => undoTarget([...revisions, planted], C, 9)).toThrow('is not this FleetSync\'s own');
    expect(undoTarget([...revisions, { ...planted, number: 1 }], C, 1)).toMatchObject({ number: 1, digest: A, data });
    expect(() => undoTarget([revisions[1]!, { ...planted, number: 1, digest: C }], C, 1)).toThrow('is not this FleetSync\'s own');
  });
});

describe('renderStatus on a terminal that shows colour', () => {
  test("a cluster's reason and message that would erase a line and rewrite it in green lose their control sequences; our colours stay", () => {
    const erase = '\x1b[1A\x1b[2K\r\x1b[32m';
    const obj = fleet({ phase: 'Halted', message: `${erase}every cluster Ready`, failures: [{ cluster: 'east', reason: `${erase}Halted`, message: `${erase}all good\x1b]0;title\x07` }] });
    const lines = renderStatus(obj, 'FleetSync fleet/app', styleFor({ isTTY: true }, { TERM: 'xterm' }));
    expect(lines[0]).toBe('FleetSync fleet/app: \x1b[31mHalted\x1b[39m');
    expect(lines).toContain('message:    every cluster Ready');
    expect(lines.at(-1)).toBe('  east: Halted: all good');
    expect(rolloutVerdict(obj, REF)).toEqual({ state: 'halted', message: 'every cluster Ready' });
    expect(rolloutVerdict(fleet({ phase: 'Progressing', message: `${erase}wave one` }), REF)).toEqual({ state: 'working', doing: 'Progressing: wave one' });
  });
});

