// `syncprims graph` as a user runs it (a real process, stdout a pipe) on a
// namespace an operator reconciles: a cycle, a dependency that does not
// exist (here and in another namespace), InProgress, a RemoteSync and a
// ProxySync among the syncs.
import { beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { KubeClient } from '../../src/kube/client.js';
import { assertCliBuilt, runCli, tempDir, unreachableKubeconfig } from '../support/cli.js';
import { kubeconfigPath } from '../support/controlplane.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { applyProxySync, applyRemoteSync, kubeconfigOf, PROXYSYNCS, putKubeconfigSecret, REMOTESYNCS } from '../support/remote.js';
import { applySync, waitForReady } from '../support/syncs.js';

const CLUSTER = 'mgmt';
const KUBECONFIG = kubeconfigPath(CLUSTER);
let client: KubeClient;
const ns = useOperatedNamespace(CLUSTER, 'cli-graph', (o) => ({ client } = o));

const graph = (...args: string[]) => runCli(['graph', '--kubeconfig', KUBECONFIG, '-n', ns(), ...args]);
const dir = tempDir('syncprims-cli-graph-');

beforeAll(async () => {
  assertCliBuilt();
  await putKubeconfigSecret(client, ns(), 'edge-1-kubeconfig', await kubeconfigOf('edge-1'));
  await applySync(client, ns(), 'db', { source: { inline: [] } });
  await applyRemoteSync(client, ns(), 'edge', { kubeConfig: { secretRef: { name: 'edge-1-kubeconfig' } }, source: { inline: [] } });
  // Its cluster's Secret does not exist: not Ready.
  await applyProxySync(client, ns(), 'proxy', { clusterRef: { name: 'nowhere' }, template: { spec: { source: { inline: [] } } } });
  await applySync(client, ns(), 'cyc-a', { source: { inline: [] }, dependsOn: [{ name: 'cyc-b' }] });
  await applySync(client, ns(), 'cyc-b', { source: { inline: [] }, dependsOn: [{ name: 'cyc-a' }] });
  await applySync(client, ns(), 'web', {
    source: { inline: [] },
    dependsOn: [{ name: 'db' }, { kind: 'RemoteSync', name: 'edge', requiredStatus: 'InProgress' }, { name: 'nope' }, { name: 'shared', namespace: 'kube-public' }],
  });
  await Promise.all([
    waitForReady(client, ns(), 'db', 'True', 'Succeeded'),
    waitForReady(client, ns(), 'edge', 'True', 'Succeeded', undefined, REMOTESYNCS),
    waitForReady(client, ns(), 'proxy', 'False', undefined, undefined, PROXYSYNCS),
    waitForReady(client, ns(), 'cyc-a', 'False', 'DependencyCycle'),
    waitForReady(client, ns(), 'cyc-b', 'False', 'DependencyCycle'),
    waitForReady(client, ns(), 'web', 'False', 'DependencyNotReady'),
  ]);
});

/** The nodes of a Mermaid graph by label, their ids and classes; the links as `from-label arrow to-label`. */
function mermaid(text: string): { nodes: Map<string, { id: string; state: string }>; links: string[]; lines: string[] } {
  const lines = text.trimEnd().split('\n');
  const nodes = new Map<string, { id: string; state: string }>();
  for (const l of lines) {
    const m = /^ {2}(n\d+)\["([^"]+)"\]:::(\w+)$/.exec(l);
    if (m) nodes.set(m[2]!, { id: m[1]!, state: m[3]! });
  }
  const byId = new Map([...nodes].map(([label, n]) => [n.id, label]));
  const links = lines.flatMap((l) => {
    const m = /^ {2}(n\d+) (\S+) (n\d+)$/.exec(l);
    return m ? [`${byId.get(m[1]!)} ${m[2]} ${byId.get(m[3]!)}`] : [];
  });
  return { nodes, links, lines };
}

describe('syncprims graph', () => {
  test('Mermaid (the default): nodes coloured by state, the missing ones dashed, InProgress labelled, the cycle red and listed', async () => {
    const [{ code, stdout, stderr }, again] = await Promise.all([graph(), graph()]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const { nodes, links, lines } = mermaid(stdout);
    expect(lines[0]).toBe('flowchart LR');
    expect(lines).toContain(`%% syncprims dependency graph of namespace ${ns()}: an arrow points from a sync to a sync it depends on`);
    expect(Object.fromEntries([...nodes].map(([label, n]) => [label, n.state]))).toEqual({
      'Sync/cyc-a': 'failed',
      'Sync/cyc-b': 'failed',
      'Sync/db': 'ready',
      'Sync/nope (not found)': 'missing',
      'Sync/web': 'failed',
      'RemoteSync/edge': 'ready',
      'ProxySync/proxy': 'failed',
      'Sync/kube-public/shared (not found)': 'missing',
    });
    // Sorted: this namespace's nodes first (by kind, then name), then the other namespace's.
    expect([...nodes.keys()]).toEqual([
      'Sync/cyc-a',
      'Sync/cyc-b',
      'Sync/db',
      'Sync/nope (not found)',
      'Sync/web',
      'RemoteSync/edge',
      'ProxySync/proxy',
      'Sync/kube-public/shared (not found)',
    ]);
    expect(links).toEqual([
      'Sync/cyc-a --> Sync/cyc-b',
      'Sync/cyc-b --> Sync/cyc-a',
      'Sync/web --> Sync/db',
      'Sync/web -.-> Sync/nope (not found)',
      'Sync/web -->|InProgress| RemoteSync/edge',
      'Sync/web -.-> Sync/kube-public/shared (not found)',
    ]);
    expect(lines).toContain('%% cycle: Sync/cyc-a -> Sync/cyc-b -> Sync/cyc-a');
    expect(lines).toContain('  linkStyle 0,1 stroke:#d32f2f,stroke-width:2px,color:#d32f2f');
    expect(lines.find((l) => l.startsWith('  classDef missing '))).toContain('stroke-dasharray:5 5');
    // The same graph, the same text.
    expect(again.stdout).toBe(stdout);
  });

  test('DOT: the same graph for Graphviz', async () => {
    const { code, stdout } = await graph('--format', 'dot');
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    const n = ns();
    expect(lines).toContain('digraph syncprims {');
    expect(lines.at(-1)).toBe('}');
    expect(lines).toContain('// cycle: Sync/cyc-a -> Sync/cyc-b -> Sync/cyc-a');
    expect(lines).toContain(`  "Sync/${n}/db" [label="Sync/db", fillcolor="#d4edda", color="#2e7d32", fontcolor="#1b5e20"];`);
    expect(lines).toContain(`  "Sync/${n}/nope" [label="Sync/nope (not found)", style="rounded,dashed,filled", fillcolor="#ffffff", color="#757575", fontcolor="#616161"];`);
    expect(lines).toContain(`  "Sync/kube-public/shared" [label="Sync/kube-public/shared (not found)", style="rounded,dashed,filled", fillcolor="#ffffff", color="#757575", fontcolor="#616161"];`);
    const edges = lines.filter((l) => l.startsWith('  "') && l.includes(' -> '));
    expect(edges).toEqual([
      `  "Sync/${n}/cyc-a" -> "Sync/${n}/cyc-b" [color="#d32f2f", fontcolor="#d32f2f", penwidth=2];`,
      `  "Sync/${n}/cyc-b" -> "Sync/${n}/cyc-a" [color="#d32f2f", fontcolor="#d32f2f", penwidth=2];`,
      `  "Sync/${n}/web" -> "Sync/${n}/db";`,
      `  "Sync/${n}/web" -> "Sync/${n}/nope" [style=dashed];`,
      `  "Sync/${n}/web" -> "RemoteSync/${n}/edge" [label="InProgress"];`,
      `  "Sync/${n}/web" -> "Sync/kube-public/shared" [style=dashed];`,
    ]);
  });

  test('--output-file: the same text in the file, nothing on stdout; a file that cannot be written: one line, exit 1', async () => {
    const file = path.join(dir, 'graph.mmd');
    const missingDir = path.join(dir, 'no-such-dir', 'graph.dot');
    const [written, printed, failed] = await Promise.all([graph('--output-file', file), graph(), graph('--format', 'dot', '--output-file', missingDir)]);
    expect(written).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(readFileSync(file, 'utf8')).toBe(printed.stdout);
    expect(failed).toEqual({ code: 1, stdout: '', stderr: `syncprims: cannot write --output-file ${missingDir}: no such directory\n` });
    expect(existsSync(missingDir)).toBe(false);
  });

  test('-A: every namespace, each label with its namespace', async () => {
    const { code, stdout } = await runCli(['graph', '-A', '--kubeconfig', KUBECONFIG]);
    expect(code).toBe(0);
    const { nodes, links } = mermaid(stdout);
    expect(nodes.get(`Sync/${ns()}/db`)?.state).toBe('ready');
    expect(links).toContain(`Sync/${ns()}/cyc-a --> Sync/${ns()}/cyc-b`);
    expect(stdout).toContain(`%% cycle: Sync/${ns()}/cyc-a -> Sync/${ns()}/cyc-b -> Sync/${ns()}/cyc-a`);
  });

  test('an empty namespace, bad usage, an unreachable cluster', async () => {
    const { file, port } = await unreachableKubeconfig(dir);
    const [empty, bad, down] = await Promise.all([
      runCli(['graph', '--kubeconfig', KUBECONFIG, '-n', 'kube-public']),
      graph('--format', 'svg'),
      runCli(['graph', '--kubeconfig', file, '-n', ns()]),
    ]);
    expect(empty.code).toBe(0);
    expect(empty.stderr).toBe('No syncs found in namespace kube-public.\n');
    expect(empty.stdout).toContain('%% no syncs');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("argument 'svg' is invalid. Allowed choices are mermaid, dot.");
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(new RegExp(`^syncprims: cannot reach the cluster at https://127\\.0\\.0\\.1:${port} .+\\n$`));
  });

  test('--help has an example', async () => {
    const { code, stdout } = await runCli(['graph', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('$ syncprims graph -n apps');
    expect(stdout).toContain('--output-file <file>');
  });
});
