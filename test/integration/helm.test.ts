// Helm charts through a running operator (issue 47): a Sync installs a chart
// fetched over http (a loopback server), its CRD first and never pruned, its
// revision naming the chart, its archive and its values; a values change
// changes both; valuesFrom a Secret is read as the sync's account (refused
// until a Role lets it); a missing valuesFrom is a SourceError with nothing
// applied; hostile archives are refused; and a FleetSync installs the chart
// on edge-1 and edge-2 with values of each cluster, a change rolling through
// its waves; a chart's Job hooks through the operator (pre before the set, post
// after it, nothing run again on a restart, all again for new values, a failed
// pre Job stopping the set, leftover hooks deleted with the Sync). Runs the Helm helper `make build` builds (SYNCPRIMS_HELM_HELPER
// names another).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeClient } from '../../src/kube/client.js';
import { ByteBudget, DEFAULT_SOURCE_LIMITS, SourceError } from '../../src/source/index.js';
import { fetchChart } from '../../src/source/chart-source.js';
import { chartRevision } from '../../src/source/chart-values.js';
import { packageWebChart, WEB_CHART } from '../support/charts/web-chart.js';
import { clusterClient, closeClients, ensureClusters } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { gzipBomb } from '../support/hostile-archives.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { bindRole } from '../support/rbac.js';
import { applyFleetSync, FLEETSYNCS, registerEastAndWest, REMOTESYNCS } from '../support/remote.js';
import { applySync, deleteSyncAndWait, find, getSync, readyOf, waitForReady, type SyncObject } from '../support/syncs.js';
import { tarGz } from '../support/tarball.js';
import { packageChart } from '../support/chart-repository.js';
import { finishJob, markDeploymentAvailable } from '../support/workloads.js';

const HOME = 'mgmt';
/** Each run's own CRD group: CRDs of crds/ are never pruned, and the test removes them itself. */
const GROUP = `h${randomBytes(3).toString('hex')}.helm-test.syncprims.dev`;
const CRD_PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${GROUP}`;
let mgmt: KubeClient;
let edge1: KubeClient;
let edge2: KubeClient;
let op: OperatorProcess;
const OPERATOR_ARGS = (): string[] => ['--namespace', ns(), '--cluster-id', 'mgmt-helm-test'];
let server: http.Server;
let base = '';
let chart: Buffer;
const files = new Map<string, Buffer>();
const ns = useTestNamespace(HOME, 'helm');
const edgeNs = useTestNamespace('edge-1', 'helmedge');

beforeAll(async () => {
  await ensureClusters([HOME, 'edge-1', 'edge-2']);
  [mgmt, edge1, edge2] = await Promise.all([clusterClient(HOME), clusterClient('edge-1'), clusterClient('edge-2')]);
  await installCrds(HOME);
  chart = await packageWebChart(GROUP);
  files.set('/web-1.0.0.tgz', chart);
  server = http.createServer((req, res) => {
    const body = files.get(req.url ?? '');
    if (!body) return void res.writeHead(404).end('not found');
    res.writeHead(200).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await registerEastAndWest(mgmt, ns(), edgeNs());
  files.set('/jobs-1.0.0.tgz', await packageChart(JOBS_CHART));
  op = await OperatorProcess.start(HOME, OPERATOR_ARGS());
}, 120_000);

afterAll(async () => {
  await op?.stop('SIGTERM');
  await new Promise((r) => server?.close(r));
  await Promise.all([mgmt, edge1, edge2].map((c) => c?.request({ method: 'DELETE', path: CRD_PATH }).catch(() => undefined)));
  await edge2?.request({ method: 'DELETE', path: `/api/v1/namespaces/${edgeNs()}` }).catch(() => undefined);
  await closeClients();
});

const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const cm = (client: KubeClient, namespace: string, name: string) =>
  find<{ data?: Record<string, string> }>(client, `/api/v1/namespaces/${namespace}/configmaps/${name}`);
const widget = (client: KubeClient, namespace: string, name: string) =>
  find<{ spec?: { message?: string } }>(client, `/apis/${GROUP}/v1/namespaces/${namespace}/widgets/${name}`);
const source = () => ({ http: { url: `${base}/web-1.0.0.tgz` } });

/** A chart of one ConfigMap, a pre-install/pre-upgrade Job and a post-install/post-upgrade Job (no delete policy: before-hook-creation). */
const JOBS_CHART = {
  name: 'jobs',
  version: '1.0.0',
  files: {
    'values.yaml': 'message: one\n',
    'templates/app.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-app\ndata:\n  message: {{ .Values.message | quote }}\n',
    ...Object.fromEntries(
      (['pre', 'post'] as const).map((phase) => [
        `templates/${phase}.yaml`,
        [
          'apiVersion: batch/v1',
          'kind: Job',
          'metadata:',
          `  name: {{ .Release.Name }}-${phase}`,
          `  annotations: {"helm.sh/hook": "${phase}-install,${phase}-upgrade"}`,
          'spec:',
          '  backoffLimit: 0',
          '  template:',
          '    spec:',
          '      restartPolicy: Never',
          `      containers: [{name: ${phase}, image: registry.invalid/${phase}:1.0, args: [{{ .Values.message | quote }}]}]`,
          '',
        ].join('\n'),
      ]),
    ),
  },
};

describe('a Sync of a chart', () => {
  test('installs it: the CRD first and never pruned, the objects in the release namespace, the revision naming chart, archive and values; a values change changes both', async () => {
    await applySync(mgmt, ns(), 'web', { source: source(), helm: { values: { message: 'one' } } });
    await eventually('the Deployment', async () => find(mgmt, `/apis/apps/v1/namespaces/${ns()}/deployments/web`));
    await markDeploymentAvailable(mgmt, ns(), 'web', 0);
    const ready = await waitForReady(mgmt, ns(), 'web', 'True');
    const revision = chartRevision(WEB_CHART, sha256(chart), {
      values: [{ from: 'spec.helm.values', object: { message: 'one' } }],
      releaseName: 'web',
      namespace: ns(),
      includeCRDs: true,
    });
    expect(revision).toMatch(new RegExp(`^web-1\\.0\\.0@${sha256(chart)}\\+values\\.[0-9a-f]{16}$`));
    expect(ready.status?.lastAppliedRevision).toBe(revision);

    const crd = await find<{ metadata: { annotations?: Record<string, string>; labels?: Record<string, string> } }>(mgmt, CRD_PATH);
    expect(crd?.metadata.annotations?.['syncprims.dev/prune']).toBe('disabled');
    expect(crd?.metadata.labels?.['syncprims.dev/owner-name']).toBe('web');
    const version = await mgmt.request<{ gitVersion: string }>({ path: '/version' });
    // The values layered over the chart's, .Release.Namespace the sync's, .Capabilities the cluster's.
    expect((await cm(mgmt, ns(), 'web-config'))?.data).toEqual({ message: 'one', password: 'none', namespace: ns(), kubeVersion: version.gitVersion });
    expect((await widget(mgmt, ns(), 'web-widget'))?.spec?.message).toBe('one');
    // A test hook is never applied.
    expect(await find(mgmt, `/api/v1/namespaces/${ns()}/pods/web-test`)).toBeUndefined();
    // The pre-install hook went through the hook stage: applied, its run recorded for this revision, not in the inventory (never pruned).
    expect((await cm(mgmt, ns(), 'web-pre'))?.data).toEqual({ step: 'pre' });
    const status = ready.status as { hooks?: { revision?: string; phase?: string }; inventory?: { entries?: { id: string }[] } };
    expect(status.hooks).toMatchObject({ revision, phase: 'Done' });
    const ids = (status.inventory?.entries ?? []).map((e) => e.id);
    expect(ids.some((id) => id.includes('web-config'))).toBe(true);
    expect(ids.filter((id) => id.includes('web-pre'))).toEqual([]);

    await applySync(mgmt, ns(), 'web', { source: source(), helm: { values: { message: 'two' } } });
    const changed = await eventually('the new values applied', async () => {
      const s = await getSync(mgmt, ns(), 'web');
      return s.status?.lastAppliedRevision !== revision && readyOf(s)?.status === 'True' && s.status?.observedGeneration === s.metadata.generation ? s : undefined;
    });
    expect(changed.status?.lastAppliedRevision).toMatch(new RegExp(`^web-1\\.0\\.0@${sha256(chart)}\\+values\\.`));
    expect((await cm(mgmt, ns(), 'web-config'))?.data?.message).toBe('two');
    expect((await widget(mgmt, ns(), 'web-widget'))?.spec?.message).toBe('two');
  });

  test("valuesFrom a Secret is read as the sync's account: refused naming the Secret while it may not read it, applied once a Role lets it", async () => {
    const account = 'deployer';
    await mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/serviceaccounts`, body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account } } });
    const writes = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
    await bindRole(mgmt, ns(), account, [{ apiGroups: [''], resources: ['configmaps'], verbs: writes }, { apiGroups: ['apps'], resources: ['deployments'], verbs: writes }], { name: account, namespace: ns() });
    await mgmt.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns()}/secrets`,
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' }, stringData: { password: 'from-the-secret', 'values.yaml': 'message: from-secret\n' } },
    });
    const spec = {
      serviceAccountName: account,
      wait: false,
      source: source(),
      helm: { includeCRDs: false, values: { widget: false }, valuesFrom: [{ kind: 'Secret', name: 'db' }, { kind: 'Secret', name: 'db', key: 'password', targetPath: 'db.password' }] },
    };
    await applySync(mgmt, ns(), 'secret-values', spec);
    const refused = await waitForReady(mgmt, ns(), 'secret-values', 'False', 'SourceError');
    expect(readyOf(refused)?.message).toContain(`service account ${ns()}/${account} may not get Secret ${ns()}/db (a sync reads its source as its service account)`);
    expect(readyOf(refused)?.message).toContain('spec.helm.valuesFrom[0].name');
    expect(await cm(mgmt, ns(), 'secret-values-config')).toBeUndefined();

    await bindRole(mgmt, ns(), `${account}-secrets`, [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['db'], verbs: ['get'] }], { name: account, namespace: ns() });
    // Asked again now (the refusal is retried with a backoff).
    await applySync(mgmt, ns(), 'secret-values', spec, { annotations: { 'syncprims.dev/reconcile-requested-at': new Date().toISOString() } });
    await waitForReady(mgmt, ns(), 'secret-values', 'True');
    expect((await cm(mgmt, ns(), 'secret-values-config'))?.data).toMatchObject({ message: 'from-secret', password: 'from-the-secret' });
  });

  test('a missing valuesFrom that is not optional is a SourceError naming it, and nothing is applied; an optional one is skipped', async () => {
    await applySync(mgmt, ns(), 'missing', {
      wait: false,
      source: source(),
      helm: { includeCRDs: false, values: { widget: false }, valuesFrom: [{ kind: 'ConfigMap', name: 'maybe', optional: true }, { kind: 'ConfigMap', name: 'absent' }] },
    });
    const refused = await waitForReady(mgmt, ns(), 'missing', 'False', 'SourceError');
    expect(readyOf(refused)?.message).toBe(`ConfigMap ${ns()}/absent not found: create it, or fix spec.helm.valuesFrom[1].name`);
    expect(await cm(mgmt, ns(), 'missing-config')).toBeUndefined();
    expect(await find(mgmt, `/apis/apps/v1/namespaces/${ns()}/deployments/missing`)).toBeUndefined();
  });
});

describe('hostile chart archives', () => {
  const fetch = async (archive: Buffer): Promise<string> => {
    files.set('/hostile.tgz', archive);
    const lease = new ByteBudget(64 << 20).lease('hostile');
    const err = await fetchChart({ client: mgmt, namespace: ns(), source: { http: { url: `${base}/hostile.tgz` } }, limits: { ...DEFAULT_SOURCE_LIMITS, maxUnpackedBytes: 8 << 20 }, lease }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SourceError);
    return (err as Error).message;
  };

  test('a symlink out of the chart, a ../ entry and a tar bomb are refused, naming the entry or the limit', async () => {
    const chartYaml = { name: 'web/Chart.yaml', data: 'apiVersion: v2\nname: web\nversion: 1.0.0\n' };
    expect(await fetch(await tarGz([chartYaml, { name: 'web/templates/x.yaml', type: 'symlink', linkname: '../../../etc/passwd' }]))).toMatch(/entry "web\/templates\/x\.yaml" is a link to "\.\.\/\.\.\/\.\.\/etc\/passwd", outside the archive root; archive refused$/);
    expect(await fetch(await tarGz([chartYaml, { name: 'web/../../values.yaml', data: 'a: 1' }]))).toMatch(/entry "web\/\.\.\/\.\.\/values\.yaml" is an absolute path or leaves the archive root \(\.\.\); archive refused$/);
    expect(await fetch(gzipBomb(64, 'web/templates/bomb.yaml'))).toMatch(/more than 8 MiB once unpacked \(the source limit, --source-max-unpacked\); archive refused$/);
  });
});

describe('a FleetSync of a chart', () => {
  type Fleet = SyncObject & { status?: { phase?: string; updateRevision?: string; currentRevision?: string; message?: string } };
  const fleet = () => getSync(mgmt, ns(), 'charts', FLEETSYNCS) as Promise<Fleet>;
  const waitPhase = (phase: string) =>
    eventually(`charts ${phase}`, async () => {
      const f = await fleet();
      return f.status?.phase === phase && f.status.observedGeneration === f.metadata.generation ? f : undefined;
    }, 60_000);
  const messages = async () => [(await cm(edge1, edgeNs(), 'charts-config'))?.data?.message, (await cm(edge2, edgeNs(), 'charts-config'))?.data?.message];
  const spec = (suffix: string, approval: boolean) => ({
    kind: 'RemoteSync',
    clusters: { names: ['east', 'west'] },
    substitute: {},
    rollout: { waves: [{ name: 'canary', selector: { matchLabels: { region: 'east' } } }, { name: 'rest', ...(approval ? { approval: true } : {}) }] },
    template: { spec: { wait: false, defaultNamespace: edgeNs(), source: source(), helm: { releaseName: 'charts', values: { message: `\${cluster_name}${suffix}` } } } },
  });

  test("each edge gets the chart with its own values; a values change rolls through the waves, the rest only once approved", async () => {
    await applyFleetSync(mgmt, ns(), 'charts', spec('', false));
    await waitPhase('Complete');
    expect(await messages()).toEqual(['east', 'west']);
    for (const edge of [edge1, edge2]) {
      expect((await find<{ metadata: { annotations?: Record<string, string> } }>(edge, CRD_PATH))?.metadata.annotations?.['syncprims.dev/prune']).toBe('disabled');
      expect(await widget(edge, edgeNs(), 'charts-widget')).toBeDefined();
    }
    const children = await Promise.all(['charts-east', 'charts-west'].map((c) => getSync(mgmt, ns(), c, REMOTESYNCS)));
    const revisions = children.map((c) => c.status?.lastAppliedRevision);
    expect(revisions.every((r) => r?.startsWith(`web-1.0.0@${sha256(chart)}+values.`))).toBe(true);
    // Different values, different revisions.
    expect(revisions[0]).not.toBe(revisions[1]);

    await applyFleetSync(mgmt, ns(), 'charts', spec('-v2', true));
    const waiting = await waitPhase('AwaitingApproval');
    expect(waiting.status?.message).toContain('wave rest waits for approval');
    expect(await messages()).toEqual(['east-v2', 'west']);
    await mgmt.request({
      method: 'POST',
      path: `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/rolloutapprovals`,
      body: { apiVersion: 'syncprims.dev/v1alpha1', kind: 'RolloutApproval', metadata: { name: 'charts-rest' }, spec: { fleetSync: 'charts', revision: waiting.status?.updateRevision, wave: 'rest', approver: 'admin' } },
    });
    await waitPhase('Complete');
    expect(await messages()).toEqual(['east-v2', 'west-v2']);
  });
});

describe("a chart's Job hooks through the operator", () => {
  type Job = { metadata: { uid: string; creationTimestamp: string; labels?: Record<string, string> } };
  const hooksOf = (s: SyncObject) => (s.status as { hooks?: { revision?: string; phase?: string } } | undefined)?.hooks;
  const jobsSource = () => ({ http: { url: `${base}/jobs-1.0.0.tgz` } });
  const job = (name: string) => find<Job>(mgmt, `/apis/batch/v1/namespaces/${ns()}/jobs/${name}`);
  const app = (release: string) => cm(mgmt, ns(), `${release}-app`);
  /** The hook Jobs of a release now, by name: uid and creation time (a Job made again has another uid). */
  const jobsOf = async (release: string): Promise<Record<string, string>> => {
    const list = await mgmt.request<{ items: (Job & { metadata: { name: string } })[] }>({
      path: `/apis/batch/v1/namespaces/${ns()}/jobs`,
      query: { labelSelector: `syncprims.dev/owner-name=${release}` },
    });
    return Object.fromEntries(list.items.map((j) => [j.metadata.name, `${j.metadata.uid}@${j.metadata.creationTimestamp}`]));
  };
  /** Waits for the Job `name` of another uid than `not` (a hook run again is a new object), and returns its uid. */
  const newJob = (name: string, not?: string) =>
    eventually(`hook Job ${name}${not ? ' made again' : ''}`, async () => {
      const j = await job(name);
      return j && j.metadata.uid !== not ? j.metadata.uid : undefined;
    });
  const waitingFor = (release: string, name: string) =>
    eventually(`${release} waiting for its hook Job ${name}`, async () => {
      const s = await getSync(mgmt, ns(), release);
      return readyOf(s)?.status === 'Unknown' && readyOf(s)?.message === `waiting for hook Job ${ns()}/${name}: not started` ? s : undefined;
    });

  test('pre Job before the set, post Job after it; a restart runs nothing again; new values run both again', async () => {
    await applySync(mgmt, ns(), 'hooks', { source: jobsSource(), helm: {} });
    const pre = await newJob('hooks-pre');
    await waitingFor('hooks', 'hooks-pre');
    // The set waits for the pre hook: nothing of it is applied, and the post hook has not started.
    expect(await app('hooks')).toBeUndefined();
    expect(await job('hooks-post')).toBeUndefined();

    await finishJob(mgmt, ns(), 'hooks-pre', 'Complete');
    const post = await newJob('hooks-post');
    // The post hook starts once the set is applied (and Ready); Ready waits for it.
    expect((await app('hooks'))?.data).toEqual({ message: 'one' });
    await waitingFor('hooks', 'hooks-post');
    await finishJob(mgmt, ns(), 'hooks-post', 'Complete');
    const done = await waitForReady(mgmt, ns(), 'hooks', 'True', 'Succeeded');
    expect(hooksOf(done)).toMatchObject({ revision: done.status?.lastAppliedRevision, phase: 'Done' });
    const before = await jobsOf('hooks');
    expect(Object.keys(before).sort()).toEqual(['hooks-post', 'hooks-pre']);

    // A new operator process, asked to reconcile the Sync at once: it runs no hook again (the same Jobs, none made anew).
    await op.stop('SIGTERM');
    op = await OperatorProcess.start(HOME, OPERATOR_ARGS());
    const requestedAt = new Date().toISOString();
    await applySync(mgmt, ns(), 'hooks', { source: jobsSource(), helm: {} }, { annotations: { 'syncprims.dev/reconcile-requested-at': requestedAt } });
    const handled = await eventually('the new operator handled the request', async () => {
      const s = await getSync(mgmt, ns(), 'hooks');
      return s.status?.lastHandledReconcileAt === requestedAt ? s : undefined;
    });
    expect(readyOf(handled)).toMatchObject({ status: 'True', reason: 'Succeeded' });
    expect(handled.status?.lastAppliedRevision).toBe(done.status?.lastAppliedRevision);
    expect(await jobsOf('hooks')).toEqual(before);

    // New values, a new revision: both hooks run again (before-hook-creation: the old Jobs deleted, new ones made).
    await applySync(mgmt, ns(), 'hooks', { source: jobsSource(), helm: { values: { message: 'two' } } });
    await newJob('hooks-pre', pre);
    await waitingFor('hooks', 'hooks-pre');
    expect((await app('hooks'))?.data).toEqual({ message: 'one' });
    await finishJob(mgmt, ns(), 'hooks-pre', 'Complete');
    await newJob('hooks-post', post);
    expect((await app('hooks'))?.data).toEqual({ message: 'two' });
    await finishJob(mgmt, ns(), 'hooks-post', 'Complete');
    const again = await waitForReady(mgmt, ns(), 'hooks', 'True', 'Succeeded');
    expect(again.status?.lastAppliedRevision).not.toBe(done.status?.lastAppliedRevision);
    expect(hooksOf(again)).toMatchObject({ revision: again.status?.lastAppliedRevision, phase: 'Done' });
  });

  test('a failed pre Job: Ready False HookFailed naming it, the set not applied; deleting the Syncs deletes their leftover hook Jobs', async () => {
    await applySync(mgmt, ns(), 'hooks-bad', { source: jobsSource(), helm: {} });
    await newJob('hooks-bad-pre');
    await waitingFor('hooks-bad', 'hooks-bad-pre');
    await finishJob(mgmt, ns(), 'hooks-bad-pre', 'Failed');
    const failed = await waitForReady(mgmt, ns(), 'hooks-bad', 'False', 'HookFailed');
    expect(readyOf(failed)?.message).toBe(`pre-install/pre-upgrade hook Job ${ns()}/hooks-bad-pre failed: failed: Job has reached the specified backoff limit (1 pods failed)`);
    expect(await app('hooks-bad')).toBeUndefined();
    expect(await job('hooks-bad-post')).toBeUndefined();
    expect(failed.status?.lastAppliedRevision).toBeUndefined();

    // The hooks are in no inventory (never pruned), but go with their Sync: status.hooks.entries lists them.
    await Promise.all(['hooks', 'hooks-bad'].map((name) => deleteSyncAndWait(mgmt, ns(), name)));
    await eventually('the hook Jobs deleted with their Syncs', async () => {
      const left = { ...(await jobsOf('hooks')), ...(await jobsOf('hooks-bad')) };
      return Object.keys(left).length === 0 ? true : undefined;
    });
    expect(await app('hooks')).toBeUndefined();
  });
});
