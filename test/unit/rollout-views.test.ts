// A FleetSync rolling out in waves, in the views' pure parts: `get`'s
// progress beside its phase (and -o wide's rollout message), the wave the
// rollout is at, `tree`'s children grouped under their waves, and the web
// view's rollout panel.
import { describe, expect, test } from '@jest/globals';
import type { WaveStatus } from '../../src/api/fleet.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { rowCells } from '../../src/cli/get/sync-table.js';
import { renderTree } from '../../src/cli/tree/tree-render.js';
import { PLAIN } from '../../src/cli/terminal.js';
import { currentWave, groupByWave, rolloutView } from '../../src/views/rollout-view.js';
import { syncRow } from '../../src/views/sync-rows.js';
import { syncState, type FleetChildTree, type Tree } from '../../src/views/tree-model.js';
import { rolloutPanel } from '../../src/ui/rollout-panel.js';
import { buildView } from '../../src/ui/model.js';

const NS = 'apps';
const NOW = Date.parse('2030-01-02T00:00:00Z');
const OLD = '0123456789abcdef';
const NEW = 'fedcba9876543210';
const SOAK = '2030-01-02T00:10:00.000Z';

/** A wave's status, failed and unreachable 0 unless said. */
type Wave = Omit<WaveStatus, 'failed' | 'unreachable'> & Partial<Pick<WaveStatus, 'failed' | 'unreachable'>>;

function fleet(phase: string, waves: Wave[], extra: { message?: string; ready?: string; reason?: string; readyMessage?: string; rollout?: Record<string, unknown> } = {}): KubeObject {
  const full = waves.map((w) => ({ failed: 0, unreachable: 0, ...w }));
  const count = (f: 'clusters' | 'updated' | 'ready' | 'failed' | 'unreachable') => full.reduce((s, w) => s + w[f], 0);
  const selected = count('clusters');
  return {
    apiVersion: 'syncprims.dev/v1alpha1',
    kind: 'FleetSync',
    metadata: { name: 'web', namespace: NS, creationTimestamp: '2030-01-01T00:00:00Z' },
    spec: { kind: 'ProxySync', rollout: { waves: waves.map((w) => ({ name: w.name })), ...extra.rollout } },
    status: {
      conditions: [{ type: 'Ready', status: extra.ready ?? 'Unknown', reason: extra.reason ?? 'Progressing', message: extra.readyMessage ?? '' }],
      phase,
      currentRevision: OLD,
      updateRevision: NEW,
      clusters: { selected, updated: count('updated'), ready: count('ready'), failed: count('failed'), unreachable: count('unreachable'), progressing: 0 },
      readyClusters: `${count('ready')}/${selected}`,
      waves: full,
      ...(extra.message ? { message: extra.message } : {}),
    },
  };
}

const canaryDone = { name: 'canary', clusters: 1, updated: 1, ready: 1, members: ['edge-1'] };
const halted = fleet(
  'Halted',
  [
    { name: 'canary', clusters: 1, updated: 1, ready: 0, failed: 1, members: ['edge-1'] },
    { name: 'rest', clusters: 2, updated: 0, ready: 0, members: ['edge-2', 'edge-3'] },
  ],
  { ready: 'False', reason: 'RolloutHalted', message: 'wave canary: 1 failing (at most 0): edge-1', readyMessage: 'wave canary: 1 failing (at most 0): edge-1' },
);

describe('get: a FleetSync rolling out in waves', () => {
  test('its progress beside its phase: waves done (every cluster Ready with the update revision) of all, clusters updated of selected', () => {
    const progressing = fleet('Progressing', [canaryDone, { name: 'rest', clusters: 4, updated: 2, ready: 1, members: [] }], { readyMessage: '2/5 clusters Ready', message: 'wave rest: 1/4 Ready with revision ' + NEW });
    const shape = { allNamespaces: false, style: PLAIN, now: NOW };
    expect(rowCells(syncRow(progressing), shape)).toEqual(['FleetSync', 'web', 'Unknown', 'Progressing 1/2 waves, 3/5', OLD, '2/5 ready', '-', '24h']);
    expect(rowCells(syncRow(halted), shape)[3]).toBe('Halted (RolloutHalted) 0/2 waves, 1/3');
  });

  test('-o wide: the rollout message, then the Ready message when it says something else', () => {
    const progressing = fleet('Progressing', [canaryDone, { name: 'rest', clusters: 4, updated: 2, ready: 1, members: [] }], { readyMessage: '2/5 clusters Ready', message: 'wave rest: 1/4 Ready' });
    const wide = { allNamespaces: false, wide: true, style: PLAIN, now: NOW };
    expect(rowCells(syncRow(progressing), wide).slice(-2)).toEqual([NEW, 'wave rest: 1/4 Ready; 2/5 clusters Ready']);
    expect(rowCells(syncRow(halted), wide).slice(-1)).toEqual(['wave canary: 1 failing (at most 0): edge-1']);
  });
});

describe('the wave the rollout is at', () => {
  test('the first not done; when Soaking, the wave soaking; none when Complete', () => {
    const w = (done: boolean, soakUntil?: string) => ({ done, ...(soakUntil ? { soakUntil } : {}) });
    expect(currentWave([w(true), w(false), w(false)], 'Progressing')).toBe(1);
    expect(currentWave([w(true, '2030-01-01T00:00:00Z'), w(true, SOAK), w(false)], 'Soaking')).toBe(1);
    expect(currentWave([w(true), w(true)], 'Complete')).toBeUndefined();
    expect(currentWave([w(false), w(false)], 'Halted')).toBe(0);
  });

  test('approval needed (spec) and given (status); unreachable clusters count as done when skipped', () => {
    const awaiting = fleet('AwaitingApproval', [canaryDone, { name: 'prod', clusters: 2, updated: 0, ready: 0, members: ['edge-2', 'edge-3'] }], {
      rollout: { waves: [{ name: 'canary', approval: true }, { name: 'prod', approval: true }] },
    });
    (awaiting.status as { waves: Wave[] }).waves[0]!.approved = true;
    const view = rolloutView(awaiting)!;
    expect(view.waves.map((x) => [x.name, x.approval, x.done, x.current ?? false])).toEqual([
      ['canary', 'approved', true, false],
      ['prod', 'required', false, true],
    ]);
    const away = [{ name: 'a', clusters: 2, updated: 2, ready: 1, unreachable: 1, members: [] }, { name: 'b', clusters: 1, updated: 0, ready: 0, members: [] }];
    expect(rolloutView(fleet('Progressing', away, { rollout: { onUnreachable: 'Skip' } }))?.progress).toBe('1/2 waves, 2/3');
    expect(rolloutView(fleet('Progressing', away))?.progress).toBe('0/2 waves, 2/3');
  });

  test('who approved a wave, where status names them: in the view, the tree line and the web panel', () => {
    const approved = fleet('AwaitingApproval', [{ ...canaryDone, approved: true, approvedBy: 'alice@example.com' }, { name: 'prod', clusters: 2, updated: 0, ready: 0, members: [] }], {
      rollout: { waves: [{ name: 'canary', approval: true }, { name: 'prod', approval: true }] },
    });
    const view = rolloutView(approved)!;
    expect(view.waves.map((w) => [w.name, w.approval, w.approvedBy])).toEqual([['canary', 'approved', 'alice@example.com'], ['prod', 'required', undefined]]);
    expect(rolloutPanel(approved)?.waves.map((w) => w.approval)).toEqual(['Approved by alice@example.com', 'Awaiting approval']);
    const tree: Tree = { ...syncState(approved), server: 'https://127.0.0.1:6441', dependsOn: [], dependents: [], waves: view.waves, children: [] };
    expect(renderTree(tree, PLAIN).find((l) => l.includes('canary'))).toContain('approved by alice@example.com');
  });

  test('no waves in status: no rollout view (get and tree as before)', () => {
    const plain = fleet('Complete', []);
    delete (plain.status as { waves?: unknown }).waves;
    expect(rolloutView(plain)).toBeUndefined();
    expect(syncRow(plain).fleet?.progress).toBeUndefined();
    expect(syncState(plain).progress).toBeUndefined();
  });
});

describe('tree: the children under their waves', () => {
  const kid = (cluster: string, ready: 'True' | 'False', reason: string): FleetChildTree => ({
    clusterName: cluster,
    sync: { kind: 'ProxySync', namespace: NS, name: `web-${cluster}`, ready, reason, notFollowed: 'not looked into here' },
  });

  test('in wave order, each wave with its counts, soak and approval, the one the rollout is at marked; a child of no wave last', () => {
    const soaking = fleet(
      'Soaking',
      [
        { name: 'canary', clusters: 1, updated: 1, ready: 1, soakUntil: SOAK, approved: true, members: ['edge-1'] },
        { name: 'rest', clusters: 2, updated: 0, ready: 0, members: ['edge-2', 'edge-3'] },
      ],
      { message: `wave canary is Ready with revision ${NEW}: soaking until ${SOAK}` },
    );
    const tree: Tree = {
      ...syncState(soaking),
      server: 'https://127.0.0.1:6441',
      dependsOn: [],
      dependents: [],
      waves: rolloutView(soaking)!.waves,
      children: [kid('edge-1', 'True', 'Succeeded'), kid('edge-2', 'True', 'Succeeded'), kid('edge-3', 'True', 'Succeeded'), kid('edge-9', 'True', 'Succeeded')],
    };
    expect(renderTree(tree, PLAIN)).toEqual([
      `FleetSync/apps/web  Ready=Unknown  Progressing  Soaking  1/2 waves, 1/3 updated  1/3 clusters ready  ${OLD}`,
      '└── waves (2)',
      `    ├── canary  1/1 updated, 1/1 ready, 0 failed, 0 unreachable  soak until ${SOAK}  approved  ◀ the rollout is here`,
      '    │   └── edge-1  ProxySync/web-edge-1  Ready=True  Succeeded',
      '    │       └── not followed: not looked into here',
      '    ├── rest  0/2 updated, 0/2 ready, 0 failed, 0 unreachable',
      '    │   ├── edge-2  ProxySync/web-edge-2  Ready=True  Succeeded',
      '    │   │   └── not followed: not looked into here',
      '    │   └── edge-3  ProxySync/web-edge-3  Ready=True  Succeeded',
      '    │       └── not followed: not looked into here',
      '    └── in no wave (1)',
      '        └── edge-9  ProxySync/web-edge-9  Ready=True  Succeeded',
      '            └── not followed: not looked into here',
    ]);
  });

  test('groupByWave keeps the items\' order within a wave and leaves no empty rest', () => {
    const waves = rolloutView(halted)!.waves;
    expect(groupByWave(['edge-3', 'edge-1', 'edge-2'], (c) => c, waves).map((g) => [g.wave?.name, g.items])).toEqual([
      ['canary', ['edge-1']],
      ['rest', ['edge-3', 'edge-2']],
    ]);
  });
});

describe('web view: the rollout panel', () => {
  test('phase, message, revisions, progress and a row per wave, the current one marked', () => {
    expect(rolloutPanel(halted)).toEqual({
      phase: 'Halted',
      message: 'wave canary: 1 failing (at most 0): edge-1',
      currentRevision: OLD,
      updateRevision: NEW,
      progress: '0/2 waves, 1/3',
      waves: [
        { name: 'canary', clusters: 1, updated: 1, ready: 0, failed: 1, unreachable: 0, soak: '-', approval: '-', current: true },
        { name: 'rest', clusters: 2, updated: 0, ready: 0, failed: 0, unreachable: 0, soak: '-', approval: '-', current: false },
      ],
    });
  });

  test('soak and approval as the page says them; no panel for a sync or a FleetSync without waves', () => {
    const awaiting = fleet('AwaitingApproval', [{ ...canaryDone, soakUntil: SOAK }, { name: 'prod', clusters: 2, updated: 0, ready: 0, members: [] }, { name: 'last', clusters: 1, updated: 0, ready: 0, members: [] }], {
      rollout: { waves: [{ name: 'canary' }, { name: 'prod', approval: true }, { name: 'last', approval: true }] },
    });
    expect(rolloutPanel(awaiting)?.waves.map((w) => [w.name, w.soak, w.approval, w.current])).toEqual([
      ['canary', `until ${SOAK}`, '-', false],
      ['prod', '-', 'Awaiting approval', true],
      ['last', '-', 'Required', false],
    ]);
    expect(rolloutPanel({ ...halted, kind: 'Sync' })).toBeUndefined();
    expect(rolloutPanel({ ...halted, status: { phase: 'Complete' } })).toBeUndefined();
  });

  test('the FleetSyncs list shows the progress too', () => {
    expect(buildView([halted]).fleets.map((f) => [f.phase, f.progress])).toEqual([['Halted', '0/2 waves, 1/3']]);
  });
});
