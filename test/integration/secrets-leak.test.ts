// Secrets never leak (issue 15, item 6): one run that uses every kind of
// secret the operator handles, each carrying unique markers (random strings
// in Secret values and data keys, header names and values, tokens, PEM bodies
// of certificates and keys), with hostile and broken kubeconfigs and sources
// beside them. Everything the operators emitted is then collected: their
// logs at every level (trace included) and stderr, the Events of both
// clusters, the full objects of every sync (status included), /metrics, the
// web view's JSON and event stream, and /debug/cache; and searched for the
// markers, plain and base64-encoded. Zero hits is the assertion; each marker
// is also shown to have been used (the syncs that needed it went Ready, the
// header reached the server), so the test can fail.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parse } from 'yaml';
import type { KubeClient } from '../../src/kube/client.js';
import { clusterClient, closeClients, ensureClusters, kubeconfigPath, ROOT } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { releaseSyncFinalizers, useTestNamespace } from '../support/namespace.js';
import { OperatorProcess, trackOperator } from '../support/operator.js';
import { sampleValue } from '../support/prometheus.js';
import { applyProxySync, applyRemoteSync, kubeconfigOf, PROXYSYNCS, putKubeconfigSecret, REMOTESYNCS, serviceAccountKubeconfig } from '../support/remote.js';
import { applySync, find, syncPath, waitForReady } from '../support/syncs.js';
import { startTlsServer, type TlsServer } from '../support/tls-server.js';

const HOME = 'mgmt';
const EDGE = 'edge-1';
/**
 * Every level the operator logs at: the first run (trace) does the whole
 * scenario, the others restart over it. The last one serves the web view and
 * /debug/cache that are read at the end.
 */
const LEVELS = ['trace', 'error', 'warn', 'info', 'debug'] as const;
const ns = useTestNamespace(HOME, 'leak');
let mgmt: KubeClient;
let edge: KubeClient;
/** Every operator process of the run, hub (mgmt) and spoke (edge-1): all their output is searched. */
const operators: (OperatorProcess | QuietOperator)[] = [];
let hub: OperatorProcess | QuietOperator;
let spoke: OperatorProcess;

// ---- markers --------------------------------------------------------------

/** marker -> where it was put (for the report of a hit). */
const markers = new Map<string, string>();

/**
 * Markers in the key names of Secrets that the operator itself applies (owned
 * objects): /debug/cache shows them (as `kubectl describe secret` does), and
 * redacts their values; see the test.
 */
const keyNamesOfAppliedSecrets = new Set<string>();

function mark(where: string, keyOfApplied = false): string {
  const m = `mk${randomBytes(12).toString('hex')}`;
  markers.set(m, where);
  if (keyOfApplied) keyNamesOfAppliedSecrets.add(m);
  return m;
}

/** Marks pieces of a PEM body: 32 characters from inside several of its 64-character lines (a piece never spans a line break). */
function markPem(where: string, pem: string): void {
  const lines = pem.split('\n').filter((l) => l.length === 64 && !l.startsWith('-----'));
  // The first line starts with DER headers that every such PEM shares: skipped.
  for (const [i, line] of lines.entries()) if (i > 0 && i % 2 === 1) markers.set(line.slice(16, 48), `${where} (PEM body line ${i + 1})`);
}

/** A marker as it may appear: plain, and inside base64 at each of the three byte alignments. */
function forms(m: string): { form: string; text: string }[] {
  const out = [{ form: 'plain', text: m }];
  for (let k = 0; k < 3; k++) {
    const b64 = Buffer.from('x'.repeat(k) + m).toString('base64');
    // Characters that mix in the bytes before (k > 0) or after the marker are dropped.
    out.push({ form: `base64+${k}`, text: b64.slice(k === 0 ? 0 : k + 1, b64.length - 4) });
  }
  return out;
}

interface Hit {
  marker: string;
  where: string;
  form: string;
  in: string;
  context: string;
}

/** Every marker found in `text` (from `origin`), with some context. */
function hits(origin: string, text: string): Hit[] {
  const found: Hit[] = [];
  for (const [marker, where] of markers) {
    for (const { form, text: needle } of forms(marker)) {
      const at = text.indexOf(needle);
      if (at >= 0) found.push({ marker, where, form, in: origin, context: text.slice(Math.max(0, at - 120), at + needle.length + 40) });
    }
  }
  return found;
}

// ---- what the run uses ----------------------------------------------------

const seen = { authorization: [] as string[], custom: [] as string[] };
let tlsServer: TlsServer | undefined;
let tlsBase = '';
let caPem = '';
const values = {} as Record<string, string>;

async function startSourceServer(headerName: string): Promise<void> {
  const manifest = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: over-https\ndata:\n  from: https\n`;
  tlsServer = await startTlsServer((req, res) => {
    seen.authorization.push(String(req.headers.authorization ?? ''));
    seen.custom.push(String(req.headers[headerName.toLowerCase()] ?? ''));
    if (req.headers.authorization !== `Bearer ${values.bearer}`) return void res.writeHead(401).end('who are you?');
    res.end(manifest);
  });
  tlsBase = tlsServer.base;
  caPem = tlsServer.caPem;
  markPem('the CA of the http source (caSecretRef)', caPem);
}

async function createSecret(client: KubeClient, name: string, stringData: Record<string, string>): Promise<void> {
  await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/secrets`, body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData } });
}

type Kubeconfig = { users: { name: string; user: Record<string, unknown> }[]; clusters: { name: string; cluster: Record<string, unknown> }[] };

/** edge-1's kubeconfig changed by `change`, with a spare user (unused by any context, still checked) whose token is a marker. */
async function edgeKubeconfig(what: string, change: (kc: Kubeconfig) => void, base?: string): Promise<string> {
  const text = base ?? (await kubeconfigOf(EDGE));
  const kc = parse(text) as Kubeconfig;
  change(kc);
  kc.users.push({ name: 'spare', user: { token: mark(`${what}: the token of an unused user`) } });
  return JSON.stringify(kc);
}

const cm = (name: string, namespace = ns()): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\n`;
const hubArgs = (level: string): string[] => ['--namespace', ns(), '--log-level', level, '--ui-addr', '127.0.0.1:0', '--enable-debug-endpoints'];

async function startHub(level: string): Promise<OperatorProcess | QuietOperator> {
  const op = level === 'warn' || level === 'error' ? await QuietOperator.start(hubArgs(level)) : await OperatorProcess.start(HOME, hubArgs(level));
  operators.push(op);
  return op;
}

/**
 * The operator at warn or error: it does not log the `endpoints listening`
 * line (info) that OperatorProcess.start waits for, so it gets ports chosen
 * here and is ready once /healthz answers.
 */
class QuietOperator {
  readonly logs: unknown[] = [];
  readonly stderr: string[] = [];
  private readonly exited: Promise<unknown>;

  private constructor(
    readonly child: ChildProcess,
    readonly ports: { metrics: number; health: number; debug: number },
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => this.logs.push(line));
    createInterface({ input: child.stderr! }).on('line', (line) => this.stderr.push(line));
    this.exited = new Promise((resolve) => child.once('exit', resolve));
  }

  static async start(args: string[]): Promise<QuietOperator> {
    const [metrics, health, debug] = [await freePort(), await freePort(), await freePort()];
    const child = spawn(
      'node',
      [path.join(ROOT, 'dist', 'cli', 'main.js'), 'run', '--kubeconfig', kubeconfigPath(HOME), '--metrics-addr', `127.0.0.1:${metrics}`, '--health-addr', `127.0.0.1:${health}`, '--debug-addr', `127.0.0.1:${debug}`, ...args],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const op = new QuietOperator(child, { metrics, health, debug });
    // Stopped before the test namespace's cleanup releases the finalizers: one still running would put them back.
    trackOperator(op, child, HOME, args);
    await eventually(`/healthz of the operator at ${args.join(' ')} (stderr: ${op.stderr.join('\n')})`, async () => ((await fetch(`http://127.0.0.1:${health}/healthz`)).ok ? true : undefined));
    return op;
  }

  async metrics(): Promise<string> {
    return (await fetch(`http://127.0.0.1:${this.ports.metrics}/metrics`)).text();
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<unknown> {
    if (this.child.exitCode === null) this.child.kill(signal);
    return this.exited;
  }
}

function freePort(): Promise<number> {
  const server = net.createServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

// ---- the scenario -----------------------------------------------------------

/** The syncs of the scenario, by kind, and the Ready each must reach. */
const expected: { plural: string; name: string; status: 'True' | 'False'; reason?: string }[] = [];

async function createScenario(): Promise<void> {
  // A Sync whose source is a Secret: a manifest of a Secret, whose data key and value are markers.
  values.appliedKey = mark('a data key of a Secret applied from a Secret source', true);
  values.appliedValue = mark('a data value of a Secret applied from a Secret source');
  values.password = mark('a data value of a Secret applied from a Secret source, changed by hand (drift)');
  const appliedSecret =
    `apiVersion: v1\nkind: Secret\nmetadata:\n  name: applied\n  namespace: ${ns()}\n` +
    `stringData:\n  ${values.appliedKey}: ${values.appliedValue}\n` +
    // Both forms: stringData is applied as data (render), and the drift below edits this `data` value.
    `data:\n  password: ${Buffer.from(values.password).toString('base64')}\n`;
  const comment = `# ${mark('a comment in a Secret source')}\n`;
  await createSecret(mgmt, 'src', { 'app.yaml': `${comment}${appliedSecret}---\n${cm('from-secret')}` });
  await applySync(mgmt, ns(), 'from-secret', { source: { secret: { name: 'src' } } });
  expected.push({ plural: 'syncs', name: 'from-secret', status: 'True', reason: 'Succeeded' });

  // Secret sources that do not parse, with a marker on the line of the error (YAML and JSON).
  await createSecret(mgmt, 'broken-yaml', { 'a.yaml': `apiVersion: v1\nkind: Secret\nmetadata:\n  name: b\nstringData:\n  k: "${mark('the line of a YAML syntax error in a Secret source')}\n` });
  await createSecret(mgmt, 'broken-json', { 'a.json': `{"apiVersion": "v1", "kind": "Secret", "stringData": {"k": "${mark('the line of a JSON syntax error in a Secret source')}" oops}}` });
  await createSecret(mgmt, 'no-kind', { 'a.yaml': `apiVersion: v1\nmetadata:\n  name: nk\nstringData:\n  k: ${mark('a document without kind in a Secret source')}\n` });
  // Not manifests at all: a password, and a private key (PEM reads as one YAML string), each a whole key's value.
  await createSecret(mgmt, 'plain-value', { password: mark('a Secret key whose value is a plain string, not a manifest') });
  await createSecret(mgmt, 'pem-value', { 'tls.key': `-----BEGIN PRIVATE KEY-----\n${mark('a private key in a Secret source')}\n-----END PRIVATE KEY-----\n` });
  for (const name of ['broken-yaml', 'broken-json', 'no-kind', 'plain-value', 'pem-value']) {
    await applySync(mgmt, ns(), name, { source: { secret: { name } } });
    expected.push({ plural: 'syncs', name, status: 'False', reason: 'SourceError' });
  }

  // An https source: its headers (Authorization, and a header whose name is a marker too) and CA from Secrets.
  values.bearer = mark('the Authorization header of an http source (headersSecretRef)');
  values.header = `X-${mark('the name of a header of an http source (headersSecretRef)')}`;
  values.headerValue = mark('the value of a header of an http source (headersSecretRef)');
  await startSourceServer(values.header);
  await createSecret(mgmt, 'headers', { Authorization: `Bearer ${values.bearer}`, [values.header]: values.headerValue });
  await createSecret(mgmt, 'ca', { 'ca.crt': caPem, junk: `not a certificate ${mark('a caSecretRef key that is not PEM')}` });
  await applySync(mgmt, ns(), 'over-https', { defaultNamespace: ns(), source: { http: { url: `${tlsBase}/app.yaml`, headersSecretRef: { name: 'headers' }, caSecretRef: { name: 'ca' } } } });
  expected.push({ plural: 'syncs', name: 'over-https', status: 'True', reason: 'Succeeded' });
  await applySync(mgmt, ns(), 'bad-ca', { defaultNamespace: ns(), source: { http: { url: `${tlsBase}/app.yaml`, headersSecretRef: { name: 'headers' }, caSecretRef: { name: 'ca', key: 'junk' } } } });
  expected.push({ plural: 'syncs', name: 'bad-ca', status: 'False', reason: 'SourceError' });

  await createRemoteSyncs();
  await createProxySync();
}

async function createRemoteSyncs(): Promise<void> {
  const inline = (name: string) => ({ source: { inline: [parse(cm(name))] } });
  // A ServiceAccount token of edge-1: the token itself is the marker (random, and only here).
  const saKubeconfig = await serviceAccountKubeconfig(edge, EDGE, ns(), 'tenant', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }]);
  const token = (parse(saKubeconfig) as Kubeconfig).users[0]!.user.token as string;
  markers.set(token, 'the ServiceAccount token of a RemoteSync kubeconfig');
  markers.set(token.slice(token.lastIndexOf('.') + 1), 'the signature of the ServiceAccount token of a RemoteSync kubeconfig');
  const kubeconfigs: [string, string, 'True' | 'False', string?][] = [
    ['remote-token', await edgeKubeconfig('a kubeconfig with a token', () => {}, saKubeconfig), 'True', 'Succeeded'],
    ['remote-bad-token', await edgeKubeconfig('a kubeconfig with a bad token', (kc) => (kc.users[0]!.user = { token: mark('a token the API server refuses') })), 'False'],
    [
      'remote-exec',
      await edgeKubeconfig('an exec kubeconfig', (kc) => {
        kc.users[0]!.user = {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: 'sh',
            args: ['-c', `echo ${mark('an argument of an exec credential plugin')}`],
            env: [{ name: 'TOKEN', value: mark('an env value of an exec credential plugin') }],
          },
        };
      }),
      'False',
      'InvalidKubeconfig',
    ],
    [
      'remote-insecure',
      await edgeKubeconfig('an insecure kubeconfig', (kc) => {
        kc.clusters[0]!.cluster['insecure-skip-tls-verify'] = true;
        kc.users[0]!.user = { token: mark('the token of an insecure-skip-tls-verify kubeconfig') };
      }),
      'False',
      'InvalidKubeconfig',
    ],
    // Not YAML: the error is on the line of the token.
    ['remote-broken', `apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: "${mark('the token on the line of a YAML error in a kubeconfig')}\n`, 'False', 'InvalidKubeconfig'],
  ];
  for (const [name, kubeconfig, status, reason] of kubeconfigs) {
    await putKubeconfigSecret(mgmt, ns(), `${name}-kc`, kubeconfig);
    await applyRemoteSync(mgmt, ns(), name, { kubeConfig: { secretRef: { name: `${name}-kc` } }, ...inline(name) });
    expected.push({ plural: REMOTESYNCS, name, status, ...(reason ? { reason } : {}) });
  }
}

async function createProxySync(): Promise<void> {
  // The admin kubeconfig of edge-1: client certificate and key inline.
  const admin = await kubeconfigOf(EDGE);
  const user = (parse(admin) as Kubeconfig).users[0]!.user;
  for (const field of ['client-certificate-data', 'client-key-data']) {
    markPem(`the ${field} of a ProxySync kubeconfig`, Buffer.from(String(user[field]), 'base64').toString());
  }
  await putKubeconfigSecret(mgmt, ns(), 'proxied-kc', await edgeKubeconfig('a ProxySync kubeconfig', () => {}, admin));
  // Its template's source is a Secret, copied into edge-1 beside the remote Sync.
  // The copy in edge-1 is an object the operator applies too: what it holds counts as applied.
  values.proxiedKey = mark('a data key of a Secret applied from a ProxySync related Secret', true);
  values.proxiedValue = mark('a data value of a Secret applied from a ProxySync related Secret');
  await createSecret(mgmt, 'proxied-src', {
    'app.yaml': `apiVersion: v1\nkind: Secret\nmetadata:\n  name: proxied-applied\nstringData:\n  ${values.proxiedKey}: ${values.proxiedValue}\n`,
  });
  await applyProxySync(mgmt, ns(), 'proxied', { kubeConfig: { secretRef: { name: 'proxied-kc' } }, template: { spec: { defaultNamespace: ns(), source: { secret: { name: 'proxied-src' } } } } });
  expected.push({ plural: PROXYSYNCS, name: 'proxied', status: 'True', reason: 'Succeeded' });
}

// ---- collecting what the operators emitted ---------------------------------

const sse: string[] = [];
/** The /metrics page of each hub, read before it stopped. */
const metricsPages: string[] = [];
const sseAbort = new AbortController();

/** Reads the web view's event stream until the end of the run. */
async function followUi(op: OperatorProcess): Promise<void> {
  const res = await fetch(new URL('/api/stream', await uiUrlOf(op)), { signal: sseAbort.signal });
  void (async () => {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) sse.push(Buffer.from(chunk).toString());
  })().catch(() => undefined);
}

async function uiUrlOf(op: OperatorProcess): Promise<string> {
  const line = await op.waitForLog('the web view listening', (l) => l.msg === 'ui listening');
  return String(line.url);
}

async function getText(url: string | URL): Promise<string> {
  const res = await fetch(url);
  return `${res.status} ${await res.text()}`;
}

/** Everything emitted, by origin. */
async function collect(uiUrl: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [i, op] of operators.entries()) {
    out.set(`operator ${i} logs`, op.logs.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n'));
    out.set(`operator ${i} stderr`, op.stderr.join('\n'));
  }
  for (const [cluster, client] of [[HOME, mgmt], [EDGE, edge]] as const) {
    out.set(`${cluster} Events (all namespaces)`, JSON.stringify(await client.request({ path: '/api/v1/events' })));
    for (const plural of ['syncs', REMOTESYNCS, PROXYSYNCS]) {
      out.set(`${cluster} ${plural} (full objects)`, JSON.stringify(await client.request({ path: syncPath(ns(), '', plural) }).catch((e: unknown) => String(e))));
    }
  }
  for (const [i, page] of metricsPages.entries()) out.set(`/metrics of hub ${i}`, page);
  for (const op of [hub, spoke]) {
    out.set(`/metrics of pid ${op.child.pid}`, await op.metrics());
    out.set(`/debug/cache of pid ${op.child.pid}`, await getText(`http://127.0.0.1:${op.ports.debug}/debug/cache`));
  }
  out.set('web view /api/view', await getText(new URL('/api/view', uiUrl)));
  for (const { plural, name } of expected) {
    const kind = { syncs: 'Sync', [REMOTESYNCS]: 'RemoteSync', [PROXYSYNCS]: 'ProxySync' }[plural]!;
    out.set(`web view /api/sync ${kind}/${name}`, await getText(new URL(`/api/sync?kind=${kind}&namespace=${ns()}&name=${name}`, uiUrl)));
  }
  out.set('web view /api/stream', sse.join(''));
  return out;
}

// ---- the test ---------------------------------------------------------------

beforeAll(async () => {
  await ensureClusters([HOME, EDGE]);
  [mgmt, edge] = await Promise.all([clusterClient(HOME), clusterClient(EDGE)]);
  await Promise.all([installCrds(HOME), installCrds(EDGE)]);
  await edge.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns() } } });
  [hub, spoke] = await Promise.all([startHub(LEVELS[0]), OperatorProcess.start(EDGE, ['--namespace', ns(), '--log-level', 'trace', '--enable-debug-endpoints'])]);
  operators.push(spoke);
}, 120_000);

afterAll(async () => {
  sseAbort.abort();
  await Promise.all(operators.map((op) => op.stop('SIGTERM')));
  await tlsServer?.close();
  if (edge) {
    await edge.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}` }).catch(() => undefined);
    await releaseSyncFinalizers(edge, ns());
  }
  await closeClients();
});

async function waitForAll(): Promise<void> {
  for (const { plural, name, status, reason } of expected) await waitForReady(mgmt, ns(), name, status, reason, 60_000, plural);
}

describe('no secret reaches a log line, an Event, a status, a metric or the web view', () => {
  test('at every log level, over Secret sources, http headers and CA, kubeconfigs (good, bad and hostile) and a ProxySync', async () => {
    await followUi(hub as OperatorProcess);
    await createScenario();
    await waitForAll();

    // The markers were used: the applied objects carry them, and the header reached the server.
    const applied = await find<{ data: Record<string, string> }>(mgmt, `/api/v1/namespaces/${ns()}/secrets/applied`);
    expect(applied?.data[values.appliedKey!]).toBe(Buffer.from(values.appliedValue!).toString('base64'));
    expect(seen.authorization).toContain(`Bearer ${values.bearer}`);
    expect(seen.custom).toContain(values.headerValue);
    expect(await find(edge, `/api/v1/namespaces/${ns()}/configmaps/remote-token`)).toBeDefined();
    const proxied = await eventually('the ProxySync applied in edge-1', () =>
      find<{ data: Record<string, string> }>(edge, `/api/v1/namespaces/${ns()}/secrets/proxied-applied`),
    );
    expect(proxied.data[values.proxiedKey!]).toBe(Buffer.from(values.proxiedValue!).toString('base64'));
    // Drift of a secret value: corrected, and the Drifted Event and log line name the field, not the values.
    values.byHand = mark('a data value of an applied Secret written by hand (drift)');
    await mgmt.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${ns()}/secrets/applied`,
      query: { fieldManager: 'hand-edit' },
      contentType: 'application/merge-patch+json',
      body: { data: { password: Buffer.from(values.byHand).toString('base64') } },
    });
    const drifted = await eventually('a Drifted Event', async () => {
      const list = await mgmt.request<{ items: { reason: string; message: string }[] }>({ path: `/api/v1/namespaces/${ns()}/events` });
      return list.items.find((e) => e.reason === 'Drifted');
    });
    expect(drifted.message).toContain('.data.password');
    await eventually('the drift corrected', async () => {
      const s = await find<{ data: Record<string, string> }>(mgmt, `/api/v1/namespaces/${ns()}/secrets/applied`);
      return s?.data.password === Buffer.from(values.password!).toString('base64') ? true : undefined;
    });
    // The search finds markers where they belong (plain and base64), so its silence below means something.
    const control = hits('the applied Secret', JSON.stringify(applied)).map((h) => `${h.marker}:${h.form}`);
    expect(control).toEqual(expect.arrayContaining([`${values.appliedKey}:plain`, `${values.appliedValue}:base64+0`]));
    const sourceSecret = await find(mgmt, `/api/v1/namespaces/${ns()}/secrets/proxied-kc`);
    expect(hits('a kubeconfig Secret', JSON.stringify(sourceSecret)).length).toBeGreaterThan(0);

    // The same syncs through an operator at each other level, from a restart (every sync reconciled
    // again): the four at once, as replicas without leader election would (they agree on every write).
    metricsPages.push(await hub.metrics());
    await hub.stop('SIGTERM');
    const others = await Promise.all(LEVELS.slice(1).map((level) => startHub(level)));
    const plurals = { sync: 'syncs', remotesync: REMOTESYNCS, proxysync: PROXYSYNCS };
    for (const [i, op] of others.entries()) {
      await eventually(`every sync reconciled at level ${LEVELS[i + 1]}`, async () => {
        const text = await op.metrics();
        const counts = Object.entries(plurals).map(([controller, plural]) => [sampleValue(text, 'controller_runtime_reconcile_total', { controller }), expected.filter((e) => e.plural === plural).length]);
        return counts.every(([done, want]) => done! >= want!) || undefined;
      });
    }
    await waitForAll();
    for (const op of others.slice(0, -1)) metricsPages.push(await op.metrics());
    hub = others[others.length - 1]!;
    // The web view and /debug/cache of the last one; the stream was of the first.
    const last = hub as OperatorProcess;
    const emitted = await collect(await uiUrlOf(last));
    expect(emitted.get('operator 0 logs')).toContain('"level":"trace"');
    const debug = (origin: string): boolean => origin.startsWith('/debug/cache');
    const found = [...emitted].filter(([origin]) => !debug(origin)).flatMap(([origin, text]) => hits(origin, text));
    expect(found).toEqual([]);

    // /debug/cache (opt-in): the Secrets that sources, headers, CAs and kubeconfigs name are cached as
    // metadata only, so none of their content is there. Secrets the operator applies are cached in full
    // (owned objects, for the no-op decision): the dump shows their key names and redacts their values.
    const caches = [...emitted].filter(([origin]) => debug(origin));
    expect(caches.map(([, text]) => text.slice(0, 3))).toEqual(['200', '200']);
    const hubCache = caches[0]![1];
    expect(hubCache).toMatch(new RegExp(`"informer":"v1\\|Secret\\|[^"]*\\|metadata"`));
    expect(hubCache).toContain(`"name":"headers"`);
    expect(caches.flatMap(([origin, text]) => hits(origin, text)).filter((h) => !keyNamesOfAppliedSecrets.has(h.marker))).toEqual([]);
  });
});
