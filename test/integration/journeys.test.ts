// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// The journeys as `make demo` runs them (examples/demo.sh), on clusters of
// this test's own that play mgmt, edge-1, edge-2 and edge-3; then what a user
// finds: every sync Ready, the edges registered by `syncprims cluster add` and
// served by the FleetSyncs install and baseline (edge-2 a pull cluster, joined
// by `syncprims join`; edge-3 by that one command),
// the FleetSync shop's rollout (a broken release halted at the canary, never
// reaching the rest, then undone) leaving the app at its last good version in
// every edge, the operators running
// with only the installed ServiceAccount's token, and the install and
// bootstrap commands safe to repeat and to undo.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { KubeClient } from '../../src/kube/client.js';
import { KubeConfig } from '../../src/kube/kubeconfig.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { runCli } from '../support/cli.js';
import { closeClients, clusterClient, controlplane, kubeconfigPath, LOCAL, ROOT } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';

const [MGMT, EDGE1, EDGE2, EDGE3] = ['journey-mgmt', 'journey-edge-1', 'journey-edge-2', 'journey-edge-3'];
const CLUSTERS = [MGMT, EDGE1, EDGE2, EDGE3];
const ENV = { DEMO_CLUSTERS: CLUSTERS.join(' '), NO_COLOR: '1' };
const DEMO_LOG = path.join(LOCAL, 'journeys-test-demo.log');
const SYSTEM = 'syncprims-system';
/** edge-2's assignments in mgmt (clusters/pull-names.ts assignmentNamespace): the Syncs its operator carries out. */
const ASSIGNMENTS = 'syncprims-pull-fleet-edge-2';
const OPERATOR_USER = `system:serviceaccount:${SYSTEM}:syncprims-operator`;
/**
 * kubectl's discovery cache, of this run only (as the demo's): the local clusters reuse ports, and
 * ~/.kube/cache may hold a port's discovery from another cluster that had it, without the kinds
 * of this one (`kubectl get syncprims` then left FleetSyncs out).
 */
const KUBECACHEDIR = path.join(LOCAL, 'journeys-kubectl-cache');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function sh(script: string, opts: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', script], { cwd: ROOT, env: { ...process.env, KUBECACHEDIR, ...opts.env }, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 32 << 20 }, (err, stdout, stderr) => {
      const code = err ? (err as { code?: unknown }).code : 0;
      if (typeof code !== 'number') return reject(new Error(`${script}: ${String(err)}\n${stderr}`));
      resolve({ code, stdout, stderr });
    });
  });
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
}
type Synced = KubeObject & { status?: { conditions?: Condition[]; readyClusters?: string } };
const ready = (o: Synced) => o.status?.conditions?.find((c) => c.type === 'Ready');
const list = async (client: KubeClient, plural: string) =>
  (await client.request<{ items: Synced[] }>({ path: `/apis/syncprims.dev/v1alpha1/${plural}` })).items;

let demo: Result;
let mgmt: KubeClient;

beforeAll(async () => {
  rmSync(KUBECACHEDIR, { recursive: true, force: true });
  // The whole demo, as `make demo` runs it; its output is kept for a failure's diagnosis.
  demo = await sh('bash examples/demo.sh', { env: ENV, timeoutMs: 10 * 60_000 });
  writeFileSync(DEMO_LOG, `${demo.stdout}\n--- stderr ---\n${demo.stderr}`);
  mgmt = await clusterClient(MGMT);
}, 11 * 60_000);

afterAll(async () => {
  await sh('bash examples/demo.sh stop', { env: ENV });
  await closeClients();
  await controlplane(['stop', ...CLUSTERS]);
});

describe('make demo: bootstrap, registration, rollout, a newcomer', () => {
  test('it completes, showing the rollout wave by wave, the broken release halting at the canary, and the undo', () => {
    if (demo.code !== 0) throw new Error(`examples/demo.sh exited ${demo.code}; its output is in ${DEMO_LOG}:\n${demo.stderr.slice(-2000)}`);
    // syncprims rollout status followed the broken release to its halt at the canary (exit 1), the rest never updated.
    expect(demo.stderr).toContain('the rollout of FleetSync fleet/shop is Halted: wave canary: 1 failing (at most 0): edge-1');
    const halted = demo.stdout.slice(demo.stdout.indexOf('3b. Release 1.2.0'), demo.stdout.indexOf('3c. Undo'));
    // The waves as printed at the halt (WAVE CLUSTERS UPDATED READY FAILED): the canary failed; the
    // rest (edge-2, and edge-3 when an earlier run registered it) not one updated.
    const [canary, rest] = halted.split('\n').filter((l) => /^(canary|rest)\s/.test(l)).slice(-2).map((l) => l.split(/\s+/));
    expect(canary!.slice(0, 5)).toEqual(['canary', '1', '1', '0', '1']);
    expect([rest![0], rest![2], rest![3], rest![4]]).toEqual(['rest', '0', '0', '0']);
    expect(demo.stdout).toMatch(/edge-2 still runs 1\.1\.0 \(its child at revision [0-9a-f]{16}\): the broken release never reached it/);
    // The undo rolled the last good template back, to Complete.
    expect(demo.stdout).toMatch(/FleetSync fleet\/shop rolls back to revision \d+ \([0-9a-f]{16}\), from [0-9a-f]{16}/);
    expect(demo.stdout.slice(demo.stdout.indexOf('3c. Undo'))).toContain('the rollout of FleetSync fleet/shop is Complete');
    // One template, each edge its own ConfigMap: the region substituted, the canary's label by its override.
    const first = demo.stdout.slice(demo.stdout.indexOf('3. Rollout'), demo.stdout.indexOf('3a. Release'));
    expect(first).toMatch(/^1\.0\.0\s+eu-west\s+canary$/m);
    expect(first).toMatch(/^1\.0\.0\s+us-east\s+<none>$/m);
    // tree crossed into the edge and showed the remote Sync's objects.
    expect(demo.stdout).toMatch(/Sync\/syncprims-system\/baseline\s+Ready=True/);
  });

  test('every sync of the four kinds is Ready in mgmt, the Syncs in the edges, and shop is at 1.1.0 (undone to it) in every edge', async () => {
    const syncs = (await list(mgmt, 'syncs')).filter((s) => s.metadata.namespace !== ASSIGNMENTS);
    const all = [...syncs, ...(await list(mgmt, 'remotesyncs')), ...(await list(mgmt, 'proxysyncs')), ...(await list(mgmt, 'fleetsyncs'))];
    expect(all.map((o) => `${o.kind}/${o.metadata.name}=${ready(o)?.status}`).sort()).toEqual(
      [
        'Sync/syncprims',
        'FleetSync/install',
        'FleetSync/baseline',
        'FleetSync/shop',
        'RemoteSync/install-edge-1',
        'RemoteSync/install-edge-3',
        'ProxySync/baseline-edge-1',
        'ProxySync/baseline-edge-2',
        'ProxySync/baseline-edge-3',
        'ProxySync/shop-edge-1',
        'ProxySync/shop-edge-2',
        'ProxySync/shop-edge-3',
      ]
        .map((s) => `${s}=True`)
        .sort(),
    );
    // edge-3 joined after the rollout: it was given the current revision at once. Each edge has
    // its own region (its value, set by the demo on its Secret: edge-3's just after it joined, so
    // waited for), and only the canary, edge-1, the label of the override.
    const expected = new Map([
      [EDGE1, { region: 'eu-west', track: 'canary' }],
      [EDGE2, { region: 'us-east', track: undefined }],
      [EDGE3, { region: 'ap-south', track: undefined }],
    ]);
    for (const [edge, want] of expected) {
      const client = await clusterClient(edge);
      expect((await list(client, 'syncs')).map((o) => `${o.metadata.name}=${ready(o)?.status}`).sort()).toEqual(['baseline=True', 'shop=True']);
      const release = () => client.request<KubeObject & { data: Record<string, string> }>({ path: '/api/v1/namespaces/apps/configmaps/shop-release' });
      await eventually(`${edge}'s region`, async () => ((await release()).data.region === want.region ? true : undefined));
      const got = await release();
      expect({ version: got.data.version, region: got.data.region, track: got.metadata.labels?.track }).toEqual({ version: '1.1.0', ...want });
    }
    const shop = (await list(mgmt, 'fleetsyncs')).find((f) => f.metadata.name === 'shop') as Synced & { status: { phase?: string; currentRevision?: string; updateRevision?: string } };
    expect(shop.status).toMatchObject({ phase: 'Complete', readyClusters: '3/3', currentRevision: shop.status.updateRevision });
  });

  test('the edges are registered by syncprims cluster add; the FleetSyncs made one child per edge, the baseline after the same edge\'s install (the pull edge\'s after install as a whole)', async () => {
    // edge-3 joined with that one command (journey 4), after the FleetSyncs were applied.
    expect(demo.stdout).toMatch(/^\$ syncprims cluster add edge-3 --kubeconfig \S+ --label role=edge --value region=ap-south -n fleet/m);
    expect(demo.stdout).toMatch(/^cluster edge-3 (registered|updated) in namespace fleet: Secret edge-3-kubeconfig/m);
    const secrets = await mgmt.request<{ items: KubeObject[] }>({ path: '/api/v1/namespaces/fleet/secrets', query: { labelSelector: 'syncprims.dev/cluster,role=edge' } });
    expect(secrets.items.map((s) => s.metadata.name).sort()).toEqual(['edge-1-kubeconfig', 'edge-2-kubeconfig', 'edge-3-kubeconfig']);
    const fleets = await list(mgmt, 'fleetsyncs');
    expect(fleets.map((f) => `${f.metadata.name}=${f.status?.readyClusters}`).sort()).toEqual(['baseline=3/3', 'install=2/2', 'shop=3/3']);
    for (const edge of ['edge-1', 'edge-3']) {
      const baseline = await mgmt.request<Synced & { spec: { dependsOn?: unknown } }>({ path: `/apis/syncprims.dev/v1alpha1/namespaces/fleet/proxysyncs/baseline-${edge}` });
      expect(baseline.metadata.labels).toMatchObject({ 'syncprims.dev/fleetsync': 'baseline', 'syncprims.dev/cluster': edge });
      expect(baseline.spec.dependsOn).toEqual([{ kind: 'RemoteSync', name: `install-${edge}`, requiredStatus: 'Current' }]);
      const install = await mgmt.request<Synced>({ path: `/apis/syncprims.dev/v1alpha1/namespaces/fleet/remotesyncs/install-${edge}` });
      expect(install.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'FleetSync', name: 'install', controller: true })]);
    }
    // edge-2, the pull edge: registered with --pull and joined by syncprims join; install leaves it
    // out, so its baseline waited for install as a whole.
    expect(demo.stdout).toMatch(/^\$ syncprims cluster add edge-2 --pull --label role=edge --value region=us-east -n fleet --join-file \S+/m);
    expect(demo.stdout).toMatch(/^\$ syncprims join --kubeconfig \S+ --join-file \S+edge-2\.join\.yaml$/m);
    expect(demo.stdout).toMatch(new RegExp(`^joined: the operator in namespace ${SYSTEM} takes its assignments from https://127\\.0\\.0\\.1:\\d+ \\(namespace ${ASSIGNMENTS}\\)`, 'm'));
    const pullBaseline = await mgmt.request<Synced & { spec: { dependsOn?: unknown } }>({ path: '/apis/syncprims.dev/v1alpha1/namespaces/fleet/proxysyncs/baseline-edge-2' });
    expect(pullBaseline.spec.dependsOn).toEqual([{ kind: 'FleetSync', name: 'install', requiredStatus: 'Current' }]);
    // mgmt keeps no credential of it: its Secret has no data.
    const secret = await mgmt.request<KubeObject & { type?: string; data?: Record<string, string> }>({ path: '/api/v1/namespaces/fleet/secrets/edge-2-kubeconfig' });
    expect({ type: secret.type, data: Object.keys(secret.data ?? {}) }).toEqual({ type: 'syncprims.dev/pull-cluster', data: [] });
    // Its ProxySyncs were carried out by its own operator from their assignments in mgmt, which it reported Ready.
    const assignments = (await list(mgmt, 'syncs')).filter((a) => a.metadata.namespace === ASSIGNMENTS);
    expect(assignments.map((a) => `${a.metadata.name}=${ready(a)?.status}`).sort()).toEqual(['baseline-edge-2=True', 'shop-edge-2=True']);
  });

  test('each operator ran with only the token of the ServiceAccount that install created', async () => {
    for (const cluster of CLUSTERS) {
      const kc = new KubeConfig();
      kc.loadFromFile(path.join(LOCAL, 'operators', `${cluster}.kubeconfig`));
      expect(kc.getCurrentUser()).toMatchObject({ token: expect.any(String) });
      expect(kc.getCurrentUser()?.certData).toBeUndefined();
      const client = await KubeClient.create(cluster, kc);
      try {
        const review = await client.request<{ status: { userInfo: { username: string } } }>({
          method: 'POST',
          path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
        });
        expect(review.status.userInfo.username).toBe(OPERATOR_USER);
      } finally {
        client.close();
      }
      // ...and that operator leads in its cluster: the leader Lease names its process.
      const lease = await (await clusterClient(cluster)).request<{ spec: { holderIdentity?: string } }>({
        path: `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM}/leases/syncprims-leader`,
      });
      expect(lease.spec.holderIdentity).toBeTruthy();
    }
  });
});

describe('install and bootstrap', () => {
  test('bootstrap run again changes nothing: the bootstrap Sync keeps its generation and stays Ready', async () => {
    const before = await mgmt.request<Synced>({ path: `/apis/syncprims.dev/v1alpha1/namespaces/${SYSTEM}/syncs/syncprims` });
    const again = await runCli(['bootstrap', '--kubeconfig', kubeconfigPath(MGMT)]);
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' });
    const after = await mgmt.request<Synced>({ path: `/apis/syncprims.dev/v1alpha1/namespaces/${SYSTEM}/syncs/syncprims` });
    expect(after.metadata.generation).toBe(before.metadata.generation);
    expect(ready(after)?.status).toBe('True');
  });

  test('deleting the bootstrap Sync leaves the CRDs, the namespace, the operator and every sync in place', async () => {
    const crds = ['syncs', 'remotesyncs', 'proxysyncs', 'fleetsyncs'].map((p) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${p}.syncprims.dev`);
    await mgmt.request({ method: 'DELETE', path: `/apis/syncprims.dev/v1alpha1/namespaces/${SYSTEM}/syncs/syncprims` });
    await eventually('the bootstrap Sync to be gone', async () => {
      const left = await list(mgmt, 'syncs');
      return left.some((s) => s.metadata.name === 'syncprims') ? undefined : true;
    });
    for (const crd of crds) expect((await mgmt.request<KubeObject>({ path: crd })).metadata.deletionTimestamp).toBeUndefined();
    expect((await mgmt.request<KubeObject>({ path: `/api/v1/namespaces/${SYSTEM}` })).metadata.deletionTimestamp).toBeUndefined();
    await mgmt.request({ path: `/apis/apps/v1/namespaces/${SYSTEM}/deployments/syncprims-operator` });
    expect((await list(mgmt, 'proxysyncs')).length).toBe(6);
    expect((await list(mgmt, 'remotesyncs')).length).toBe(2);
    expect((await list(mgmt, 'fleetsyncs')).length).toBe(3);
    // Bootstrap brings it back, adopting what is there.
    expect((await runCli(['bootstrap', '--kubeconfig', kubeconfigPath(MGMT)])).code).toBe(0);
  });

  test('syncprims install | kubectl apply --server-side -f - applies cleanly to a fresh cluster, and kubectl delete undoes it', async () => {
    const cluster = 'journey-fresh';
    await controlplane(['up', cluster]);
    try {
      const kubectl = `${path.join(LOCAL, 'bin', 'kubectl')} --kubeconfig ${kubeconfigPath(cluster)}`;
      // A run cut short may have left its namespace being deleted.
      await sh(`${kubectl} wait --for=delete namespace/${SYSTEM} --timeout=60s`);
      const applied = await sh(`set -o pipefail; node dist/cli/main.js install | ${kubectl} apply --server-side -f -`);
      expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: '' });
      // Five CRDs, the RolloutApproval admission policy and its binding, the namespace, the account, the roles and bindings, the Deployment, the Service.
      expect(applied.stdout.trim().split('\n')).toHaveLength(17);
      expect(applied.stdout).toContain('deployment.apps/syncprims-operator serverside-applied');
      expect(applied.stdout).toContain('validatingadmissionpolicy.admissionregistration.k8s.io/rolloutapprovals.syncprims.dev serverside-applied');
      const client = await clusterClient(cluster);
      await client.request({ path: `/apis/apps/v1/namespaces/${SYSTEM}/deployments/syncprims-operator` });
      // Served before they are deleted, as they would be in use: a CRD deleted while the API server still
      // initializes its storage (under a second after its creation) is left to the CRD finalizer's retries,
      // which took minutes (its log: "storage is (re)initializing"; kubectl delete --wait then timed out).
      for (const plural of ['syncs', 'remotesyncs', 'proxysyncs', 'fleetsyncs', 'rolloutapprovals']) {
        await eventually(`${plural} served from the watch cache`, () => client.request({ path: `/apis/syncprims.dev/v1alpha1/${plural}`, query: { resourceVersion: '0' } }).then(() => true));
      }
      // Left as it was found, so that the next run finds a fresh cluster again.
      const deleted = await sh(`node dist/cli/main.js install | ${kubectl} delete --wait -f -`, { timeoutMs: 240_000 });
      expect(deleted.code).toBe(0);
    } finally {
      await controlplane(['stop', cluster]);
    }
  }, 360_000);
});

describe('kubectl shows the kinds', () => {
  test('get syncprims lists the ProxySyncs with their kubeconfig Secret and the FleetSyncs with their clusters ready; describe shows conditions and Events', async () => {
    const kubectl = `${path.join(LOCAL, 'bin', 'kubectl')} --kubeconfig ${kubeconfigPath(MGMT)}`;
    const got = await sh(`${kubectl} get syncprims -n fleet`);
    expect(got.code).toBe(0);
    const lines = got.stdout.split('\n');
    // One table per kind, each with its header: the ProxySyncs' is the last header above their rows.
    const wave2At = lines.findIndex((l) => l.startsWith('proxysync.syncprims.dev/shop-edge-2 '));
    const header = lines.slice(0, wave2At).reverse().find((l) => l.startsWith('NAME'))!;
    expect(header.split(/\s+/)).toEqual(['NAME', 'READY', 'STATUS', 'CLUSTER', 'KUBECONFIG', 'AGE']);
    // Columns by their offsets in their table's header (a message may hold spaces).
    const cell = (line: string, column: string, head = header) => line.slice(head.indexOf(column)).split(/\s{2,}/)[0];
    const wave2 = lines[wave2At]!;
    // The FleetSync's child names its cluster by the inventory's kubeconfig Secret.
    expect([cell(wave2, 'READY'), cell(wave2, 'CLUSTER'), cell(wave2, 'KUBECONFIG')]).toEqual(['True', '', 'edge-2-kubeconfig']);
    const fleetHeader = lines.find((l) => l.startsWith('NAME') && l.includes('CLUSTERS'))!;
    expect(fleetHeader.split(/\s+/)).toEqual(['NAME', 'READY', 'PHASE', 'CLUSTERS', 'AGE']);
    const install = lines.find((l) => l.startsWith('fleetsync.syncprims.dev/install '))!;
    expect([cell(install, 'READY', fleetHeader), cell(install, 'CLUSTERS', fleetHeader)]).toEqual(['True', '2/2']);
    const described = await sh(`${kubectl} describe proxysync shop-edge-1 -n fleet`);
    expect(described.stdout).toMatch(/Type:\s+Ready/);
    expect(described.stdout).toContain('Events:');
    expect(described.stdout).toMatch(/Warning\s+ApplyFailed/);
    const waited = await sh(`${kubectl} wait --for=condition=Ready proxysync/shop-edge-2 -n fleet --timeout=10s`);
    expect(waited.stdout).toContain('condition met');
  });
});

// The demo's own words for where its operators write their logs, so a failure here can be followed.
test('the operators log where the demo says', () => {
  for (const cluster of CLUSTERS) expect(readFileSync(path.join(LOCAL, 'operators', `${cluster}.log`), 'utf8')).toContain('became leader');
});
