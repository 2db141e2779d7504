// The web view (`syncprims run --ui-addr`, docs/ui.md) in a real browser:
// headless Chromium against an operator on the local control plane. A chain
// of Syncs, each waiting on a Deployment that the test makes available link
// by link (as the kubelet would), is seen turning Ready in the page without
// a reload; a cycle is shown as one; a remote cluster gone down (edge-2
// behind a proxy the test takes down: its port refuses connections, as a
// stopped API server's does) as unreachable; selecting a sync (by mouse or keyboard) shows its objects;
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
import { applyRemoteSync, putKubeconfigSecret, REMOTESYNCS, useClusterProxy } from '../support/remote.js';
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
    expect(serious(await axeViolations(page))).toEqual([]);
    const origin = new URL(base).origin;
    expect(requests.filter((u) => !u.startsWith(origin))).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
