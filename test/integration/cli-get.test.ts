// `syncprims get` as a user runs it (a real process, stdout a pipe) against
// syncs of the three kinds that an operator has reconciled on mgmt.
import { beforeAll, describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parse, parseAllDocuments } from 'yaml';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { assertCliBuilt, CLI, runCli, tableCells, tempDir, unreachableKubeconfig } from '../support/cli.js';
import { kubeconfigPath } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { applyProxySync, applyRemoteSync, PROXYSYNCS, REMOTESYNCS } from '../support/remote.js';
import { applySync, getSync, waitForReady, type SyncObject } from '../support/syncs.js';

const CLUSTER = 'mgmt';
const KUBECONFIG = kubeconfigPath(CLUSTER);
let client: KubeClient;
const ns = useOperatedNamespace(CLUSTER, 'cli-get', (o) => ({ client } = o));

const ESC = '\x1b';
const HEADER = ['KIND', 'NAME', 'READY', 'REASON', 'REVISION', 'CLUSTER', 'PENDING', 'AGE'];
const get = (...args: string[]) => runCli(['get', '--kubeconfig', KUBECONFIG, '-n', ns(), ...args]);
let good: SyncObject;

beforeAll(async () => {
  assertCliBuilt();
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'good', namespace: ns() }, data: { a: '1' } };
  await applySync(client, ns(), 'good', { source: { inline: [configMap] } });
  await applySync(client, ns(), 'broken', { source: { configMap: { name: 'missing' } } });
  await applySync(client, ns(), 'waiting', { source: { inline: [] }, dependsOn: [{ name: 'broken' }] });
  await applyRemoteSync(client, ns(), 'edge', { kubeConfig: { secretRef: { name: 'edge-1-kubeconfig' } }, source: { inline: [] } });
  await applyProxySync(client, ns(), 'proxy', { clusterRef: { name: 'edge-2' }, template: { spec: { source: { inline: [] } } } });
  good = await waitForReady(client, ns(), 'good', 'True', 'Succeeded');
  await waitForReady(client, ns(), 'broken', 'False', 'SourceError');
  await waitForReady(client, ns(), 'waiting', 'False', 'DependencyNotReady');
});

describe('the table', () => {
  test('every kind, aligned columns, no escape codes when piped', async () => {
    const { code, stdout, stderr } = await get();
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).not.toContain(ESC);
    const [header, ...rows] = tableCells(stdout);
    expect(header).toEqual(HEADER);
    expect(rows.map((r) => `${r[0]}/${r[1]}`)).toEqual(['Sync/broken', 'Sync/good', 'Sync/waiting', 'RemoteSync/edge', 'ProxySync/proxy']);
    const row = (name: string) => rows.find((r) => r[1] === name)!;
    const revision = good.status!.lastAppliedRevision!;
    expect(revision).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(row('good')).toEqual(['Sync', 'good', 'True', 'Succeeded', revision.slice(0, 'sha256:'.length + 12), '-', '-', expect.stringMatching(/^\d+s$/)]);
    expect(row('broken').slice(0, 4)).toEqual(['Sync', 'broken', 'False', 'SourceError']);
    expect(row('waiting').slice(2, 8)).toEqual(['False', 'DependencyNotReady', '-', '-', 'Sync/broken', expect.stringMatching(/^\d+s$/)]);
    expect(row('edge')[5]).toBe('edge-1-kubeconfig');
    expect(row('proxy')[5]).toBe('edge-2');
    // Each column starts at the same offset on every line.
    const lines = stdout.trimEnd().split('\n');
    for (const col of ['NAME', 'READY', 'REASON', 'REVISION', 'CLUSTER', 'PENDING', 'AGE']) {
      const at = lines[0]!.indexOf(col);
      for (const line of lines.slice(1)) expect(line[at - 1] === ' ' && line[at] !== ' ').toBe(true);
    }
  });

  test('one kind by its short name, one object by kind/name', async () => {
    const [remote, proxy, one] = await Promise.all([get('rsy'), get('PSY'), get('sync/waiting')]);
    expect(tableCells(remote.stdout).slice(1).map((r) => r[1])).toEqual(['edge']);
    expect(tableCells(proxy.stdout).slice(1).map((r) => r[1])).toEqual(['proxy']);
    expect(tableCells(one.stdout).map((r) => r[1])).toEqual(['NAME', 'waiting']);
  });

  test('-A adds the namespace column', async () => {
    const { code, stdout } = await runCli(['get', '-A', 'sy', '--kubeconfig', KUBECONFIG]);
    expect(code).toBe(0);
    const [header, ...rows] = tableCells(stdout);
    expect(header).toEqual(['KIND', 'NAMESPACE', ...HEADER.slice(1)]);
    expect(rows.filter((r) => r[1] === ns()).map((r) => r[2])).toEqual(['broken', 'good', 'waiting']);
  });

  test('--status-selector ready=false shows only what is failing', async () => {
    const [failing, fine] = await Promise.all([get('sync', '--status-selector', 'ready=false'), get('--status-selector', 'ready=true')]);
    expect(tableCells(failing.stdout).slice(1).map((r) => [r[1], r[2]])).toEqual([
      ['broken', 'False'],
      ['waiting', 'False'],
    ]);
    expect(tableCells(fine.stdout).slice(1).map((r) => r[1])).toContain('good');
    expect(tableCells(fine.stdout).slice(1).every((r) => r[2] === 'True')).toBe(true);
  });

  test('nothing found is said on stderr, with exit 0', async () => {
    const none = await get('sync', '--status-selector', 'ready=unknown');
    expect(none).toEqual({ code: 0, stdout: '', stderr: `No syncs found in namespace ${ns()} with ready=unknown.\n` });
  });
});

describe('-o json and -o yaml', () => {
  const live = async (): Promise<KubeObject[]> => [
    ...(await Promise.all(['broken', 'good', 'waiting'].map((n) => getSync(client, ns(), n)))),
    await getSync(client, ns(), 'edge', REMOTESYNCS),
    await getSync(client, ns(), 'proxy', PROXYSYNCS),
  ];
  const identity = (o: KubeObject) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid, spec: o.spec });

  test('a List of the objects, as the API server has them', async () => {
    const [json, yaml] = await Promise.all([get('-o', 'json'), get('-o', 'yaml')]);
    expect(json.code).toBe(0);
    const list = JSON.parse(json.stdout) as { apiVersion: string; kind: string; items: KubeObject[] };
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    expect(list.items.map(identity)).toEqual((await live()).map(identity));

    expect(yaml.code).toBe(0);
    expect(parseAllDocuments(yaml.stdout)).toHaveLength(1);
    expect(parse(yaml.stdout, { version: '1.1' })).toEqual(list);
  });

  test('one object by name: the object itself', async () => {
    const [jsonOut, yamlOut] = await Promise.all([get('sy/good', '-o', 'json'), get('sy/good', '-o', 'yaml')]);
    const json = JSON.parse(jsonOut.stdout) as SyncObject;
    const yaml = parse(yamlOut.stdout, { version: '1.1' }) as SyncObject;
    const now = await getSync(client, ns(), 'good');
    expect(identity(json)).toEqual(identity(now));
    expect(yaml).toEqual(json);
    expect(json.status?.lastAppliedRevision).toBe(now.status?.lastAppliedRevision);
  });
});

describe('exit codes and errors', () => {
  test('1: a named object that does not exist', async () => {
    const res = await get('sync/nope');
    expect(res).toEqual({ code: 1, stdout: '', stderr: `syncprims: Sync ${ns()}/nope not found (list them: syncprims get sync -n ${ns()})\n` });
  });

  test('2: bad usage (an unknown flag, a bad value, a name that is not kind/name)', async () => {
    const [flag, output, selector, name, across] = await Promise.all([
      get('--bogus'),
      get('-o', 'xml'),
      get('--status-selector', 'stalled=true'),
      get('good'),
      runCli(['get', 'sync/good', '-A', '--kubeconfig', KUBECONFIG]),
    ]);
    expect(flag).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining("error: unknown option '--bogus'") });
    expect(output).toMatchObject({ code: 2, stderr: expect.stringContaining("argument 'xml' is invalid") });
    expect(selector).toMatchObject({ code: 2, stderr: expect.stringContaining('--status-selector "stalled=true": want ready=true') });
    expect(name).toMatchObject({ code: 2, stderr: expect.stringContaining('name a sync as kind/name, e.g. sync/good') });
    expect(across).toMatchObject({ code: 2, stderr: expect.stringContaining('use -n instead of -A') });
  });

  test('3: a cluster that cannot be reached, said in one line', async () => {
    const dir = tempDir();
    const { file, port } = await unreachableKubeconfig(dir);
    const res = await runCli(['get', '--kubeconfig', file]);
    rmSync(dir, { recursive: true, force: true });
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(new RegExp(`^syncprims: cannot reach the cluster at https://127\\.0\\.0\\.1:${port} \\(context \\S+\\): .*ECONNREFUSED.*\n$`));
  });

  test('every command has an example in its --help', async () => {
    const commands = ['get', 'build', 'version'];
    const helps = await Promise.all(commands.map((cmd) => runCli([cmd, '--help'])));
    for (const [i, cmd] of commands.entries()) {
      const help = helps[i]!;
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Examples:\n  $ syncprims ${cmd}`);
    }
  });
});

describe('--watch', () => {
  test('prints the table, then a line per change, until interrupted', async () => {
    const child = spawn('node', [CLI, 'get', 'sync', '--watch', '--kubeconfig', KUBECONFIG, '-n', ns()], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await eventually('the first table', async () => (lines.length >= 4 ? true : undefined), 15_000);
      await applySync(client, ns(), 'late', { source: { inline: [] } });
      const row = await eventually('a line for the new Sync, then for it Ready', async () => lines.find((l) => /^Sync\s+late\s+True\s+Succeeded/.test(l)), 30_000);
      expect(row.split(/ {3,}/)).toHaveLength(HEADER.length);
      expect(lines[0]!.split(/ {3,}/)).toEqual(HEADER);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    expect(lines.join('\n')).not.toContain(ESC);
  });
});
