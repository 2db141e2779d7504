// `make screenshot`: docs/ui.png, the web view of a sample namespace drawn
// by headless Chromium, so that the README's picture stays true. On the
// control plane of bench/ui-support.ts (its own etcd; stopped at the end).
// Not run by the tests: a test run changes no tracked file.
//
// The sample: a platform that is Ready; a database whose Deployment never
// becomes available here (the local control plane runs no pods: it stays
// progressing) with what depends on it waiting; a suspended Sync; a cycle;
// and a RemoteSync whose cluster does not answer. The Sync `platform` is
// selected, so the detail panel shows its conditions, objects and Events.
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

/** A kubeconfig of the plane's cluster, at a port where nothing listens. */
function deadKubeconfig(): string {
  const kc = parse(readFileSync(KUBECONFIG, 'utf8')) as { clusters: { cluster: { server: string } }[] };
  const server = new URL(kc.clusters[0]!.cluster.server);
  server.port = '1';
  kc.clusters[0]!.cluster.server = server.origin;
  return stringify(kc);
}

async function sample(client: KubeClient): Promise<void> {
  await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  await client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${NS}/secrets`,
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'edge-eu-kubeconfig' }, stringData: { value: deadKubeconfig() } },
  });
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
    await until('the sample to settle', async () => {
      const states = await Promise.all([stateOf('platform'), stateOf('cache'), stateOf('web'), stateOf('billing'), stateOf('edge-eu', 'RemoteSync'), stateOf('reports')]);
      return states.join() === 'ready,ready,waiting,failed,failed,suspended';
    }, 120_000, 250);
    await page.locator(`#graph [data-key="Sync/${NS}/platform"]`).click();
    await page.locator('#detail table').first().waitFor();
    await page.waitForFunction(() => (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(a: string): string | null } | null } }).document.querySelector('#detail')?.getAttribute('data-key') !== null);
    await page.screenshot({ path: OUT, fullPage: true });
    console.log(`wrote ${path.relative(ROOT, OUT)}`);
  } finally {
    await browser?.close();
    await stopOperators();
    await stopPlane(client);
  }
}

await main();
