// Fetching sources for real: ConfigMaps, Secrets and a Flux GitRepository on the
// mgmt cluster; files and archives from HTTP(S) servers started here.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { SyncSource } from '../../src/api/source.js';
import type { KubeClient } from '../../src/kube/client.js';
import { fetchSource, SourceError, referencedObjectsOf, type FetchSourceOptions } from '../../src/source/index.js';
import { closeClients, clusterClient } from '../support/controlplane.js';
import { createGitRepository, FLUX_SOURCE_API_VERSION, installGitRepositoryCrd, setArtifact } from '../support/flux.js';
import { useTestNamespace } from '../support/namespace.js';
import { tarGz } from '../support/tarball.js';
import { startTlsServer, type TlsServer } from '../support/tls-server.js';

const namespace = useTestNamespace('mgmt', 'source');
let client: KubeClient;

function cm(name: string, extra = ''): string {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}`;
}

function sha256(data: Buffer | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

function fetch(source: SyncSource, extra: Partial<FetchSourceOptions> = {}): ReturnType<typeof fetchSource> {
  return fetchSource({ client, namespace: namespace(), source, ...extra });
}

async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SourceError);
  return (err as SourceError).message;
}

async function create(kind: 'configmaps' | 'secrets', body: Record<string, unknown>): Promise<void> {
  await client.request({ method: 'POST', path: `/api/v1/namespaces/${namespace()}/${kind}`, body });
}

// ---- a local HTTP server ----

const APP_YAML = `${cm('web', 'data:\n  mode: 0644\n')}---\n${cm('web-2')}`;
let bundle: Buffer;
/** Bytes the endless route managed to send before the client went away. */
let endlessSent = 0;
let endlessClosed: Promise<void> = Promise.resolve();
const seenHeaders: http.IncomingHttpHeaders[] = [];
/** Requests received and answers ended or dropped (the connection closed), by path. */
const received = new Map<string, number>();
const closed = new Map<string, Promise<void>>();

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  received.set(url.pathname, (received.get(url.pathname) ?? 0) + 1);
  closed.set(url.pathname, new Promise((resolve) => res.on('close', resolve)));
  switch (url.pathname) {
    case '/app.yaml':
      res.end(APP_YAML);
      return;
    case '/bundle.tgz':
    case '/download': // no suffix: told by gzip's magic bytes
      res.end(bundle);
      return;
    case '/moved.yaml':
      res.writeHead(302, { location: '/app.yaml' }).end();
      return;
    case '/private/app.yaml':
      seenHeaders.push(req.headers);
      if (req.headers.authorization !== 'Bearer s3cret' || req.headers['x-team'] !== 'platform') {
        res.writeHead(401).end('who are you?');
        return;
      }
      res.end(cm('private'));
      return;
    default:
      slowRoutes(url.pathname, res);
  }
}

function slowRoutes(pathname: string, res: http.ServerResponse): void {
  switch (pathname) {
    case '/stalls.yaml': // headers and a little, then nothing
      res.writeHead(200, { 'content-type': 'application/yaml' });
      res.write('apiVersion: v1\n');
      return;
    case '/silent.yaml': // not even headers
      return;
    case '/trickle.yaml': { // a byte every 50 ms, for ever: never idle, never complete
      res.writeHead(200, { 'content-type': 'application/yaml' });
      const timer = setInterval(() => res.write('#'), 50);
      res.on('close', () => clearInterval(timer));
      return;
    }
    case '/huge.yaml': // announces too much
      res.writeHead(200, { 'content-length': String(1024 * 1024 * 1024) });
      res.write('kind: x\n');
      return;
    case '/endless.yaml':
      endlessSent = 0;
      endlessClosed = new Promise((resolve) => res.on('close', resolve));
      pump(res);
      return;
    default:
      res.writeHead(404).end(`no ${pathname} here`);
  }
}

/** Writes `# ...` lines as fast as the client reads, until it goes away. */
function pump(res: http.ServerResponse): void {
  const chunk = Buffer.from(`# ${'x'.repeat(8190)}\n`);
  const write = (): void => {
    while (!res.destroyed) {
      endlessSent += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', write);
        return;
      }
    }
  };
  write();
}

/** Waits for `done`; a minute without it is a hang (generous: it only catches one), failing with `what`. */
async function hangGuard(done: Promise<void>, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(what)), 60_000)));
  try {
    await Promise.race([done, hang]);
  } finally {
    clearTimeout(timer);
  }
}

let server: http.Server;
let base = '';

async function listen(s: http.Server | https.Server): Promise<string> {
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return `${s instanceof https.Server ? 'https' : 'http'}://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  client = await clusterClient('mgmt');
  bundle = await tarGz([
    { name: 'apps/', type: 'directory' },
    { name: 'apps/web/web.yaml', data: cm('web') },
    { name: 'apps/web/README.md', data: 'not a manifest' },
    { name: 'apps/db/db.json', data: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'db' } }) },
    { name: 'base/ns.yml', data: 'apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n' },
  ]);
  server = http.createServer(route);
  base = await listen(server);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await closeClients();
});

const names = (objs: { kind: string; metadata: { name?: string } }[]): string[] => objs.map((o) => `${o.kind}/${o.metadata.name}`);

describe('inline', () => {
  test('objects checked and returned; no revision, nothing to watch', async () => {
    const got = await fetch({ inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }] });
    expect(got).toEqual({ objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }], readFrom: 'inline' });
  });

  test('exactly one form', async () => {
    expect(await refusal(fetch({}))).toBe('spec.source must set exactly one of inline, configMap, secret, http, artifact, helmRepository, git, oci (found none)');
    expect(await refusal(fetch({ inline: [], configMap: { name: 'x' } }))).toContain('(found inline, configMap)');
  });

  test('a Helm repository is a chart: read as manifests it is refused, saying to set spec.helm', async () => {
    expect(await refusal(fetch({ helmRepository: { url: 'http://127.0.0.1:1', chart: 'web' } }))).toBe(
      'spec.source.helmRepository is a Helm chart: it is rendered only with spec.helm (set spec.helm: {} to render it as helm template does)',
    );
  });

  test('spec.paths makes no sense there', async () => {
    expect(await refusal(fetch({ inline: [] }, { paths: ['apps'] }))).toContain('remove spec.paths');
  });
});

describe('ConfigMap and Secret sources', () => {
  beforeAll(async () => {
    await create('configmaps', {
      metadata: { name: 'manifests' },
      data: {
        'b.yaml': `${cm('from-b-1')}---\n${cm('from-b-2')}`,
        'a.json': JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-a' } }),
      },
      binaryData: { 'c.yaml': Buffer.from(cm('from-c')).toString('base64') },
    });
    await create('configmaps', { metadata: { name: 'broken' }, data: { 'x.yaml': `${cm('ok')}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n` } });
    await create('secrets', {
      metadata: { name: 'manifests' },
      stringData: { 'app.yaml': `${cm('secret-1', 'data:\n  mode: 0644\n')}---\n---\n${cm('secret-2')}` },
    });
  });

  test('every key, in key order; data and binaryData; the ConfigMap is what is watched', async () => {
    const got = await fetch({ configMap: { name: 'manifests' } });
    expect(names(got.objects)).toEqual(['ConfigMap/from-a', 'ConfigMap/from-b-1', 'ConfigMap/from-b-2', 'ConfigMap/from-c']);
    expect(got.revision).toBeUndefined();
    expect(got.readFrom).toBe(`ConfigMap ${namespace()}/manifests`);
    expect(referencedObjectsOf({ configMap: { name: 'manifests' } }, namespace())).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', name: 'manifests', namespace: namespace() }]);
  });

  test('one key', async () => {
    const got = await fetch({ configMap: { name: 'manifests', key: 'b.yaml' } });
    expect(names(got.objects)).toEqual(['ConfigMap/from-b-1', 'ConfigMap/from-b-2']);
  });

  test('a Secret: base64-decoded, YAML 1.1', async () => {
    const got = await fetch({ secret: { name: 'manifests' } });
    expect(names(got.objects)).toEqual(['ConfigMap/secret-1', 'ConfigMap/secret-2']);
    expect(got.objects[0]?.data).toEqual({ mode: 420 });
    expect(referencedObjectsOf({ secret: { name: 'manifests' } }, namespace())).toEqual([{ apiVersion: 'v1', kind: 'Secret', name: 'manifests', namespace: namespace() }]);
  });

  test('errors say which object, key, document and line', async () => {
    const ns = namespace();
    expect(await refusal(fetch({ configMap: { name: 'nope' } }))).toBe(
      `ConfigMap ${ns}/nope not found: create it, or fix spec.source.configMap.name`,
    );
    expect(await refusal(fetch({ secret: { name: 'manifests', key: 'other.yaml' } }))).toBe(
      `Secret ${ns}/manifests has no key "other.yaml" (keys: app.yaml): fix spec.source.secret.key`,
    );
    expect(await refusal(fetch({ configMap: { name: 'broken' } }))).toMatch(
      new RegExp(`^ConfigMap ${ns}/broken key x\\.yaml: document 2 \\(line 6\\): ConfigMap has no metadata\\.name`),
    );
  });

  test('maxObjects counts across keys', async () => {
    expect(await refusal(fetch({ configMap: { name: 'manifests' } }, { limits: { maxObjects: 3 } }))).toContain('more than');
    await expect(fetch({ configMap: { name: 'manifests' } }, { limits: { maxObjects: 4 } })).resolves.toBeDefined();
  });
});

describe('http', () => {
  test('a YAML file: revision is the sha256 of the bytes, origin the URL', async () => {
    const got = await fetch({ http: { url: `${base}/app.yaml` } });
    expect(names(got.objects)).toEqual(['ConfigMap/web', 'ConfigMap/web-2']);
    expect(got.objects[0]?.data).toEqual({ mode: 420 });
    expect(got.revision).toBe(sha256(APP_YAML));
    expect(got.readFrom).toBe(`${base}/app.yaml`);
    expect(referencedObjectsOf({ http: { url: `${base}/app.yaml` } }, namespace())).toEqual([]);
  });

  test('an archive, whole or by paths; told by suffix or by gzip magic', async () => {
    const whole = await fetch({ http: { url: `${base}/bundle.tgz` } });
    expect(names(whole.objects)).toEqual(['ConfigMap/db', 'ConfigMap/web', 'Namespace/team-a']);
    expect(whole.revision).toBe(sha256(bundle));
    const some = await fetch({ http: { url: `${base}/download` } }, { paths: ['base', 'apps/web/web.yaml'] });
    expect(names(some.objects)).toEqual(['ConfigMap/web', 'Namespace/team-a']);
    expect(await refusal(fetch({ http: { url: `${base}/bundle.tgz` } }, { paths: ['apps/cache'] }))).toContain(
      `${base}/bundle.tgz: paths[0] "apps/cache" matches no .yaml, .yml or .json file in the archive`,
    );
  });

  test('a parse error inside an archive names the URL and the file', async () => {
    bundle = await tarGz([{ name: 'x/bad.yaml', data: 'apiVersion: v1\nkind: [\n' }]);
    try {
      expect(await refusal(fetch({ http: { url: `${base}/bundle.tgz` } }))).toMatch(
        new RegExp(`^${base.replace(/[.]/g, '\\.')}/bundle\\.tgz: x/bad\\.yaml: document 1 \\(line \\d+:\\d+\\): YAML syntax error`),
      );
    } finally {
      bundle = await tarGz([{ name: 'apps/web/web.yaml', data: cm('web') }]);
    }
  });

  test('digest: verified, and a mismatch names both', async () => {
    const good = sha256(APP_YAML);
    await expect(fetch({ http: { url: `${base}/app.yaml`, digest: good } })).resolves.toMatchObject({ revision: good });
    const wrong = `sha256:${'0'.repeat(64)}`;
    expect(await refusal(fetch({ http: { url: `${base}/app.yaml`, digest: wrong } }))).toBe(
      `${base}/app.yaml: digest mismatch: expected ${wrong}, got ${good} (the content changed, or the digest is wrong)`,
    );
  });

  test('headers from a Secret, every key; refused without them', async () => {
    await create('secrets', { metadata: { name: 'http-headers' }, stringData: { Authorization: 'Bearer s3cret\n', 'X-Team': 'platform' } });
    const url = `${base}/private/app.yaml`;
    const denied = await refusal(fetch({ http: { url } }));
    expect(denied).toBe(`GET ${url}: HTTP 401 Unauthorized (check headersSecretRef): who are you?`);
    const got = await fetch({ http: { url, headersSecretRef: { name: 'http-headers' } } });
    expect(names(got.objects)).toEqual(['ConfigMap/private']);
    expect(seenHeaders.at(-1)).toMatchObject({ authorization: 'Bearer s3cret', 'x-team': 'platform' });
  });

  test('a redirect to another origin does not carry the Secret headers along', async () => {
    const other = http.createServer((_req, res) => {
      res.writeHead(302, { location: `${base}/private/app.yaml` }).end();
    });
    const otherBase = await listen(other);
    try {
      const msg = await refusal(fetch({ http: { url: `${otherBase}/x.yaml`, headersSecretRef: { name: 'http-headers' } } }));
      expect(msg).toBe(`GET ${base}/private/app.yaml: HTTP 401 Unauthorized (check headersSecretRef): who are you?`);
      expect(seenHeaders.at(-1)?.authorization).toBeUndefined();
    } finally {
      other.closeAllConnections();
      await new Promise((r) => other.close(r));
    }
  });

  test('a header that cannot be sent is named by its key, its value not shown', async () => {
    await create('secrets', { metadata: { name: 'bad-headers' }, stringData: { 'X-Fine': 'ok', 'X-Bad': 'v4l\u0001ue' } });
    const msg = await refusal(fetch({ http: { url: `${base}/app.yaml`, headersSecretRef: { name: 'bad-headers' } } }));
    expect(msg).toBe(`Secret ${namespace()}/bad-headers key "X-Bad": not a valid HTTP header name or value`);
  });

  test('redirects are followed; HTTP errors are named', async () => {
    const got = await fetch({ http: { url: `${base}/moved.yaml` } });
    expect(names(got.objects)).toEqual(['ConfigMap/web', 'ConfigMap/web-2']);
    expect(await refusal(fetch({ http: { url: `${base}/gone.yaml` } }))).toBe(
      `GET ${base}/gone.yaml: HTTP 404 Not Found: no /gone.yaml here`,
    );
  });

  test('the fetch timeout covers a body that stalls, a body that trickles, and a server that never answers', async () => {
    const limits = { fetchTimeoutMs: 300 };
    for (const p of ['/stalls.yaml', '/trickle.yaml', '/silent.yaml']) {
      received.delete(p);
      expect(await refusal(fetch({ http: { url: `${base}${p}` } }, { limits }))).toBe(
        `GET ${base}${p}: no complete answer within 300 ms (the fetch timeout, --source-fetch-timeout)`,
      );
      // One request, and the client dropped its connection (these answers never end on their own).
      expect(received.get(p)).toBe(1);
      await hangGuard(closed.get(p)!, `${p}: the client never dropped its connection`);
    }
  });

  test('the size limit: refused while streaming, the connection dropped', async () => {
    const limits = { maxFetchedBytes: 64 * 1024 };
    expect(await refusal(fetch({ http: { url: `${base}/endless.yaml` } }, { limits }))).toBe(
      `GET ${base}/endless.yaml: more than 64 KiB (the source limit on fetched bytes, --source-max-fetched)`,
    );
    await endlessClosed;
    // Socket buffers hold a few MiB at most; a client that read on would have taken it all.
    expect(endlessSent).toBeLessThan(16 * 1024 * 1024);
    expect(await refusal(fetch({ http: { url: `${base}/huge.yaml` } }, { limits }))).toContain('more than 64 KiB');
  });

  test('cancelled by the caller', async () => {
    const ac = new AbortController();
    const pending = fetch({ http: { url: `${base}/silent.yaml` } }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    expect(await refusal(pending)).toBe(`GET ${base}/silent.yaml: cancelled`);
  });

  test('paths on a single file is a mistake', async () => {
    expect(await refusal(fetch({ http: { url: `${base}/app.yaml` } }, { paths: ['x'] }))).toContain('remove spec.paths');
  });
});

describe('https with a CA from a Secret', () => {
  let tlsServer: TlsServer | undefined;
  let tlsBase = '';
  let caPem = '';

  beforeAll(async () => {
    tlsServer = await startTlsServer((_req, res) => res.end(cm('over-tls')));
    ({ base: tlsBase, caPem } = tlsServer);
    await create('secrets', { metadata: { name: 'ca' }, stringData: { 'ca.crt': caPem, 'other.pem': caPem, junk: 'hello' } });
  });

  afterAll(async () => {
    await tlsServer?.close();
  });

  test('trusted with caSecretRef (key ca.crt by default, or another key)', async () => {
    const got = await fetch({ http: { url: `${tlsBase}/app.yaml`, caSecretRef: { name: 'ca' } } });
    expect(names(got.objects)).toEqual(['ConfigMap/over-tls']);
    await expect(fetch({ http: { url: `${tlsBase}/app.yaml`, caSecretRef: { name: 'ca', key: 'other.pem' } } })).resolves.toBeDefined();
  });

  test('refused without it; a key that is not PEM is named', async () => {
    expect(await refusal(fetch({ http: { url: `${tlsBase}/app.yaml` } }))).toMatch(new RegExp(`^GET ${tlsBase.replace(/[.]/g, '\\.')}/app\\.yaml: .*certificate`));
    expect(await refusal(fetch({ http: { url: `${tlsBase}/app.yaml`, caSecretRef: { name: 'ca', key: 'junk' } } }))).toBe(
      `Secret ${namespace()}/ca key junk: not a PEM certificate bundle (-----BEGIN CERTIFICATE-----)`,
    );
  });
});

describe('Flux artifact', () => {
  let artifact: Buffer;
  let artifactServer: http.Server;
  let artifactBase = '';
  const served: string[] = [];

  beforeAll(async () => {
    await installGitRepositoryCrd('mgmt');
    artifact = await tarGz([
      { name: './', type: 'directory' },
      { name: './deploy/app.yaml', data: `${cm('art-1')}---\n${cm('art-2')}` },
      { name: './deploy/extra/more.yaml', data: cm('art-3') },
      { name: './docs/example.yaml', data: cm('not-wanted') },
    ]);
    artifactServer = http.createServer((req, res) => {
      served.push(req.url ?? '');
      if (req.url?.split('?')[0] === '/gitrepository/repo/latest.tar.gz') res.end(artifact);
      else res.writeHead(404).end();
    });
    artifactBase = await listen(artifactServer);
  });

  afterAll(async () => {
    artifactServer.closeAllConnections();
    await new Promise((r) => artifactServer.close(r));
  });

  const source = (name: string): SyncSource => ({ artifact: { apiVersion: FLUX_SOURCE_API_VERSION, kind: 'GitRepository', name } });

  test('not ready yet while status.artifact is missing; then objects and the artifact revision', async () => {
    const ns = namespace();
    await createGitRepository('mgmt', ns, 'repo');
    expect(await refusal(fetch(source('repo')))).toBe(
      `GitRepository ${ns}/repo has no artifact: not ready yet; it is used once its status.artifact is set`,
    );
    const revision = 'main@sha1:0123456789abcdef0123456789abcdef01234567';
    await setArtifact('mgmt', ns, 'repo', { url: `${artifactBase}/gitrepository/repo/latest.tar.gz`, digest: sha256(artifact), revision });
    const got = await fetch(source('repo'), { paths: ['deploy'] });
    expect(names(got.objects)).toEqual(['ConfigMap/art-1', 'ConfigMap/art-2', 'ConfigMap/art-3']);
    expect(got.revision).toBe(revision);
    expect(got.readFrom).toBe(`GitRepository ${ns}/repo`);
    expect(referencedObjectsOf(source('repo'), ns)).toEqual([{ apiVersion: FLUX_SOURCE_API_VERSION, kind: 'GitRepository', name: 'repo', namespace: ns }]);
  });

  test('a digest that does not match the tarball is refused', async () => {
    const ns = namespace();
    await createGitRepository('mgmt', ns, 'tampered');
    const wrong = sha256('something else');
    await setArtifact('mgmt', ns, 'tampered', { url: `${artifactBase}/gitrepository/repo/latest.tar.gz`, digest: wrong, revision: 'main@sha1:1' });
    expect(await refusal(fetch(source('tampered')))).toBe(
      `GitRepository ${ns}/tampered artifact ${artifactBase}/gitrepository/repo/latest.tar.gz: digest mismatch: expected ${wrong}, got ${sha256(artifact)} (the content changed, or the digest is wrong)`,
    );
  });

  test('Syncs of one artifact revision fetch and parse it once; each gets objects of its own', async () => {
    const ns = namespace();
    const url = `${artifactBase}/gitrepository/repo/latest.tar.gz?shared=${ns}`;
    for (const name of ['shared-a', 'shared-b']) {
      await createGitRepository('mgmt', ns, name);
      await setArtifact('mgmt', ns, name, { url, digest: sha256(artifact), revision: 'main@sha1:2' });
    }
    const gets = (): number => served.filter((u) => u.endsWith(`?shared=${ns}`)).length;
    const first = await fetch(source('shared-a'), { paths: ['deploy'] });
    first.objects[0]!.metadata.labels = { changed: 'by the first caller' };
    const second = await fetch(source('shared-b'), { paths: ['deploy'] });
    expect(gets()).toBe(1);
    expect(names(second.objects)).toEqual(['ConfigMap/art-1', 'ConfigMap/art-2', 'ConfigMap/art-3']);
    expect(second.objects[0]!.metadata.labels).toBeUndefined();
    // Other paths are another set: fetched again.
    expect(names((await fetch(source('shared-b'), { paths: ['docs'] })).objects)).toEqual(['ConfigMap/not-wanted']);
    expect(gets()).toBe(2);
  });

  test('a missing object, and a kind the cluster does not serve', async () => {
    const ns = namespace();
    expect(await refusal(fetch(source('absent')))).toBe(`GitRepository ${ns}/absent not found: create it, or fix spec.source.artifact.name`);
    expect(await refusal(fetch({ artifact: { apiVersion: 'source.toolkit.fluxcd.io/v9', kind: 'GitRepository', name: 'x' } }))).toBe(
      'spec.source.artifact: the cluster does not serve GitRepository in source.toolkit.fluxcd.io/v9: is Flux (its source CRDs) installed?',
    );
  });
});
