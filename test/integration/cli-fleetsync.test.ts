// `get`, `tree`, `graph` and `doctor` on FleetSyncs, as a user runs them (a
// real process, stdout a pipe). No operator: the FleetSyncs, their children
// (labelled as the FleetSync controller labels them) and every status are
// written here, as the controllers would. FleetSync `install` (RemoteSync
// children, Ready on both clusters) and `baseline` (ProxySync children,
// depending on install per cluster; failing on edge-2), and a Sync `app`
// depending on baseline. install's child for edge-1 reaches mgmt itself
// through its kubeconfig Secret and applied a ConfigMap there. In a second
// namespace, FleetSync `web` rolls out in three waves (canary done and soaked,
// early halted on edge-2, rest waiting for an approval).
import { beforeAll, describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { KubeClient } from '../../src/kube/client.js';
import type { Finding } from '../../src/cli/doctor/doctor-findings.js';
import type { Forest, Tree } from '../../src/views/tree-model.js';
import { assertCliBuilt, CLI, runCli, tableCells } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { clusterClient, kubeconfigPath } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { useTestNamespace } from '../support/namespace.js';
import { kubeconfigOf, putKubeconfigSecret } from '../support/remote.js';

const CLUSTER = 'mgmt';
const KUBECONFIG = kubeconfigPath(CLUSTER);
const API = '/apis/syncprims.dev/v1alpha1';
const NOW = new Date().toISOString();
const REV = '0123456789abcdef';
const NEXT = 'fedcba9876543210';
let client: KubeClient;
const ns = useTestNamespace(CLUSTER, 'cli-fsy');
/** The namespace of the rollout in waves. */
const rns = useTestNamespace(CLUSTER, 'cli-fsy-roll');
const cli = (command: string, ...args: string[]) => runCli([command, '--kubeconfig', KUBECONFIG, '-n', ns(), ...args]);
const rolloutCli = (command: string, ...args: string[]) => runCli([command, '--kubeconfig', KUBECONFIG, '-n', rns(), ...args]);
const SOAKED = '2030-01-01T00:10:00.000Z';
const HALT = 'wave early: 1 failing (at most 0): edge-2';

const ready = (status: 'True' | 'False' | 'Unknown', reason: string, message = '') => [{ type: 'Ready', status, reason, message, lastTransitionTime: NOW, observedGeneration: 1 }];
const template = { spec: { source: { inline: [] } } };

async function create(plural: string, kind: string, name: string, spec: Record<string, unknown>, status: Record<string, unknown>, labels?: Record<string, string>, namespace = ns()): Promise<void> {
  const metadata = { name, namespace, ...(labels ? { labels } : {}) };
  await client.request({ method: 'POST', path: `${API}/namespaces/${namespace}/${plural}`, body: { apiVersion: 'syncprims.dev/v1alpha1', kind, metadata, spec } });
  // The status subresource, written as the controller would.
  await client.request({
    method: 'PATCH',
    path: `${API}/namespaces/${namespace}/${plural}/${name}/status`,
    contentType: 'application/merge-patch+json',
    body: { status: { observedGeneration: 1, ...status } },
  });
}

const childLabels = (fleet: string, cluster: string) => ({ 'syncprims.dev/fleetsync': fleet, 'syncprims.dev/cluster': cluster });

beforeAll(async () => {
  assertCliBuilt();
  client = await clusterClient(CLUSTER);
  await installCrds(CLUSTER);
  await putKubeconfigSecret(client, ns(), 'edge-1-kubeconfig', await kubeconfigOf(CLUSTER));
  // As the operator applies it to a remote cluster: its owner labels, and the managing cluster's id (its kube-system uid) as origin.
  const origin = (await client.request<{ metadata: { uid: string } }>({ path: '/api/v1/namespaces/kube-system' })).metadata.uid;
  const owner = { 'syncprims.dev/owner-kind': 'RemoteSync', 'syncprims.dev/owner-namespace': ns(), 'syncprims.dev/owner-name': 'install-edge-1', 'syncprims.dev/origin': origin };
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fleet-cm', namespace: ns(), labels: owner }, data: { a: '1' } };
  await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/configmaps`, body: cm });
  const fleetSpec = (kind: string, extra: Record<string, unknown> = {}) => ({ clusters: { names: ['edge-1', 'edge-2'] }, kind, template, ...extra });
  const counts = (r: number, failed: number) => ({ selected: 2, updated: 2, ready: r, failed, unreachable: 0, progressing: 2 - r - failed });
  await create('fleetsyncs', 'FleetSync', 'install', fleetSpec('RemoteSync'), {
    conditions: ready('True', 'Succeeded', '2/2 clusters Ready at revision ' + REV),
    phase: 'Complete',
    currentRevision: REV,
    updateRevision: REV,
    clusters: counts(2, 0),
    readyClusters: '2/2',
  });
  await create('fleetsyncs', 'FleetSync', 'baseline', fleetSpec('ProxySync', { dependsOn: [{ kind: 'FleetSync', name: 'install' }] }), {
    conditions: ready('False', 'ClustersFailing', '1/2 clusters Ready; 1 failing: edge-2 (ApplyFailed)'),
    phase: 'Progressing',
    updateRevision: NEXT,
    clusters: counts(1, 1),
    readyClusters: '1/2',
    failures: [{ cluster: 'edge-2', reason: 'ApplyFailed', message: 'ConfigMap fleet/x: forbidden' }],
  });
  const inventory = { entries: [{ id: `${ns()}_fleet-cm__ConfigMap`, v: 'v1' }] };
  await create('remotesyncs', 'RemoteSync', 'install-edge-1', { kubeConfig: { secretRef: { name: 'edge-1-kubeconfig' } }, ...template.spec }, { conditions: ready('True', 'Succeeded'), lastAppliedRevision: 'sha256:1', lastAttemptedRevision: 'sha256:1', inventory }, childLabels('install', 'edge-1'));
  await create('remotesyncs', 'RemoteSync', 'install-edge-2', { kubeConfig: { secretRef: { name: 'edge-2-kubeconfig' } }, ...template.spec }, { conditions: ready('True', 'Succeeded') }, childLabels('install', 'edge-2'));
  for (const [cluster, status] of [['edge-1', ready('True', 'Succeeded')], ['edge-2', ready('False', 'ApplyFailed', 'ConfigMap fleet/x: forbidden')]] as const) {
    await create('proxysyncs', 'ProxySync', `baseline-${cluster}`, { clusterRef: { name: cluster }, dependsOn: [{ kind: 'RemoteSync', name: `install-${cluster}` }], template }, { conditions: status }, childLabels('baseline', cluster));
  }
  await create('syncs', 'Sync', 'app', { dependsOn: [{ kind: 'FleetSync', name: 'baseline' }], source: { inline: [] } }, { conditions: ready('False', 'DependencyNotReady') });
  await createRollout();
}, 60_000);

/** FleetSync `web` of rns(), halted in its second wave, and its children (one per wave). */
async function createRollout(): Promise<void> {
  const ring = (r: string) => ({ matchLabels: { ring: r } });
  const rollout = { waves: [{ name: 'canary', selector: ring('canary'), soak: '10m' }, { name: 'early', selector: ring('early') }, { name: 'rest', approval: true }] };
  const wave = (name: string, member: string, updated: number, r: number, failed: number, extra: Record<string, unknown> = {}) => ({ name, clusters: 1, updated, ready: r, failed, unreachable: 0, members: [member], ...extra });
  await create('fleetsyncs', 'FleetSync', 'web', { clusters: { names: ['edge-1', 'edge-2', 'edge-3'] }, kind: 'ProxySync', template, rollout }, {
    conditions: ready('False', 'RolloutHalted', HALT),
    phase: 'Halted',
    currentRevision: REV,
    updateRevision: NEXT,
    clusters: { selected: 3, updated: 2, ready: 1, failed: 1, unreachable: 0, progressing: 1 },
    readyClusters: '1/3',
    waves: [wave('canary', 'edge-1', 1, 1, 0, { soakUntil: SOAKED }), wave('early', 'edge-2', 1, 0, 1), wave('rest', 'edge-3', 0, 0, 0)],
    message: HALT,
  }, undefined, rns());
  const children: [string, ReturnType<typeof ready>][] = [['edge-1', ready('True', 'Succeeded')], ['edge-2', ready('False', 'ApplyFailed', 'ConfigMap web/x: forbidden')], ['edge-3', ready('True', 'Succeeded')]];
  for (const [cluster, status] of children) {
    await create('proxysyncs', 'ProxySync', `web-${cluster}`, { clusterRef: { name: cluster }, template }, { conditions: status }, childLabels('web', cluster), rns());
  }
}

describe('get', () => {
  test('with no kind, FleetSyncs too: phase where a sync has its reason, clusters ready/selected where a sync has its cluster', async () => {
    const { code, stdout, stderr } = await cli('get');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const rows = tableCells(stdout).slice(1);
    expect(rows.map((r) => `${r[0]}/${r[1]}`)).toEqual([
      'Sync/app',
      'RemoteSync/install-edge-1',
      'RemoteSync/install-edge-2',
      'ProxySync/baseline-edge-1',
      'ProxySync/baseline-edge-2',
      'FleetSync/baseline',
      'FleetSync/install',
    ]);
    expect(rows.find((r) => r[1] === 'baseline')?.slice(0, 6)).toEqual(['FleetSync', 'baseline', 'False', 'Progressing (ClustersFailing)', '-', '1/2 ready']);
    expect(rows.find((r) => r[1] === 'install')?.slice(0, 6)).toEqual(['FleetSync', 'install', 'True', 'Complete', REV, '2/2 ready']);
  });

  test('fleetsyncs and fsy/NAME; -o wide adds the revision rolled out and the message', async () => {
    const [all, one, wide] = await Promise.all([cli('get', 'fleetsyncs'), cli('get', 'fsy/baseline'), cli('get', 'fsy/baseline', '-o', 'wide')]);
    expect(tableCells(all.stdout).slice(1).map((r) => r[1])).toEqual(['baseline', 'install']);
    expect(tableCells(one.stdout).map((r) => r[1])).toEqual(['NAME', 'baseline']);
    const [header, row] = tableCells(wide.stdout);
    expect(header?.slice(-2)).toEqual(['TARGET-REVISION', 'MESSAGE']);
    expect(row?.slice(-2)).toEqual([NEXT, '1/2 clusters Ready; 1 failing: edge-2 (ApplyFailed)']);
  });
});

describe('tree', () => {
  test('fleetsync/NAME: one node per cluster, the child and what it has in its cluster', async () => {
    const { code, stdout, stderr } = await cli('tree', 'fleetsync/install');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`FleetSync/${ns()}/install  Ready=True  Succeeded  Complete  2/2 clusters ready  ${REV}`);
    expect(lines).toContain('├── depended on by');
    const clusters = lines.slice(lines.indexOf('└── clusters (2)'));
    expect(clusters.slice(0, 4)).toEqual([
      '└── clusters (2)',
      '    ├── edge-1  RemoteSync/install-edge-1  Ready=True  Succeeded  sha256:1',
      `    │   └── applied in cluster ${client.server.origin} (Secret ${ns()}/edge-1-kubeconfig key value)`,
      `    │       └── ConfigMap/${ns()}/fleet-cm  Current`,
    ]);
    expect(clusters[4]).toMatch(/^ {4}└── edge-2 {2}RemoteSync\/install-edge-2 {2}Ready=True {2}Succeeded$/);
    expect(clusters[5]).toMatch(/^ {8}└── cluster: .*edge-2-kubeconfig/);
  });

  test('-o json: the children by cluster, with what each applied', async () => {
    const { stdout } = await cli('tree', 'fsy/install', '-o', 'json');
    const tree = JSON.parse(stdout) as Tree;
    expect(tree.children?.map((c) => [c.clusterName, c.sync.kind, c.sync.name])).toEqual([
      ['edge-1', 'RemoteSync', 'install-edge-1'],
      ['edge-2', 'RemoteSync', 'install-edge-2'],
    ]);
    expect(tree.children?.[0]?.sync.objects).toEqual([expect.objectContaining({ kind: 'ConfigMap', name: 'fleet-cm', status: 'Current' })]);
  });

  test('with no name: every sync once, the FleetSyncs with their children under them', async () => {
    const [text, json] = await Promise.all([cli('tree'), cli('tree', '-o', 'json')]);
    expect(text.code).toBe(0);
    const roots = text.stdout.split('\n').filter((l) => /^[A-Z]/.test(l));
    expect(roots.map((l) => l.split('  ')[0])).toEqual([`Sync/${ns()}/app`, `FleetSync/${ns()}/baseline`, `FleetSync/${ns()}/install`]);
    expect(text.stdout).toContain('    ├── edge-1  ProxySync/baseline-edge-1  Ready=True  Succeeded\n');
    expect(text.stdout).toContain('    └── edge-2  ProxySync/baseline-edge-2  Ready=False  ApplyFailed — ConfigMap fleet/x: forbidden\n');
    const forest = JSON.parse(json.stdout) as Forest;
    expect(forest.roots.find((r) => r.name === 'baseline')?.children?.map((c) => c.clusterName)).toEqual(['edge-1', 'edge-2']);
  });
});

describe('a rollout in waves', () => {
  test('get: the progress beside the phase (waves done of all, clusters updated of selected); -o wide the rollout message', async () => {
    const [table, wide] = await Promise.all([rolloutCli('get', 'fleetsyncs'), rolloutCli('get', 'fsy/web', '-o', 'wide')]);
    expect({ code: table.code, stderr: table.stderr }).toEqual({ code: 0, stderr: '' });
    expect(tableCells(table.stdout)[1]?.slice(0, 6)).toEqual(['FleetSync', 'web', 'False', 'Halted (RolloutHalted) 1/3 waves, 2/3', REV, '1/3 ready']);
    expect(tableCells(wide.stdout)[1]?.slice(-2)).toEqual([NEXT, HALT]);
  });

  test('tree fleetsync/NAME: the children under their waves, in order, with counts, soak, approval and the wave the rollout is at', async () => {
    const { code, stdout, stderr } = await rolloutCli('tree', 'fleetsync/web');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`FleetSync/${rns()}/web  Ready=False  RolloutHalted  Halted  1/3 waves, 2/3 updated  1/3 clusters ready  ${REV} — ${HALT}`);
    const waves = lines.slice(lines.indexOf('└── waves (3)'));
    // Under each child, its cluster (no kubeconfig here: said on its own node, left out).
    expect(waves.filter((l) => !/── cluster: /.test(l))).toEqual([
      '└── waves (3)',
      `    ├── canary  1/1 updated, 1/1 ready, 0 failed, 0 unreachable  soak until ${SOAKED}`,
      '    │   └── edge-1  ProxySync/web-edge-1  Ready=True  Succeeded',
      `    ├── early  1/1 updated, 0/1 ready, 1 failed, 0 unreachable  ◀ the rollout is here`,
      '    │   └── edge-2  ProxySync/web-edge-2  Ready=False  ApplyFailed — ConfigMap web/x: forbidden',
      '    └── rest  0/1 updated, 0/1 ready, 0 failed, 0 unreachable  needs approval',
      '        └── edge-3  ProxySync/web-edge-3  Ready=True  Succeeded',
    ]);
  });

  test('tree -o json: the waves with their members, the current one marked; the children by cluster as without waves', async () => {
    const tree = JSON.parse((await rolloutCli('tree', 'fsy/web', '-o', 'json')).stdout) as Tree;
    expect(tree.progress).toBe('1/3 waves, 2/3');
    expect(tree.waves?.map((w) => [w.name, w.members, w.done, w.current ?? false, w.approval ?? '-'])).toEqual([
      ['canary', ['edge-1'], true, false, '-'],
      ['early', ['edge-2'], false, true, '-'],
      ['rest', ['edge-3'], false, false, 'required'],
    ]);
    expect(tree.children?.map((c) => c.clusterName)).toEqual(['edge-1', 'edge-2', 'edge-3']);
  });
});

describe('graph', () => {
  test('FleetSync nodes counting their children, the FleetSync edge marked per cluster, no child nodes', async () => {
    const { code, stdout } = await cli('graph');
    expect(code).toBe(0);
    expect(stdout).toContain('["FleetSync/baseline (2 clusters: 1 ready, 1 failed)"]:::failed');
    expect(stdout).toContain('["FleetSync/install (2 clusters: 2 ready)"]:::ready');
    expect(stdout).not.toContain('baseline-edge-1');
    expect(stdout).not.toContain('install-edge-2');
    expect(stdout).toMatch(/ n\d+ -->\|per cluster\| n\d+\n/);
    expect(stdout.split('\n').filter((l) => l.includes('-->'))).toHaveLength(2);
  });
});

describe('doctor', () => {
  test('the FleetSync that is not Ready is a finding naming its failing cluster', async () => {
    const { code, stdout } = await cli('doctor', '-o', 'json');
    expect(code).toBe(1);
    const findings = (JSON.parse(stdout) as { findings: Finding[] }).findings.filter((f) => f.problem === 'FleetSyncNotReady');
    expect(findings).toEqual([
      expect.objectContaining({
        object: 'FleetSync/baseline',
        message: '1/2 clusters Ready; failing: edge-2 (ApplyFailed: ConfigMap fleet/x: forbidden)',
        action: expect.stringContaining(`syncprims tree fleetsync/baseline -n ${ns()}`),
      }),
    ]);
  });
});

// Last: it changes install's status.
describe('get --watch', () => {
  test('follows FleetSyncs too: a status write that changes its row is a line', async () => {
    const child = spawn('node', [CLI, 'get', '--watch', '--kubeconfig', KUBECONFIG, '-n', ns()], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await eventually('the first table', async () => (lines.length >= 8 ? true : undefined), 15_000);
      await client.request({
        method: 'PATCH',
        path: `${API}/namespaces/${ns()}/fleetsyncs/install/status`,
        contentType: 'application/merge-patch+json',
        body: { status: { clusters: { selected: 3, updated: 2, ready: 2, failed: 0, unreachable: 0, progressing: 1 }, phase: 'Progressing' } },
      });
      const row = await eventually('a line for the FleetSync', async () => lines.slice(8).find((l) => /^FleetSync\s+install\s/.test(l)), 30_000);
      expect(row.split(/ {3,}/).slice(0, 6)).toEqual(['FleetSync', 'install', 'True', 'Progressing', REV, '2/3 ready']);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });
});
