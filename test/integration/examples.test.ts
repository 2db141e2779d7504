// Every example in examples/ is accepted by the real API server (with the CRDs
// installed), so the examples never rot as the schema changes; the Helm
// example's chart (examples/helm/web/, not manifests: left out of that check)
// is packaged into a ConfigMap, as its comment says, and installed by an operator.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isKind, parseSyncObject } from '../../src/api/index.js';
import type { FleetSyncSpec } from '../../src/api/fleet.js';
import { clusterValues } from '../../src/clusters/cluster-values.js';
import { revisionDataOf } from '../../src/fleet/children.js';
import { clusterTemplate } from '../../src/fleet/cluster-template.js';
import { serverSideApply } from '../../src/kube/apply.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { clusterApi, closeClients, ROOT } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import type { KubeClient } from '../../src/kube/client.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { applySync, find, waitForReady } from '../support/syncs.js';
import { tarGz } from '../support/tarball.js';
import { markDeploymentAvailable } from '../support/workloads.js';

const dir = path.join(ROOT, 'examples');
const all = readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
/** The chart folders (holding Chart.yaml): their files are templates, not manifests. */
const charts = all.filter((f) => path.basename(f) === 'Chart.yaml').map((f) => path.dirname(f));
const inChart = (f: string): boolean => charts.some((c) => f.startsWith(`${c}/`));
/** Every YAML file under examples/, subfolders included (`registration/install.yaml`), but a chart's. */
const files = all.filter((f) => f.endsWith('.yaml') && !inChart(f));

beforeAll(() => installCrds('mgmt'));
afterAll(closeClients);

describe('examples', () => {
  const ns = useTestNamespace('mgmt', 'examples');

  test('there are examples', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  test.each(files)('%s is valid for the schema and the API server', async (file) => {
    const { client, discovery } = await clusterApi('mgmt');
    const docs = parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'), { version: '1.1' });
    for (const doc of docs) {
      expect(doc.errors).toEqual([]);
      const obj = doc.toJS() as KubeObject;
      // Objects of our kinds (FleetSync too) are checked by our schema too; every document by the API server.
      if (obj.apiVersion.startsWith('syncprims.dev/')) {
        expect(isKind(obj.kind)).toBe(true);
        if (isKind(obj.kind)) expect(parseSyncObject(obj.kind, obj)).toMatchObject({ ok: true });
      }
      const namespaced = (await discovery.resolve(obj.apiVersion, obj.kind)).namespaced;
      const applied = await serverSideApply(
        client,
        discovery,
        namespaced ? { ...obj, metadata: { ...obj.metadata, namespace: ns() } } : obj,
        { fieldManager: 'syncprims-examples', dryRun: true },
      );
      expect(applied.metadata.name).toBe(obj.metadata.name);
    }
  });

  // The rollout journey's one template, each edge its own ConfigMap (examples/demo.sh sets the
  // regions; journeys.test.ts finds them in the edges): what each edge's child would apply.
  test('rollout/app.yaml: each edge its region (unknown without one), the canary edge-1 alone the label track', () => {
    const shop = parseAllDocuments(readFileSync(path.join(dir, 'rollout', 'app.yaml'), 'utf8'))[0]!.toJS() as { spec: FleetSyncSpec };
    const release = (name: string, region?: string) => {
      const annotations: Record<string, string> = region ? { 'values.syncprims.dev/region': region } : {};
      const made = clusterTemplate(revisionDataOf(shop.spec), { name, labels: { 'syncprims.dev/cluster': name, role: 'edge' }, values: clusterValues(name, annotations) });
      if (!made.ok) throw new Error(made.message);
      const cm = made.template.spec.source?.inline?.[0] as { metadata: { labels: Record<string, string> }; data: Record<string, string> };
      return { data: cm.data, track: cm.metadata.labels.track };
    };
    expect(release('edge-1', 'eu-west')).toEqual({ data: { version: '1.0.0', region: 'eu-west' }, track: 'canary' });
    expect(release('edge-2', 'us-east')).toEqual({ data: { version: '1.0.0', region: 'us-east' }, track: undefined });
    expect(release('edge-3')).toEqual({ data: { version: '1.0.0', region: 'unknown' }, track: undefined });
  });
});

describe('the Helm example (examples/helm/)', () => {
  let client: KubeClient;
  const ns = useOperatedNamespace('mgmt', 'examples-helm', (o) => ({ client } = o));

  test('helm/sync-web.yaml installs helm/web/, packaged into the ConfigMap it names, with its values', async () => {
    expect(charts).toEqual(['helm/web']);
    // `helm package examples/helm/web`: every file under web/.
    const chartDir = path.join(dir, 'helm', 'web');
    const entries = readdirSync(chartDir, { recursive: true, encoding: 'utf8' })
      .filter((f) => statSync(path.join(chartDir, f)).isFile())
      .sort()
      .map((f) => ({ name: `web/${f}`, data: readFileSync(path.join(chartDir, f), 'utf8') }));
    const tgz = await tarGz(entries);
    // `kubectl create configmap web-chart --from-file=web-0.1.0.tgz`: a binary file goes to binaryData.
    await client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns()}/configmaps`,
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web-chart' }, binaryData: { 'web-0.1.0.tgz': tgz.toString('base64') } },
    });
    const sync = parseAllDocuments(readFileSync(path.join(dir, 'helm', 'sync-web.yaml'), 'utf8'))[0]!.toJS() as KubeObject & { spec: Record<string, unknown> };
    await applySync(client, ns(), sync.metadata.name!, sync.spec);
    const deployment = `/apis/apps/v1/namespaces/${ns()}/deployments/web`;
    await eventually('the chart\'s Deployment', () => find(client, deployment));
    await markDeploymentAvailable(client, ns(), 'web');
    const ready = await waitForReady(client, ns(), 'web', 'True', 'Succeeded');
    expect(ready.status?.lastAppliedRevision).toMatch(/^web-0\.1\.0@sha256:[0-9a-f]{64}\+values\.[0-9a-f]{16}$/);
    expect(await find(client, deployment)).toMatchObject({ spec: { replicas: 2, template: { spec: { containers: [{ image: 'nginx:1.27' }] } } } });
    expect(await find(client, `/api/v1/namespaces/${ns()}/configmaps/web-content`)).toMatchObject({ data: { 'index.html': '<p>hello from syncprims</p>\n' } });
    expect(await find(client, `/api/v1/namespaces/${ns()}/services/web`)).toMatchObject({ spec: { ports: [{ port: 80 }] } });
  });
});
