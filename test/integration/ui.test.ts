// The web view (`syncprims run --ui-addr`, docs/ui.md) in a real browser:
// headless Chromium against an operator on the local control plane. A chain
// of Syncs, each waiting on a Deployment that the test makes available link
// by link (as the kubelet would), is seen turning Ready in the page without
// a reload; a cycle is shown as one; a remote cluster gone down (edge-2
// behind a proxy the test takes down: its port refuses connections, as a
// stopped API server's does) as unreachable; selecting a sync (by mouse or keyboard) shows its objects;
// a FleetSync's panel shows each cluster's values and overrides and names a value missing;
// axe-core finds no serious violation, on a wide and a narrow window.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import type { KubeClient } from '../../src/kube/client.js';
import { axeViolations, launchChromium } from '../support/browser.js';
import { runCli } from '../support/cli.js';
import { clusterClient } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import type { OperatorProcess } from '../support/operator.js';
import { applyFleetSync, applyRemoteSync, putKubeconfigSecret, REMOTESYNCS, useClusterProxy, registerClusterWithValues } from '../support/remote.js';
import { applySync, find, syncPath, waitForReady } from '../support/syncs.js';
import { markDeploymentAvailable } from '../support/workloads.js';

const HOME = 'mgmt';
/** The cluster taken down (through its proxy) once a RemoteSync has applied to it. */
const DOWN = 'edge-2';
const LINKS = 3;

let mgmt: KubeClient;
let op: OperatorProcess;
let browser: Browser | undefined;
let page: Page;
let base = '';
/** Every request the page made, and what it logged as an error. */
const requests: string[] = [];
const consoleErrors: string[] = [];

const down = useClusterProxy(DOWN);
const ns = useOperatedNamespace(HOME, 'ui', (o) => ({ client: mgmt, op } = o), ['--ui-addr', '127.0.0.1:0', '--enable-debug-endpoints']);

/** The operator's informers (`apiVersion|kind|namespace|labels|fields|metadata|full`), from /debug/cache. */
async function informers(): Promise<string[]> {
  const res = await fetch(`http://127.0.0.1:${op.ports.debug}/debug/cache`);
  return ((await res.json()) as { informer: string }[]).map((i) => i.informer).sort();
}

const deployment = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: ns() },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
});
const node = (name: string, kind = 'Sync') => page.locator(`#graph button.node[data-key="${kind}/${ns()}/${name}"]`);
const stateOf = (name: string) => node(name).getAttribute('data-state');

/** A port nothing listens on (just closed). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The status of a GET with these headers (fetch() would not send another Host), and the start of its body;
 * an event stream is cut after its first bytes.
 */
async function statusOf(route: string, headers: Record<string, string>): Promise<{ status?: number; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(new URL(route, base), { headers }, (res) => {
      res.setEncoding('utf8');
      res.once('data', (chunk: string) => {
        resolve({ status: res.statusCode, body: chunk.slice(0, 200) });
        res.destroy();
      });
      res.once('end', () => resolve({ status: res.statusCode, body: '' }));
    }).on('error', reject);
  });
}

const registerWithValues = (cluster: string, edge: string, labels: Record<string, string>, values: Record<string, string>): Promise<void> =>
  registerClusterWithValues(mgmt, ns(), cluster, edge, labels, values);

async function pageState(name: string, want: string): Promise<void> {
  await eventually(`${name} shown as ${want}`, async () => ((await stateOf(name)) === want ? true : undefined), 60_000, 50);
}

beforeAll(async () => {
  await putKubeconfigSecret(mgmt, ns(), 'down-kubeconfig', await down.kubeconfig());
  for (let i = 1; i <= LINKS; i++) {
    await applySync(mgmt, ns(), `link-${i}`, { timeout: '10m', source: { inline: [deployment(`web-${i}`)] }, ...(i > 1 ? { dependsOn: [{ name: `link-${i - 1}` }] } : {}) });
  }
  await applySync(mgmt, ns(), 'cyc-a', { dependsOn: [{ name: 'cyc-b' }], source: { inline: [] } });
  await applySync(mgmt, ns(), 'cyc-b', { dependsOn: [{ name: 'cyc-a' }], source: { inline: [] } });
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${ns()}-far-cm`, namespace: 'default' }, data: { a: '1' } };
  await applyRemoteSync(mgmt, ns(), 'far', { kubeConfig: { secretRef: { name: 'down-kubeconfig' } }, source: { inline: [cm] } });
  await waitForReady(mgmt, ns(), 'far', 'True', 'Succeeded', undefined, REMOTESYNCS);
  await waitForReady(mgmt, ns(), 'link-2', 'False', 'DependencyNotReady');
  const line = await op.waitForLog('the web view listening', (l) => l.msg === 'ui listening');
  base = line.url as string;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  await page.goto(base);
  await page.evaluate(() => Object.assign(globalThis, { loadedOnce: true }));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  const edge2 = await clusterClient(DOWN);
  await edge2.request({ method: 'DELETE', path: `/api/v1/namespaces/default/configmaps/${ns()}-far-cm` }).catch(() => undefined);
});

describe('the web view', () => {
  test('listens on loopback only by default, and answers only to loopback names', async () => {
    expect(new URL(base).hostname).toBe('127.0.0.1');
    // (fetch() would not send another Host.)
    const status = await new Promise<number | undefined>((resolve, reject) => {
      http.get(new URL('/api/view', base), { headers: { host: 'evil.example' } }, (res) => resolve(res.resume().statusCode)).on('error', reject);
    });
    expect(status).toBe(421);
    const ok = await fetch(new URL('/api/view', base));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect((await fetch(new URL('/api/view', base), { method: 'POST' })).status).toBe(405);
  });

  test('answers no rebinding Host on any route, loopback names and literals with their port on all; its stream only its own origin', async () => {
    const port = new URL(base).port;
    const routes = ['/', '/app.css', '/client/app.js', '/api/view', '/api/stream', `/api/sync?kind=Sync&namespace=${ns()}&name=link-1`, '/nowhere'];
    for (const route of routes) {
      for (const host of [`127.evil.example:${port}`, `127.0.0.1.evil.example:${port}`, `localhost.evil.example:${port}`]) {
        expect({ route, host, ...(await statusOf(route, { host })) }).toEqual({ route, host, status: 421, body: expect.stringContaining('wrong host') });
      }
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
        expect({ route, host, status: (await statusOf(route, { host })).status }).toEqual({ route, host, status: route === '/nowhere' ? 404 : 200 });
      }
    }
    // The event stream: a page of another origin (or of this one through another name) is refused; its own is served.
    for (const origin of ['http://evil.example', `http://127.evil.example:${port}`, `http://localhost:${port}`, 'null']) {
      expect({ origin, ...(await statusOf('/api/stream', { host: `127.0.0.1:${port}`, origin })) }).toEqual({ origin, status: 403, body: expect.stringContaining('wrong origin') });
    }
    expect((await statusOf('/api/stream', { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    expect((await statusOf('/api/stream', { host: `localhost:${port}`, origin: `http://localhost:${port}` })).status).toBe(200);
    // Each refusal is logged with what was refused.
    expect(op.logs.some((l) => l.level === 'warn' && l.host === `127.evil.example:${port}` && l.path === '/api/view')).toBe(true);
  });

  test('`syncprims ui` prints the address where the view answers, and fails clearly where none does', async () => {
    const addr = `127.0.0.1:${new URL(base).port}`;
    const found = await runCli(['ui', '--addr', addr]);
    expect(found).toEqual({ code: 0, stdout: `http://${addr}/ (${LINKS + 3} syncs in 1 namespace)\n`, stderr: '' });
    const none = await runCli(['ui', '--addr', `127.0.0.1:${await freePort()}`]);
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/^syncprims: no syncprims web view answers at http:\/\/127\.0\.0\.1:\d+\/: start the operator with --ui-addr/);
  });

  test('the chain turns Ready link by link, pushed to the page without a reload', async () => {
    await pageState('link-1', 'progressing');
    for (let i = 2; i <= LINKS; i++) await pageState(`link-${i}`, 'waiting');
    for (let i = 1; i <= LINKS; i++) {
      await eventually(`Deployment web-${i}`, () => find(mgmt, `/apis/apps/v1/namespaces/${ns()}/deployments/web-${i}`));
      await markDeploymentAvailable(mgmt, ns(), `web-${i}`);
      await pageState(`link-${i}`, 'ready');
      // The next link is released only by its own Deployment: seen not Ready at this moment.
      if (i < LINKS) expect(await stateOf(`link-${i + 1}`)).not.toBe('ready');
    }
    await waitForReady(mgmt, ns(), `link-${LINKS}`, 'True', 'Succeeded');
    // The same page all along (no reload), fed by one event stream (no polling).
    expect(await page.evaluate(() => (globalThis as unknown as { loadedOnce?: boolean }).loadedOnce)).toBe(true);
    expect(requests.filter((u) => u.endsWith('/api/stream'))).toHaveLength(1);
    expect(requests.filter((u) => u.includes('/api/view'))).toHaveLength(0);
    // Dependencies on the left: each link one column right of the one it depends on.
    const xs = await Promise.all([1, 2, 3].map(async (i) => (await node(`link-${i}`).boundingBox())!.x));
    expect(xs[0]!).toBeLessThan(xs[1]!);
    expect(xs[1]!).toBeLessThan(xs[2]!);
  });

  test('a cycle is shown as one', async () => {
    await pageState('cyc-a', 'failed');
    await expect(page.locator('#cycles').textContent()).resolves.toBe('Cycle: Sync/cyc-a → Sync/cyc-b → Sync/cyc-a');
    await expect(node('cyc-a').getAttribute('class')).resolves.toContain('on-cycle');
    await expect(page.locator('#graph path.edge.cycle').count()).resolves.toBe(2);
    await expect(page.locator(`#notready [data-pick="Sync/${ns()}/cyc-b"]`).count()).resolves.toBe(1);
  });

  test('a stopped remote cluster shows as unreachable', async () => {
    const cluster = page.locator(`#clusters [data-cluster="${ns()}/down-kubeconfig"]`);
    await eventually('the cluster shown reachable', async () => ((await cluster.getAttribute('data-reachable')) === 'true' ? true : undefined));
    expect(await op.metric('syncprims_cluster_reachable')).toBe(1);
    await down.proxy().down();
    // The operator notices (its watches there fail): the page says so from the registry's live
    // reachability, and the RemoteSync, woken by the outage (no reconcile is requested), says so too.
    await eventually('the cluster shown unreachable', async () => ((await cluster.getAttribute('data-reachable')) === 'false' ? true : undefined), 90_000);
    expect(await op.metric('syncprims_cluster_reachable')).toBe(0);
    await expect(cluster.textContent()).resolves.toMatch(/Unreachable.*last reached/);
    await waitForReady(mgmt, ns(), 'far', 'False', 'ClusterUnreachable', 90_000, REMOTESYNCS);
    await eventually('the sync shown failed', async () => ((await cluster.locator('.badge').textContent()) === 'Failed' ? true : undefined));
  });

  test('selecting a sync shows its conditions, objects with their kstatus, and Events; by mouse and by keyboard; no watch is added', async () => {
    const before = await informers();
    await node('link-1').click();
    const detail = page.locator('#detail');
    await eventually('link-1 detail', async () => ((await detail.getAttribute('data-key')) === `Sync/${ns()}/link-1` ? true : undefined));
    await expect(detail.textContent()).resolves.toContain(`Deployment ${ns()}/web-1`);
    expect(await detail.locator('table').nth(1).textContent()).toContain('Current');
    await expect(detail.textContent()).resolves.toContain('Succeeded');
    // Its Events, read when it was selected.
    expect(await detail.locator('table').last().textContent()).toContain('Applied');
    await expect(node('link-1').getAttribute('aria-pressed')).resolves.toBe('true');
    // Keyboard only: Tab to the next node, Enter.
    await node('link-1').focus();
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string } } }).document.activeElement.getAttribute('data-key'));
    expect(focused).toMatch(new RegExp(`^Sync/${ns()}/`));
    await page.keyboard.press('Enter');
    await eventually('keyboard selection', async () => ((await detail.getAttribute('data-key')) === focused ? true : undefined));
    // A RemoteSync: its objects live in its cluster; the page says so.
    await page.locator(`#clusters [data-pick="RemoteSync/${ns()}/far"]`).click();
    await eventually('far detail', async () => ((await detail.getAttribute('data-key')) === `RemoteSync/${ns()}/far` ? true : undefined));
    await expect(detail.textContent()).resolves.toContain('these objects live in the remote cluster');
    // Read from the operator's informers, and Events read once per selection: no informer was started for the page.
    expect(await informers()).toEqual(before);
    expect(before.filter((id) => id.includes('|Event|'))).toEqual([]);
    expect(before).toContain('apps/v1|Deployment|*|syncprims.dev/owner-kind||full');
  });

  test("a FleetSync's panel shows each cluster's values (as text) and the overrides selecting it, names a value missing, and follows a value's change", async () => {
    const markup = '<img src=x onerror="globalThis.injected=1">';
    await registerWithValues('vals-east', 'edge-1', { tier: 'canary' }, { region: 'eu-west-1', note: markup });
    await registerWithValues('vals-west', 'edge-2', {}, { zone: 'b' });
    const spec = {
      clusters: { names: ['vals-east', 'vals-west'] },
      kind: 'RemoteSync',
      substitute: {},
      template: { metadata: { labels: { region: '${region}' } }, spec: { source: { inline: [] } } },
      overrides: [{ clusters: { selector: { matchLabels: { tier: 'canary' } } }, patches: [{ op: 'add', path: '/metadata/labels/canary', value: 'yes' }, { op: 'add', path: '/metadata/labels/wave', value: 'first' }] }],
    };
    await applyFleetSync(mgmt, ns(), 'vals', spec);
    const fleet = page.locator(`#fleets [data-fleet="FleetSync/${ns()}/vals"]`);
    const row = (cluster: string) => fleet.locator(`tr[data-cluster="${cluster}"]`);
    const cells = async (cluster: string) => (await row(cluster).locator('td').allTextContents()).map((t) => t.trim());
    // vals-east: its child Ready, its values (cluster_name aside: its row's name), the canary override (index and first patch, one more).
    await eventually('vals-east shown with its child Ready', async () => ((await cells('vals-east'))[2] === 'Ready' ? true : undefined), 60_000);
    expect(await cells('vals-east')).toEqual(['vals-east', '-', 'Ready', `note=${markup}region=eu-west-1`, '#0 add /metadata/labels/canary (+1)', '-']);
    await expect(row('vals-east').locator('button').getAttribute('data-pick')).resolves.toBe(`RemoteSync/${ns()}/vals-vals-east`);
    // vals-west has no region: no child, and the panel names the value missing.
    await eventually('vals-west shown failing', async () => ((await cells('vals-west'))[5]?.startsWith('SubstitutionFailed') ? true : undefined));
    const west = await cells('vals-west');
    expect(west.slice(0, 5)).toEqual(['vals-west', '-', 'no child', 'zone=b', '-']);
    expect(west[5]).toMatch(/^SubstitutionFailed no value for region \(at metadata\.labels\.region\) and no default/);
    // A value is text: no element was made of it, nothing of it ran.
    expect(await page.locator('#fleets img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { injected?: number }).injected)).toBeUndefined();
    // A value changed on the cluster's Secret is on the page without a reload: one the template does not use, so that
    // no child changes with it (the inventory's own change is pushed on the one stream).
    await registerWithValues('vals-east', 'edge-1', { tier: 'canary' }, { region: 'eu-west-1', note: 'plain' });
    await eventually('the new value shown', async () => ((await cells('vals-east'))[3] === 'note=plainregion=eu-west-1' ? true : undefined));
    expect(requests.filter((u) => u.endsWith('/api/stream'))).toHaveLength(1);
  });

  // Selected last, so that axe-core looks at the page with the rollout panel shown.
  test('a FleetSync rolling out in waves, selected, shows its rollout panel: phase, progress, revisions, a row per wave', async () => {
    const spec = { clusters: { names: ['nowhere'] }, kind: 'ProxySync', template: { spec: { source: { inline: [] } } }, rollout: { waves: [{ name: 'canary' }, { name: 'rest', approval: true }] } };
    await mgmt.request({ method: 'POST', path: syncPath(ns(), '', 'fleetsyncs'), body: { apiVersion: 'syncprims.dev/v1alpha1', kind: 'FleetSync', metadata: { name: 'roll', namespace: ns() }, spec } });
    const key = `FleetSync/${ns()}/roll`;
    // No cluster is selected: the operator writes both waves empty, the rollout Complete.
    const pick = page.locator(`#fleets [data-pick="${key}"]`);
    await eventually('the FleetSync listed, its rollout complete', async () => ((await page.locator(`#fleets [data-fleet="${key}"]`).textContent())?.includes('2/2 waves, 0/0') ? true : undefined));
    await pick.click();
    const detail = page.locator('#detail');
    await eventually('its rollout panel', async () => ((await detail.getAttribute('data-key')) === key && (await detail.locator('section.rollout').count()) === 1 ? true : undefined));
    const panel = detail.locator('section.rollout');
    await expect(panel.getAttribute('data-phase')).resolves.toBe('Complete');
    await expect(panel.textContent()).resolves.toMatch(/Progress2\/2 waves, 0\/0.*Update revision[0-9a-f]{16}/);
    expect(await panel.locator('tbody tr').evaluateAll((rows) => rows.map((r) => (r as unknown as { getAttribute(n: string): string }).getAttribute('data-wave')))).toEqual(['canary', 'rest']);
    await expect(panel.locator('tbody tr[data-wave="rest"]').textContent()).resolves.toBe('rest00/00/000-Required');
  });

  test('axe-core finds no serious violation, wide and narrow; nothing is fetched from another host', async () => {
    const serious = (v: { impact?: string | null }[]) => v.filter((x) => x.impact === 'serious' || x.impact === 'critical');
    expect(serious(await axeViolations(page))).toEqual([]);
    await page.setViewportSize({ width: 360, height: 740 });
    // The page fits the narrow window; the graph scrolls inside its own box.
    const overflow = await page.evaluate(() => {
      const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document;
      return d.documentElement.scrollWidth - d.documentElement.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
    // A name in the Not ready list breaks only after a `/`: no part of it takes two lines, even this narrow.
    const wrapped = await page.locator('#notready .part').evaluateAll((parts) =>
      parts
        .map((p) => p as unknown as { textContent: string; getBoundingClientRect(): { height: number } })
        .filter((p) => p.getBoundingClientRect().height > 2 * 13.6)
        .map((p) => p.textContent),
    );
    expect(wrapped).toEqual([]);
    expect(await page.locator('#notready .part').count()).toBeGreaterThan(3);
    expect(serious(await axeViolations(page))).toEqual([]);
    const origin = new URL(base).origin;
    expect(requests.filter((u) => !u.startsWith(origin))).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
