// syncprims' own KubeConfig (src/kube/kubeconfig.ts) against client-node's,
// whose behaviour it keeps: for each kind of kubeconfig, the same clusters,
// users and contexts, and the same TLS options and Authorization header on a
// request. And that loading it loads none of what client-node's config.js
// would (its generated API, node-fetch, the proxy agents, js-yaml, the auth
// provider plugins), which is why it exists.
import { afterEach, describe, expect, jest, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { KubeConfig as ClientNodeKubeConfig } from '@kubernetes/client-node/dist/config.js';
import { stringify } from 'yaml';
import { KubeConfig } from '../../src/kube/kubeconfig.js';
import { ROOT } from '../support/controlplane-cli.js';

const dir = mkdtempSync(path.join(tmpdir(), 'syncprims-kubeconfig-'));
const b64 = (text: string): string => Buffer.from(text).toString('base64');

/** Writes `text` to `name` under the test's directory (directories made), returns the path. */
function write(name: string, text: string): string {
  const file = path.join(dir, name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

/** A kubeconfig of one cluster, user and context (named `c`, `u`, `x`), as YAML. */
function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443', ...cluster } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: 'team' } }],
    'current-context': 'x',
    ...extra,
  });
}

type Loadable = Pick<KubeConfig, 'loadFromString' | 'loadFromFile' | 'loadFromOptions' | 'loadFromDefault' | 'loadFromCluster' | 'setCurrentContext'>;
type Applies = { applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> };

/** What a KubeConfig holds, as the code reads it. */
function entries(kc: KubeConfig | ClientNodeKubeConfig) {
  return {
    clusters: kc.clusters,
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.getCurrentContext(),
    cluster: kc.getCurrentCluster(),
    user: kc.getCurrentUser(),
    exported: JSON.parse(kc.exportConfig()) as unknown,
  };
}

/** What applyToHTTPSOptions sets that a request uses, or the error it throws. */
async function httpsOptions(kc: Applies) {
  const o: https.RequestOptions = {};
  try {
    await kc.applyToHTTPSOptions(o);
  } catch (err) {
    return { error: (err as Error).message };
  }
  const headers = (o.headers ?? {}) as Record<string, unknown>;
  return {
    ca: o.ca,
    cert: o.cert,
    key: o.key,
    rejectUnauthorized: o.rejectUnauthorized,
    servername: o.servername,
    // client-node sets `auth` for basic auth, which https.request sends as this header unless one is set.
    authorization: headers.Authorization ?? (o.auth ? `Basic ${Buffer.from(o.auth).toString('base64')}` : undefined),
    impersonate: headers['Impersonate-User'],
  };
}

/** Loads both the same way, expects the same; returns ours and what it applies. */
async function same(load: (kc: Loadable) => void) {
  const ours = new KubeConfig();
  const theirs = new ClientNodeKubeConfig();
  load(ours);
  load(theirs);
  expect(entries(ours)).toEqual(entries(theirs));
  const applied = await httpsOptions(ours);
  expect(applied).toEqual(await httpsOptions(theirs));
  if (!('error' in applied)) {
    // What each request gets: the same headers, and no TLS option read again.
    const perRequest: https.RequestOptions = {};
    await ours.applyHeaders(perRequest);
    const headers = (perRequest.headers ?? {}) as Record<string, unknown>;
    expect({ authorization: headers.Authorization, impersonate: headers['Impersonate-User'] }).toEqual({ authorization: applied.authorization, impersonate: applied.impersonate });
    // The cluster's CA is not read again (an exec plugin may still hand over a client certificate, as it does above).
    expect(perRequest.ca).toBeUndefined();
  }
  return { ours, applied };
}

const fromString = (text: string) => (kc: Loadable) => kc.loadFromString(text);

describe("syncprims' KubeConfig does what client-node's does", () => {
  const env = { ...process.env };
  afterEach(() => {
    for (const k of ['KUBECONFIG', 'HOME', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT']) {
      if (env[k] === undefined) delete process.env[k];
      else process.env[k] = env[k];
    }
  });

  test('a token, and a CA as data', async () => {
    const { applied } = await same(fromString(kubeconfig({ 'certificate-authority-data': b64('the ca') }, { token: 'tok' })));
    expect(applied).toMatchObject({ ca: Buffer.from('the ca'), authorization: 'Bearer tok' });
  });

  test('a client certificate and key as data, and tls-server-name', async () => {
    const text = kubeconfig({ 'tls-server-name': 'api.internal' }, { 'client-certificate-data': b64('cert'), 'client-key-data': b64('key') });
    const { applied } = await same(fromString(text));
    expect(applied).toMatchObject({ cert: Buffer.from('cert'), key: Buffer.from('key'), servername: 'api.internal', authorization: undefined });
  });

  test('certificate, key and CA files relative to the kubeconfig', async () => {
    write('files/pki/ca.crt', 'ca from file');
    write('files/pki/client.crt', 'cert from file');
    write('files/pki/client.key', 'key from file');
    const file = write(
      'files/config',
      kubeconfig({ 'certificate-authority': 'pki/ca.crt' }, { 'client-certificate': 'pki/client.crt', 'client-key': path.join(dir, 'files/pki/client.key') }),
    );
    const { ours, applied } = await same((kc) => kc.loadFromFile(file));
    expect(ours.getCurrentCluster()?.caFile).toBe(path.join(dir, 'files/pki/ca.crt'));
    expect(applied).toMatchObject({ ca: Buffer.from('ca from file'), cert: Buffer.from('cert from file'), key: Buffer.from('key from file') });
  });

  test('insecure-skip-tls-verify, over https and over http', async () => {
    const { applied } = await same(fromString(kubeconfig({ 'insecure-skip-tls-verify': true }, { token: 'tok' })));
    expect(applied).toMatchObject({ rejectUnauthorized: false, authorization: 'Bearer tok' });
    await same(fromString(kubeconfig({ server: 'http://127.0.0.1:8080', 'insecure-skip-tls-verify': true }, { token: 'tok' })));
  });

  test('an http server without insecure-skip-tls-verify is refused', async () => {
    const { applied } = await same(fromString(kubeconfig({ server: 'http://127.0.0.1:8080' }, { token: 'tok' })));
    expect(applied).toEqual({ error: 'HTTP protocol is not allowed when skipTLSVerify is not set or false' });
  });

  test('basic auth, which ours also puts in the header (our transports read headers only)', async () => {
    const { ours, applied } = await same(fromString(kubeconfig({}, { username: 'ann', password: 's3cret' })));
    expect(applied).toMatchObject({ authorization: `Basic ${b64('ann:s3cret')}` });
    const o: https.RequestOptions = {};
    await ours.applyToHTTPSOptions(o);
    expect(o).toMatchObject({ auth: 'ann:s3cret', headers: { Authorization: `Basic ${b64('ann:s3cret')}` } });
  });

  test('impersonation (as)', async () => {
    const { applied } = await same(fromString(kubeconfig({}, { token: 'tok', as: 'someone-else' })));
    expect(applied).toMatchObject({ impersonate: 'someone-else', authorization: 'Bearer tok' });
  });

  test("impersonation beyond as, which client-node drops: as-uid, as-groups and as-user-extra are sent as kubectl sends them, and exported", async () => {
    const user = { token: 'tok', as: 'ann', 'as-uid': 'u-1', 'as-groups': ['team-a', 'viewers'], 'as-user-extra': { 'acme.com/project': ['p1', 'p2'], scopes: ['openid'] } };
    const ours = new KubeConfig();
    ours.loadFromString(kubeconfig({}, user));
    const theirs = new ClientNodeKubeConfig();
    theirs.loadFromString(kubeconfig({}, user));
    const sent = async (kc: Applies): Promise<Record<string, unknown>> => {
      const o: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(o);
      return (o.headers ?? {}) as Record<string, unknown>;
    };
    // client-node would act as ann without her groups, uid and extras: as someone else than the kubeconfig says.
    expect(await sent(theirs)).toEqual({ Authorization: 'Bearer tok', 'Impersonate-User': 'ann' });
    expect(await sent(ours)).toEqual({
      Authorization: 'Bearer tok',
      'Impersonate-User': 'ann',
      'Impersonate-Uid': 'u-1',
      'Impersonate-Group': ['team-a', 'viewers'],
      // The key escaped as client-go's headerKeyEscape: '/' is not a header name's byte.
      'Impersonate-Extra-acme.com%2Fproject': ['p1', 'p2'],
      'Impersonate-Extra-scopes': ['openid'],
    });
    const perRequest: https.RequestOptions = {};
    await ours.applyHeaders(perRequest);
    expect(perRequest.headers).toEqual(await sent(ours));
    // Exported as kubectl names them (what `syncprims cluster add` stores), and read back the same.
    const exported = JSON.parse(ours.exportConfig()) as { users: { user: Record<string, unknown> }[] };
    expect(exported.users[0]!.user).toMatchObject(user);
    const again = new KubeConfig();
    again.loadFromString(ours.exportConfig());
    expect(await sent(again)).toEqual(await sent(ours));
  });

  test('impersonation fields of the wrong shape, or without as, are refused (never dropped)', () => {
    const load = (user: Record<string, unknown>) => () => new KubeConfig().loadFromString(kubeconfig({}, { token: 'tok', ...user }));
    expect(load({ 'as-groups': ['team-a'] })).toThrow('users[0].user sets as-groups without as (the user to impersonate)');
    expect(load({ as: 'ann', 'as-groups': 'team-a' })).toThrow('users[0].user.as-groups must be a list of strings');
    expect(load({ as: 'ann', 'as-user-extra': { k: 'v' } })).toThrow('users[0].user.as-user-extra must map keys to lists of strings');
    expect(load({ as: 'ann', 'as-groups': ['a\r\nX-Evil: 1'] })).toThrow('must be printable ASCII (each is sent as an HTTP header)');
  });

  test('an exec plugin printing an ExecCredential', async () => {
    const credential = { apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-exec', clientCertificateData: 'exec cert' } };
    const exec = { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: ['-e', `console.log(${JSON.stringify(JSON.stringify(credential))})`] };
    const { applied } = await same(fromString(kubeconfig({}, { exec })));
    expect(applied).toMatchObject({ authorization: 'Bearer from-exec', cert: 'exec cert' });
  });

  test('an exec plugin that hands over nothing: the request fails after the credentials deadline, not never', async () => {
    // The plugin prints nothing for 5 s (then exits); the deadline (30 s) is run on fake timers.
    const exec = { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: ['-e', 'setTimeout(() => {}, 5000)'] };
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig({}, { exec }));
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'Date'] });
    try {
      let settled = false;
      const pending = kc.applyHeaders({}).catch((e: unknown) => e).finally(() => (settled = true));
      // Until the deadline's timer is set (after the exec authenticator is loaded), or the plugin gave up by itself.
      const giveUp = Date.now() + 10_000;
      while (jest.getTimerCount() === 0 && !settled && Date.now() < giveUp) await new Promise((r) => setImmediate(r));
      jest.advanceTimersByTime(30_000);
      expect(((await pending) as Error).message).toBe('user "u": no credentials from its exec plugin within 30 s');
    } finally {
      jest.useRealTimers();
    }
  });

  test('a token file: an auth-provider tokenFile, and token-file', async () => {
    const tokenFile = write('token', 'tok-from-file');
    const { applied } = await same(fromString(kubeconfig({}, { 'auth-provider': { name: 'tokenFile', config: { tokenFile } } })));
    expect(applied).toMatchObject({ authorization: 'Bearer tok-from-file' });
    const { ours } = await same(fromString(kubeconfig({}, { 'token-file': tokenFile })));
    expect(ours.getCurrentUser()?.token).toBe('tok-from-file');
  });

  test('several contexts, and switching between them', async () => {
    const text = stringify({
      clusters: [
        { name: 'a', cluster: { server: 'https://a.example:6443/', 'certificate-authority-data': b64('ca a') } },
        { name: 'b', cluster: { server: 'https://b.example:6443', 'insecure-skip-tls-verify': true } },
      ],
      users: [
        { name: 'ua', user: { token: 'ta' } },
        { name: 'ub', user: { token: 'tb' } },
      ],
      contexts: [
        { name: 'ctx-a', context: { cluster: 'a', user: 'ua', namespace: 'ns-a' } },
        { name: 'ctx-b', context: { cluster: 'b', user: 'ub' } },
        { name: 'ctx-nouser', context: { cluster: 'a' } },
      ],
      'current-context': 'ctx-b',
    });
    const { ours, applied } = await same(fromString(text));
    expect(applied).toMatchObject({ rejectUnauthorized: false, authorization: 'Bearer tb' });
    expect(ours.getContexts().map((c) => c.name)).toEqual(['ctx-a', 'ctx-b', 'ctx-nouser']);
    expect(ours.getContextObject('ctx-a')).toMatchObject({ namespace: 'ns-a' });
    expect(ours.getContextObject('nope')).toBeNull();
    expect(ours.getCluster('a')?.server).toBe('https://a.example:6443');
    const switched = await same((kc) => {
      kc.loadFromString(text);
      kc.setCurrentContext('ctx-a');
    });
    expect(switched.applied).toMatchObject({ ca: Buffer.from('ca a'), authorization: 'Bearer ta' });
    // client-node applies nothing at all (not even the CA) for a context without a user.
    const noUser = await same((kc) => {
      kc.loadFromString(text);
      kc.setCurrentContext('ctx-nouser');
    });
    expect(noUser.applied).toMatchObject({ ca: undefined, authorization: undefined });
  });

  test('an invalid entry is refused with the same message', () => {
    const text = stringify({ clusters: [{ name: 'c', cluster: {} }] });
    expect(() => new KubeConfig().loadFromString(text)).toThrow('clusters[0].cluster.server is missing');
    expect(() => new ClientNodeKubeConfig().loadFromString(text)).toThrow('clusters[0].cluster.server is missing');
    expect(() => new KubeConfig().loadFromString('clusters: [unclosed')).toThrow();
    expect(() => new KubeConfig().loadFromString('')).toThrow('not a kubeconfig');
  });

  test('a boolean or a number where kubectl wants a string is refused, naming the field (as kubectl refuses it)', () => {
    const text = kubeconfig({}, { token: 'abc' }).replace('namespace: team', 'namespace: no');
    expect(() => new KubeConfig().loadFromString(text)).toThrow(
      'contexts[0].context.namespace is the boolean false, not a string (YAML reads an unquoted yes, no, on, off, y or n as a boolean; kubectl refuses it too): quote the value',
    );
    expect(() => new KubeConfig().loadFromString(kubeconfig({}, { token: 'abc' }).replace('namespace: team', 'namespace: "no"'))).not.toThrow();
    // A credential's value is not quoted.
    expect(() => new KubeConfig().loadFromString(kubeconfig({}, { token: 1234 }))).toThrow('users[0].user.token is a number, not a string');
    expect(() => new KubeConfig().loadFromString(kubeconfig({}, { token: 1234 }))).not.toThrow(/1234/);
    expect(() => new KubeConfig().loadFromString(kubeconfig({ 'tls-server-name': true }, {}))).toThrow('clusters[0].cluster.tls-server-name is the boolean true');
    expect(() => new KubeConfig().loadFromString(kubeconfig({}, {}, { 'current-context': 1 }))).toThrow('current-context is the number 1');
    // A boolean where kubectl wants one is fine.
    expect(() => new KubeConfig().loadFromString(kubeconfig({ 'insecure-skip-tls-verify': true }, {}))).not.toThrow();
  });

  test('loadFromOptions', async () => {
    const options = {
      clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    };
    const { applied } = await same((kc) => kc.loadFromOptions(structuredClone(options)));
    expect(applied).toMatchObject({ rejectUnauthorized: false, authorization: 'Bearer t' });
  });

  test('KUBECONFIG naming two files: merged, the later current-context wins', async () => {
    const a = write('merge/a', kubeconfig({ 'certificate-authority': 'ca-a.crt' }, { token: 'ta' }));
    write('merge/ca-a.crt', 'ca a');
    const b = write(
      'merge/b',
      stringify({
        clusters: [{ name: 'cb', cluster: { server: 'https://b.example:6443' } }],
        users: [{ name: 'ub', user: { token: 'tb' } }],
        contexts: [{ name: 'xb', context: { cluster: 'cb', user: 'ub' } }],
        'current-context': 'xb',
      }),
    );
    process.env.KUBECONFIG = [a, b].join(path.delimiter);
    const { ours, applied } = await same((kc) => kc.loadFromDefault());
    expect(ours.getContexts().map((c) => c.name)).toEqual(['x', 'xb']);
    expect(applied).toMatchObject({ authorization: 'Bearer tb' });
    const first = await same((kc) => kc.loadFromDefault(undefined, true));
    expect(first.applied).toMatchObject({ ca: Buffer.from('ca a'), authorization: 'Bearer ta' });
    process.env.KUBECONFIG = [a, a].join(path.delimiter);
    expect(() => new KubeConfig().loadFromDefault()).toThrow('Duplicate cluster: c');
    expect(() => new ClientNodeKubeConfig().loadFromDefault()).toThrow('Duplicate cluster: c');
  });

  test('~/.kube/config without KUBECONFIG, and the last resort with neither', async () => {
    delete process.env.KUBECONFIG;
    const home = mkdtempSync(path.join(dir, 'home-'));
    write(path.relative(dir, path.join(home, '.kube', 'config')), kubeconfig({}, { token: 'from-home' }));
    process.env.HOME = home;
    const { applied } = await same((kc) => kc.loadFromDefault());
    expect(applied).toMatchObject({ authorization: 'Bearer from-home' });
    process.env.HOME = mkdtempSync(path.join(dir, 'empty-home-'));
    const { ours } = await same((kc) => kc.loadFromDefault());
    // Unless this machine is a pod (then both load its service account).
    if (ours.getCurrentContext() === 'loaded-context') expect(ours.getCurrentCluster()?.server).toBe('http://localhost:8080');
  });

  test('in a cluster: service account token, CA and namespace, host and port from the environment', async () => {
    const prefix = path.join(dir, 'pod');
    const sa = path.join(prefix, 'var/run/secrets/kubernetes.io/serviceaccount');
    write(path.relative(dir, path.join(sa, 'token')), 'sa-token');
    write(path.relative(dir, path.join(sa, 'ca.crt')), 'sa ca');
    write(path.relative(dir, path.join(sa, 'namespace')), 'operators');
    process.env.KUBERNETES_SERVICE_HOST = '10.96.0.1';
    process.env.KUBERNETES_SERVICE_PORT = '443';
    const { ours, applied } = await same((kc) => kc.loadFromCluster(prefix));
    expect(ours.getCurrentCluster()?.server).toBe('https://10.96.0.1:443');
    expect(ours.getContextObject(ours.getCurrentContext())?.namespace).toBe('operators');
    expect(applied).toMatchObject({ ca: Buffer.from('sa ca'), authorization: 'Bearer sa-token' });
    process.env.KUBERNETES_SERVICE_HOST = 'fd00:10:96::1';
    const v6 = await same((kc) => kc.loadFromCluster(prefix));
    expect(v6.ours.getCurrentCluster()?.server).toBe('https://[fd00:10:96::1]:443');
    process.env.KUBERNETES_SERVICE_PORT = '8080';
    const http = await same((kc) => kc.loadFromCluster(prefix));
    expect(http.applied).toEqual({ error: 'HTTP protocol is not allowed when skipTLSVerify is not set or false' });
  });
});

describe("loading syncprims' KubeConfig", () => {
  const built = path.join(ROOT, 'dist', 'kube', 'kubeconfig.js');
  const heavy = ['/client-node/dist/gen/', '/client-node/dist/config.js', '/client-node/dist/index.js', 'node-fetch', 'socks-proxy-agent', 'hpagent', 'js-yaml', 'openid-client', 'jsonpath-plus', '_auth.js'];

  /** The modules a fresh Node process resolves while it runs `body` after importing dist/kube/kubeconfig.js. */
  async function resolvedBy(body: string): Promise<string[]> {
    for (const src of ['kubeconfig.ts', 'kubeconfig-credentials.ts']) {
      const stale = statSync(path.join(ROOT, 'src', 'kube', src)).mtimeMs > statSync(built.replace('kubeconfig.js', src.replace('.ts', '.js'))).mtimeMs;
      if (stale) throw new Error('dist/kube is older than src/kube: run `npx tsc -p tsconfig.build.json` (or `make build`) first');
    }
    // A module resolution hook (on Node's hooks thread) writes each resolved URL to stderr.
    const hook = `import { writeSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  writeSync(2, 'resolved ' + resolved.url + '\\n');
  return resolved;
}`;
    const script = `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
const { KubeConfig } = await import(${JSON.stringify(pathToFileURL(built).href)});
${body}`;
    const { NODE_OPTIONS: _, ...env } = process.env;
    const { stderr } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, env });
    return stderr
      .split('\n')
      .filter((l) => l.startsWith('resolved '))
      .map((l) => l.slice('resolved '.length));
  }

  test("loads none of what client-node's config.js loads, nor an authenticator its users do not need", async () => {
    const text = kubeconfig({ 'certificate-authority-data': b64('ca') }, { token: 'tok' });
    const urls = await resolvedBy(`const kc = new KubeConfig();
kc.loadFromString(${JSON.stringify(text)});
await kc.applyToHTTPSOptions({});`);
    expect(urls.some((u) => u.endsWith('/client-node/dist/config_types.js'))).toBe(true);
    expect(urls.filter((u) => heavy.some((h) => u.includes(h) && !u.endsWith('/file_auth.js')))).toEqual([]);
  });

  test('loads an authenticator when a user needs it', async () => {
    const exec = { command: process.execPath, args: ['-e', `console.log('{"status":{"token":"t"}}')`] };
    const urls = await resolvedBy(`const kc = new KubeConfig();
kc.loadFromString(${JSON.stringify(kubeconfig({}, { exec }))});
await kc.applyToHTTPSOptions({});`);
    expect(urls.filter((u) => u.includes('_auth.js')).map((u) => path.basename(u)).sort()).toEqual(['exec_auth.js', 'file_auth.js']);
  });
});
