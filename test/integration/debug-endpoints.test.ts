// `--enable-debug-endpoints` (issue 32, item 5): /debug/cache listens on a
// listener of its own, on loopback unless --debug-addr names another host
// (/healthz stays where a kubelet reaches it), and shows no Secret value:
// neither of a cached Secret nor of a Secret written inline in a Sync, a
// RemoteSync or a ProxySync's template, nor of the copy of a spec that
// `kubectl apply` keeps in an annotation. Searched plain and base64-encoded.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import { eventually } from '../support/eventually.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import type { OperatorProcess } from '../support/operator.js';
import { applyProxySync, applyRemoteSync } from '../support/remote.js';
import { applySync, waitForReady } from '../support/syncs.js';

const HOME = 'mgmt';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

let mgmt: KubeClient;
let op: OperatorProcess;
// `:0`: a port without a host, which must mean loopback.
const ns = useOperatedNamespace(HOME, 'debug', (o) => ({ client: mgmt, op } = o), ['--enable-debug-endpoints', '--debug-addr', ':0']);

/** Every value put in a Secret below: none may be in the dump, plain or in base64. */
const markers: string[] = [];
function marker(): string {
  const m = `mk${randomBytes(12).toString('hex')}`;
  markers.push(m);
  return m;
}

/** An inline Secret with one value in `data` (base64) and one in `stringData`. */
function secret(name: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ns() },
    data: { password: Buffer.from(marker()).toString('base64') },
    stringData: { token: marker() },
  };
}

const forms = (m: string): string[] => [m, Buffer.from(m).toString('base64')];

async function debugCache(port: number | undefined): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/debug/cache`);
  return { status: res.status, text: await res.text() };
}

beforeAll(async () => {
  const inline = secret('inline');
  const spec = { source: { inline: [inline] } };
  // As `kubectl apply` leaves it: a copy of the whole object in an annotation.
  const copy = JSON.stringify({ apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'with-secret', namespace: ns() }, spec: { source: { inline: [secret('copied')] } } });
  await applySync(mgmt, ns(), 'with-secret', spec, { annotations: { [LAST_APPLIED]: copy } });
  await applyRemoteSync(mgmt, ns(), 'remote-secret', { kubeConfig: { secretRef: { name: 'nowhere' } }, source: { inline: [secret('remote')] } });
  await applyProxySync(mgmt, ns(), 'proxy-secret', { kubeConfig: { secretRef: { name: 'nowhere' } }, template: { spec: { source: { inline: [secret('proxied')] } } } });
  // Applied: the Secret is then an owned object, cached in full.
  await waitForReady(mgmt, ns(), 'with-secret', 'True', 'Succeeded');
}, 120_000);

describe('/debug/cache', () => {
  test('listens on loopback when its address names no host, apart from /healthz', async () => {
    const line = await op.waitForLog('the endpoints', (l) => l.msg === 'endpoints listening');
    const addresses = line.addresses as Record<string, string>;
    expect(addresses.debug).toBe(`127.0.0.1:${op.ports.debug}`);
    expect(op.ports.debug).not.toBe(op.ports.health);
    // Not on the health listener any more.
    expect((await debugCache(op.ports.health)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${op.ports.health}/healthz`)).status).toBe(200);
  });

  test('shows no Secret value: cached Secrets, inline Secrets of a Sync, a RemoteSync and a ProxySync template, and their annotation copies', async () => {
    const dump = await eventually('the three syncs and the applied Secret in the dump', async () => {
      const { status, text } = await debugCache(op.ports.debug);
      const seen = ['"name":"with-secret"', '"name":"remote-secret"', '"name":"proxy-secret"', '"informer":"v1|Secret|'].every((s) => text.includes(s));
      return status === 200 && seen ? text : undefined;
    });
    // The dump holds the Secrets' keys and the redactions (so the search below means something).
    expect(dump).toContain('"password":"(redacted: ');
    expect(dump).toContain('"token":"(redacted: ');
    expect(dump).toContain(LAST_APPLIED);
    expect(markers).toHaveLength(8);
    const found = markers.flatMap(forms).filter((f) => dump.includes(f));
    expect(found).toEqual([]);
  });
});
