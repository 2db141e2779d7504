// `make screenshot`: docs/ui.png, the web view of a sample namespace drawn
// by headless Chromium, so that the README's picture stays true. On the
// control plane of bench/ui-support.ts (its own etcd; stopped at the end).
// Not run by the tests: a test run changes no tracked file.
//
// The sample: a platform that is Ready; a database whose Deployment never
// becomes available here (the local control plane runs no pods: it stays
// progressing) with what depends on it waiting; a suspended Sync; a cycle;
// a RemoteSync whose cluster does not answer; and a FleetSync `storefront`
// rolling out in waves (canary, eu, then the rest) to four inventory
// clusters, each a kubeconfig Secret with labels and values of its own, with
// `substitute` and two overrides by label. Its canary wave halts: the canary
// edge-us-1 does not answer (a dead port; `onUnreachable: Fail`) and the wave
// allows no failure. In the eu wave, edge-eu-2 has no `region` value: it
// fails alone (SubstitutionFailed, nothing written there). The FleetSync is
// selected, so the detail panel shows its rollout.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { launchChromium } from '../test/support/browser.js';
import type { KubeClient } from '../src/kube/client.js';
import type { KubeObject } from '../src/kube/resources.js';
import { ROOT, stopOperators, until } from './support.js';
import { applySyncs, configMap, KUBECONFIG, operatorWithUi, startPlane, stopPlane } from './ui-support.js';

const NS = 'shop';
const OUT = path.resolve(ROOT, process.argv[2] ?? 'docs/ui.png');

const deployment = (name: string): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: NS },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: `${name}:1` }] } } },
});

const inline = (...objects: KubeObject[]) => ({ source: { inline: objects } });

/** A kubeconfig of the plane's cluster, at a port where nothing listens (one port per cluster: a connection is shared by identical kubeconfigs). */
function deadKubeconfig(port = 1): string {
  const kc = parse(readFileSync(KUBECONFIG, 'utf8')) as { clusters: { cluster: { server: string } }[] };
  const server = new URL(kc.clusters[0]!.cluster.server);
  server.port = String(port);
  kc.clusters[0]!.cluster.server = server.origin;
  return stringify(kc);
}

/** A kubeconfig Secret of the sample namespace's cluster inventory: cluster `name`, with labels and values (`values.syncprims.dev/` annotations). */
function inventorySecret(name: string, kubeconfig: string, labels: Record<string, string>, values: Record<string, string>): KubeObject {
  const annotations = Object.fromEntries(Object.entries(values).map(([k, v]) => [`values.syncprims.dev/${k}`, v]));
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-kubeconfig`, labels: { 'syncprims.dev/cluster': name, ...labels }, annotations }, stringData: { value: kubeconfig } } as KubeObject;
}

/** Where the fleet's children apply their ConfigMap, in the plane itself. */
const EDGE_NS = 'storefront';

/** Four clusters: three are the plane itself (each by a Secret of its own), edge-us-1 a dead port; edge-eu-2 has no `region`. */
const FLEET_CLUSTERS: { name: string; labels: Record<string, string>; values: Record<string, string>; dead?: true }[] = [
  { name: 'edge-eu-1', labels: { tier: 'canary', geo: 'eu' }, values: { region: 'eu-west-1' } },
  { name: 'edge-us-1', labels: { tier: 'canary', geo: 'us' }, values: { region: 'us-east-1' }, dead: true },
  { name: 'edge-eu-2', labels: { geo: 'eu' }, values: { zone: 'eu-central-1a' } },
  { name: 'edge-ap-1', labels: { geo: 'ap' }, values: { region: 'ap-south-1', mirror: 'mirror.ap.example.com' } },
];

/** The FleetSync: a ConfigMap per cluster with its region, in waves; the canary wave allows no failure. */
const storefront = {
  clusters: { selector: { matchExpressions: [{ key: 'geo', operator: 'Exists' }] } },
  kind: 'RemoteSync',
  substitute: {},
  dependsOn: [{ name: 'platform' }],
  template: {
    metadata: { labels: { region: '${region}' } },
    spec: {
      defaultNamespace: EDGE_NS,
      source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'storefront-${cluster_name}' }, data: { region: '${region}', mirror: '${mirror:=registry.example.com}' } }] },
    },
  },
  overrides: [
    { clusters: { selector: { matchLabels: { tier: 'canary' } } }, patches: [{ op: 'add', path: '/spec/source/inline/0/data/canary', value: 'true' }] },
    { clusters: { selector: { matchLabels: { geo: 'eu' } } }, patches: [{ op: 'replace', path: '/spec/source/inline/0/data/mirror', value: 'mirror.eu.example.com' }] },
  ],
  rollout: { waves: [{ name: 'canary', selector: { matchLabels: { tier: 'canary' } }, maxFailures: 0 }, { name: 'eu', selector: { matchLabels: { geo: 'eu' } } }], onUnreachable: 'Fail' },
};

async function sample(client: KubeClient): Promise<void> {
  for (const name of [NS, EDGE_NS]) await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  const secrets = [
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'edge-eu-kubeconfig' }, stringData: { value: deadKubeconfig() } },
    ...FLEET_CLUSTERS.map((c) => inventorySecret(c.name, c.dead ? deadKubeconfig(2) : readFileSync(KUBECONFIG, 'utf8'), c.labels, c.values)),
  ];
  for (const body of secrets) await client.request({ method: 'POST', path: `/api/v1/namespaces/${NS}/secrets`, body });
  await applySyncs(client, NS, [
    { name: 'crds', spec: inline(configMap(NS, 'crds')) },
    { name: 'platform', spec: { ...inline(configMap(NS, 'platform'), configMap(NS, 'platform-settings')), dependsOn: [{ name: 'crds' }] } },
    { name: 'cache', spec: { ...inline(configMap(NS, 'cache')), dependsOn: [{ name: 'platform' }] } },
    { name: 'db', spec: { ...inline(deployment('db')), timeout: '1h', dependsOn: [{ name: 'platform' }] } },
    { name: 'api', spec: { ...inline(configMap(NS, 'api')), dependsOn: [{ name: 'db' }, { name: 'cache' }] } },
    { name: 'web', spec: { ...inline(configMap(NS, 'web')), dependsOn: [{ name: 'api' }] } },
    { name: 'reports', spec: { ...inline(configMap(NS, 'reports')), suspend: true, dependsOn: [{ name: 'platform' }] } },
    { name: 'billing', spec: { ...inline(configMap(NS, 'billing')), dependsOn: [{ name: 'invoices' }] } },
    { name: 'invoices', spec: { ...inline(configMap(NS, 'invoices')), dependsOn: [{ name: 'billing' }] } },
    { name: 'edge-eu', kind: 'RemoteSync', spec: { ...inline(configMap('default', 'edge')), kubeConfig: { secretRef: { name: 'edge-eu-kubeconfig' } }, dependsOn: [{ name: 'platform' }] } },
    { name: 'storefront', kind: 'FleetSync', spec: storefront },
  ]);
}

async function main(): Promise<void> {
  let client: KubeClient | undefined;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  try {
    client = await startPlane();
    const { url } = await operatorWithUi(NS, 'bench-ui-screenshot-operator');
    await sample(client);
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 }, deviceScaleFactor: 1 });
    await page.goto(url);
    const stateOf = (name: string, kind = 'Sync') => page.locator(`#graph [data-key="${kind}/${NS}/${name}"]`).getAttribute('data-state').catch(() => null);
    const text = (selector: string) => page.locator(selector).textContent().catch(() => null);
    let seen = '';
    await until('the sample to settle', async () => {
      const states = await Promise.all([stateOf('platform'), stateOf('cache'), stateOf('web'), stateOf('billing'), stateOf('edge-eu', 'RemoteSync'), stateOf('reports')]);
      const fleet = await Promise.all([text('#fleets article p.fleet-summary'), text('#fleets tr[data-cluster="edge-eu-2"]'), text('#fleets tr[data-cluster="edge-eu-1"] .badge')]);
      seen = JSON.stringify({ states, fleet });
      return states.join() === 'ready,ready,waiting,failed,failed,suspended' && /^Halted/.test(fleet[0] ?? '') && /SubstitutionFailed/.test(fleet[1] ?? '') && fleet[2] === 'Ready';
    }, 120_000, 250).catch((err: unknown) => {
      throw new Error(`${String(err)}; the page showed ${seen}`);
    });
    const fleet = `FleetSync/${NS}/storefront`;
    await page.locator(`#graph [data-key="${fleet}"]`).click();
    await page.locator('#detail section.rollout').waitFor();
    await page.waitForFunction((key) => (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(a: string): string | null } | null } }).document.querySelector('#detail')?.getAttribute('data-key') === key, fleet);
    await page.screenshot({ path: OUT, fullPage: true });
    console.log(`wrote ${path.relative(ROOT, OUT)}`);
  } finally {
    await browser?.close();
    await stopOperators();
    await stopPlane(client);
  }
}

await main();
