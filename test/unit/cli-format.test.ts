// The CLI's pure parts: ages, revisions, tables, colour, kind/name, --status-selector, rows.
import { describe, expect, test } from '@jest/globals';
import { CommanderError } from 'commander';
import { CliError, ExitCode, exitCodeOf, UsageError } from '../../src/cli/errors.js';
import { humanAge, shortRevision } from '../../src/cli/format.js';
import { kindOf, parseKindName, parseSyncRef } from '../../src/cli/kind-name.js';
import { parseStatusSelector, rowCells, tableHeader } from '../../src/cli/get/sync-table.js';
import { syncRow } from '../../src/views/sync-rows.js';
import { formatTable } from '../../src/cli/table.js';
import { colourEnabled, PLAIN, stripEscapes, styleFor } from '../../src/cli/terminal.js';
import { TransportError } from '../../src/kube/errors.js';
import type { KubeObject } from '../../src/kube/resources.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('humanAge (kubectl HumanDuration)', () => {
  test.each([
    [-5 * S, '<invalid>'],
    [-1 * S, '0s'],
    [5 * S, '5s'],
    [119 * S, '119s'],
    [2 * M, '2m'],
    [3 * M + 20 * S, '3m20s'],
    [42 * M, '42m'],
    [179 * M, '179m'],
    [3 * H, '3h'],
    [5 * H + 12 * M, '5h12m'],
    [30 * H, '30h'],
    [3 * D + 4 * H, '3d4h'],
    [4 * D, '4d'],
    [120 * D, '120d'],
    [2 * 365 * D + 30 * D, '2y30d'],
    [9 * 365 * D, '9y'],
  ])('%d ms is %s', (ms, text) => {
    expect(humanAge(ms)).toBe(text);
  });
});

describe('shortRevision', () => {
  const hex = 'a'.repeat(12) + 'b'.repeat(52);
  test('hashes are cut to 12 hex digits; others stay', () => {
    expect(shortRevision(`sha256:${hex}`)).toBe('sha256:aaaaaaaaaaaa');
    expect(shortRevision(`main@sha1:${'c'.repeat(40)}`)).toBe('main@sha1:cccccccccccc');
    expect(shortRevision('v1.2.3')).toBe('v1.2.3');
    expect(shortRevision(undefined)).toBe('-');
  });
});

describe('formatTable', () => {
  test('columns aligned three spaces apart, coloured cells measured without their codes, no trailing spaces', () => {
    const green = styleFor({ isTTY: true }, {}).green;
    const { lines } = formatTable(['NAME', 'READY', 'AGE'], [['a', green('True'), '5s'], ['longer-name', 'False', '3m']]);
    expect(lines.map(stripEscapes)).toEqual(['NAME          READY   AGE', 'a             True    5s', 'longer-name   False   3m']);
    expect(lines[1]).toContain('\x1b[32mTrue\x1b[39m');
  });
});

describe('colour', () => {
  test('only on a terminal, not with NO_COLOR, not on a dumb terminal', () => {
    expect(colourEnabled({ isTTY: true }, {})).toBe(true);
    expect(colourEnabled({ isTTY: false }, {})).toBe(false);
    expect(colourEnabled({}, {})).toBe(false);
    expect(colourEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colourEnabled({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(colourEnabled({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(styleFor({ isTTY: false }, {})).toBe(PLAIN);
    expect(PLAIN.red('x')).toBe('x');
  });
});

describe('kind/name', () => {
  test('kinds by name, singular, plural and short name, any case', () => {
    for (const alias of ['Sync', 'sync', 'SYNCS', 'sy', 'syncs.syncprims.dev']) expect(kindOf(alias)).toBe('Sync');
    for (const alias of ['RemoteSync', 'remotesyncs', 'rsy', 'RSY']) expect(kindOf(alias)).toBe('RemoteSync');
    for (const alias of ['ProxySync', 'proxysync', 'psy']) expect(kindOf(alias)).toBe('ProxySync');
    expect(kindOf('pod')).toBeUndefined();
  });

  test('kind, kind/name; a bare name or a wrong one is bad usage', () => {
    expect(parseKindName('sy')).toEqual({ kind: 'Sync' });
    expect(parseKindName('rsy/edge-1-base')).toEqual({ kind: 'RemoteSync', name: 'edge-1-base' });
    expect(parseSyncRef('ProxySync/app')).toEqual({ kind: 'ProxySync', name: 'app' });
    expect(() => parseKindName('app')).toThrow('"app" is not a kind (kinds: sync (sy), remotesync (rsy), proxysync (psy), fleetsync (fsy)): name a sync as kind/name, e.g. sync/app');
    expect(() => parseKindName('deploy/app')).toThrow(UsageError);
    expect(() => parseKindName('sync/')).toThrow('is not a valid object name');
    expect(() => parseKindName('sync/a/b')).toThrow('one slash');
    expect(() => parseSyncRef('sync')).toThrow('name the sync as kind/name');
  });
});

const sync = (name: string, status?: Record<string, unknown>, spec: Record<string, unknown> = {}, kind = 'Sync'): KubeObject => ({
  apiVersion: 'syncprims.dev/v1alpha1',
  kind,
  metadata: { name, namespace: 'apps', creationTimestamp: new Date(Date.now() - 4 * D).toISOString() },
  spec,
  status,
});
const ready = (status: string, reason: string) => ({ conditions: [{ type: 'Ready', status, reason, message: '', lastTransitionTime: '' }] });

describe('--status-selector', () => {
  const rows = {
    ok: syncRow(sync('ok', ready('True', 'Succeeded'))),
    bad: syncRow(sync('bad', ready('False', 'SourceError'))),
    busy: syncRow(sync('busy', ready('Unknown', 'Progressing'))),
    fresh: syncRow(sync('fresh')),
  };
  const names = (selector: string) =>
    Object.entries(rows)
      .filter(([, r]) => parseStatusSelector(selector)(r))
      .map(([n]) => n);

  test('ready=true|false|unknown (no Ready yet counts as unknown), ready!=true, any case', () => {
    expect(names('ready=false')).toEqual(['bad']);
    expect(names('Ready=True')).toEqual(['ok']);
    expect(names('ready=unknown')).toEqual(['busy', 'fresh']);
    expect(names('ready!=true')).toEqual(['bad', 'busy', 'fresh']);
    expect(names('ready!=true,ready!=unknown')).toEqual(['bad']);
  });

  test('anything else is bad usage', () => {
    for (const bad of ['ready', 'ready=maybe', 'stalled=true', '']) {
      expect(() => parseStatusSelector(bad)).toThrow(UsageError);
    }
  });
});

describe('rows', () => {
  const hex = 'f'.repeat(64);
  test('a RemoteSync: cluster from its kubeconfig Secret, pending dependencies as Kind/name', () => {
    const obj = sync(
      'edge',
      {
        ...ready('False', 'DependencyNotReady'),
        lastAppliedRevision: `sha256:${hex}`,
        pendingDependencies: [
          { kind: 'Sync', name: 'base', reason: 'NotReady' },
          { kind: 'ProxySync', name: 'other', namespace: 'infra', reason: 'NotFound' },
        ],
      },
      { kubeConfig: { secretRef: { name: 'edge-1-kubeconfig' } } },
      'RemoteSync',
    );
    expect(rowCells(syncRow(obj), { allNamespaces: false, style: PLAIN })).toEqual([
      'RemoteSync',
      'edge',
      'False',
      'DependencyNotReady',
      'sha256:ffffffffffff',
      'edge-1-kubeconfig',
      'Sync/base,ProxySync/infra/other',
      '4d',
    ]);
  });

  test('a ProxySync names its Cluster; a Sync none; -A adds the namespace', () => {
    const proxy = sync('p', undefined, { clusterRef: { name: 'edge-2' } }, 'ProxySync');
    expect(rowCells(syncRow(proxy), { allNamespaces: true, style: PLAIN })).toEqual(['ProxySync', 'apps', 'p', '-', '-', '-', 'edge-2', '-', '4d']);
    expect(rowCells(syncRow(sync('s')), { allNamespaces: false, style: PLAIN })[5]).toBe('-');
    expect(tableHeader({ allNamespaces: true })).toEqual(['KIND', 'NAMESPACE', 'NAME', 'READY', 'REASON', 'REVISION', 'CLUSTER', 'PENDING', 'AGE']);
    expect(tableHeader({ allNamespaces: false })).not.toContain('NAMESPACE');
  });
});

describe('exit codes', () => {
  test('0 ok, 1 failure, 2 usage (ours and commander\'s), 3 the cluster unreachable (also as a cause)', () => {
    expect(exitCodeOf(new Error('x'))).toBe(ExitCode.Failure);
    expect(exitCodeOf(new CliError('x'))).toBe(1);
    expect(exitCodeOf(new UsageError('x'))).toBe(2);
    expect(exitCodeOf(new CommanderError(1, 'commander.unknownOption', 'x'))).toBe(2);
    expect(exitCodeOf(new CommanderError(0, 'commander.helpDisplayed', 'x'))).toBe(0);
    expect(exitCodeOf(new TransportError('connect ECONNREFUSED'))).toBe(3);
    expect(exitCodeOf(new Error('reading', { cause: new TransportError('connect ECONNREFUSED') }))).toBe(3);
  });
});
