// `syncprims cluster add` and `syncprims get clusters` as a user runs them,
// registering the real edge-1 in a namespace of mgmt.
import { beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { checkedKubeconfig } from '../../src/clusters/kubeconfig.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { assertCliBuilt, runCli, tableCells, tempDir, unreachableKubeconfig } from '../support/cli.js';
import { clusterClient, ensureClusters, kubeconfigPath } from '../support/controlplane.js';
import { useTestNamespace } from '../support/namespace.js';
import { find } from '../support/syncs.js';

const MGMT = kubeconfigPath('mgmt');
const EDGE = kubeconfigPath('edge-1');
const ns = useTestNamespace('mgmt', 'cli-cluster');
const dir = tempDir();
let client: KubeClient;

const add = (name: string, ...args: string[]) => runCli(['cluster', 'add', name, '--mgmt-kubeconfig', MGMT, '-n', ns(), ...args]);
const getClusters = (...args: string[]) => runCli(['get', 'clusters', '--kubeconfig', MGMT, '-n', ns(), ...args]);
const secretPath = (name: string) => `/api/v1/namespaces/${ns()}/secrets/${name}`;

/** The Secret; undefined only when it does not exist (404): a 403 or a 500 fails the test. */
async function secretOrUndefined(name: string): Promise<KubeObject | undefined> {
  return find<KubeObject>(client, secretPath(name));
}

beforeAll(async () => {
  assertCliBuilt();
  await ensureClusters(['mgmt', 'edge-1']);
  client = await clusterClient('mgmt');
});

describe('syncprims cluster add', () => {
  test('registers edge-1: the Secret labelled with its name and labels, the kubeconfig minified and acceptable to the operator', async () => {
    const { code, stdout, stderr } = await add('edge-1', '--kubeconfig', EDGE, '--label', 'env=prod', '--label', 'region=eu');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain(`cluster edge-1 registered in namespace ${ns()}: Secret edge-1-kubeconfig`);
    const secret = (await secretOrUndefined('edge-1-kubeconfig')) as KubeObject & { data: { value: string } };
    expect(secret.metadata.labels).toEqual({ 'syncprims.dev/cluster': 'edge-1', env: 'prod', region: 'eu' });
    const text = Buffer.from(secret.data.value, 'base64').toString('utf8');
    const kc = checkedKubeconfig(text, 'the stored kubeconfig');
    expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:6442');
    expect(kc.contexts).toHaveLength(1);

    // Again, with other labels: updated in place.
    const again = await add('edge-1', '--kubeconfig', EDGE, '--label', 'env=staging');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('cluster edge-1 updated');
    expect((await secretOrUndefined('edge-1-kubeconfig'))?.metadata.labels).toEqual({ 'syncprims.dev/cluster': 'edge-1', env: 'staging' });
  }, 60_000);

  test('an exec kubeconfig is refused as the operator refuses it, and nothing is written', async () => {
    const file = path.join(dir, 'exec.kubeconfig');
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6442' } }],
        users: [{ name: 'u', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'touch', args: [path.join(dir, 'ran')] } } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    const { code, stderr } = await add('exec-edge', '--kubeconfig', file);
    expect(code).toBe(1);
    expect(stderr).toContain('runs a command to get its credentials (exec): refused');
    expect(stderr).toContain('the operator would refuse it, so it is not stored');
    expect(await secretOrUndefined('exec-edge-kubeconfig')).toBeUndefined();
    expect(existsSync(path.join(dir, 'ran'))).toBe(false);
  });

  test('a name another source has is refused, naming it; so is a Secret of that name that registers nothing', async () => {
    await client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns()}/secrets`,
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'someone-elses', labels: { 'syncprims.dev/cluster': 'taken' } }, data: { value: '' } },
    });
    const taken = await add('taken', '--kubeconfig', EDGE);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`cluster name taken is taken in namespace ${ns()} by Secret ${ns()}/someone-elses`);
    expect(await secretOrUndefined('taken-kubeconfig')).toBeUndefined();

    await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/secrets`, body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'plain-kubeconfig' } } });
    const plain = await add('plain', '--kubeconfig', EDGE);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain(`Secret ${ns()}/plain-kubeconfig exists and does not register cluster plain`);
    expect((await secretOrUndefined('plain-kubeconfig'))?.metadata.labels).toBeUndefined();
  });
});

describe('syncprims get clusters', () => {
  test('each cluster with its source, reachability, labels and problem', async () => {
    const down = await unreachableKubeconfig(dir, 'edge-1');
    expect((await add('down', '--kubeconfig', down.file, '--label', 'env=prod')).code).toBe(0);
    const { code, stdout, stderr } = await getClusters();
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const [header, ...rows] = tableCells(stdout);
    expect(header).toEqual(['NAME', 'SOURCE', 'MODE', 'REACHABLE', 'LAST-SEEN', 'SHARD', 'SELECTED-BY', 'LABELS', 'PROBLEM']);
    const byName = new Map(rows.map((r) => [r[0], r]));
    // SHARD: no operator runs sharded (no membership Lease in syncprims-system).
    expect(byName.get('edge-1')).toEqual(['edge-1', 'Secret', 'push', 'yes', '-', '-', '-', 'env=staging', '-']);
    expect(byName.get('down')?.slice(0, 8)).toEqual(['down', 'Secret', 'push', 'no', '-', '-', '-', 'env=prod']);
    expect(byName.get('down')?.[8]).toContain(`unreachable: https://127.0.0.1:${down.port}`);
    // The Secret of the test before claims `taken` and holds no kubeconfig.
    expect(byName.get('taken')?.slice(0, 4)).toEqual(['taken', 'Secret', 'push', 'no']);

    const json = await getClusters('-o', 'json');
    const listed = JSON.parse(json.stdout) as { clusters: { name: string; reach: { reachable: string; server?: string } }[] };
    expect(listed.clusters.map((c) => c.name)).toEqual(['down', 'edge-1', 'taken']);
    expect(listed.clusters[1]!.reach).toEqual({ reachable: 'yes', server: 'https://127.0.0.1:6442' });

    const wide = tableCells((await getClusters('-o', 'wide')).stdout);
    expect(wide[0]).toEqual(['NAME', 'SOURCE', 'MODE', 'REACHABLE', 'LAST-SEEN', 'SHARD', 'SELECTED-BY', 'LABELS', 'VALUES', 'OBJECT', 'SERVER', 'PROBLEM']);
    expect(wide.find((r) => r[0] === 'edge-1')?.slice(8, 11)).toEqual(['-', `Secret ${ns()}/edge-1-kubeconfig`, 'https://127.0.0.1:6442']);
  }, 60_000);
});
