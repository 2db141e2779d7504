// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// Hostile and broken input through a running operator (issue 15, item 4): each
// case ends in Ready=False with a reason and a message a person can act on, a
// Warning Event, and nothing applied that should not be; and the memory of
// fetching and unpacking stays bounded while five gzip bombs are refused at once.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import { closeClients, clusterClient, OWN_LANE_CLUSTER } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { endlessBomb, gzipBomb, HostileServer, peakRss, silent, trickle } from '../support/hostile-archives.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { applySync, eventsFor, find, readyOf, waitForReady } from '../support/syncs.js';
import { tarGz, type TarEntry } from '../support/tarball.js';

const CLUSTER = OWN_LANE_CLUSTER;
const MiB = 1024 * 1024;
let client: KubeClient;
let server: HostileServer;

const cmYaml = (name: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n`;
const cmPath = (namespace: string, name: string): string => `/api/v1/namespaces/${namespace}/configmaps/${name}`;

beforeAll(async () => {
  client = await clusterClient(CLUSTER);
  await installCrds(CLUSTER);
  server = await new HostileServer().start();
});

afterAll(async () => {
  await server?.stop();
  await closeClients();
});

async function expectWarningEvent(namespace: string, name: string, reason: string): Promise<void> {
  await eventually(`a ${reason} Event on ${name}`, async () =>
    (await eventsFor(client, namespace, name)).some((e) => e.reason === reason && e.type === 'Warning') || undefined,
  );
}

describe('memory under hostile input', () => {
  const ns = useTestNamespace(CLUSTER, 'bombs');
  let op: OperatorProcess;
  beforeAll(async () => {
    // An operator of its own: its peak RSS is this scenario's alone.
    op = await OperatorProcess.start(CLUSTER, ['--namespace', ns()]);
  });
  afterAll(async () => {
    await op?.stop('SIGTERM');
  });

  const BOMBS = 5;
  // Three archives of about 300 KiB that inflate to 300 MiB, past the 200 MiB
  // unpack limit, in a manifest file (bomb.yaml): the worst case, since
  // manifests are what must be kept to be parsed. One whose bomb is not a
  // manifest (bomb.bin: drained, never kept). One served without end, a gzip
  // stream of 1 MiB members as fast as it is read (the 50 MiB fetch limit).
  test(`${BOMBS} gzip bombs at once: each refused with a clear condition, peak RSS under 450 MiB, a normal Sync still Ready`, async () => {
    const valid = (i: number) => [{ name: 'a.yaml', data: cmYaml(`bomb-cm-${i}`) }];
    for (let i = 0; i < 3; i++) server.files.set(`/bomb-${i}.tar.gz`, gzipBomb(300, 'bomb.yaml', valid(i)));
    server.files.set('/bomb-3.tar.gz', gzipBomb(300, 'bomb.bin', valid(3)));
    server.routes.set('/bomb-4.tar.gz', endlessBomb(gzipBomb(0, 'bomb.yaml', valid(4))));
    server.files.set('/normal.yaml', Buffer.from(cmYaml('normal')));
    const before = peakRss(op.child.pid!);
    await Promise.all([
      ...Array.from({ length: BOMBS }, (_, i) =>
        applySync(client, ns(), `bomb-${i}`, { defaultNamespace: ns(), source: { http: { url: `${server.base}/bomb-${i}.tar.gz` } } }),
      ),
      applySync(client, ns(), 'normal', { defaultNamespace: ns(), source: { http: { url: `${server.base}/normal.yaml` } } }),
    ]);
    const messages: string[] = [];
    for (let i = 0; i < BOMBS; i++) {
      const failed = await waitForReady(client, ns(), `bomb-${i}`, 'False', 'SourceError', 120_000);
      messages.push(readyOf(failed)?.message ?? '');
    }
    await waitForReady(client, ns(), 'normal', 'True', 'Succeeded', 120_000);
    const peak = peakRss(op.child.pid!);
    // The figure for docs/RELIABILITY.md.
    process.stdout.write(`hostile-input: peak RSS before ${(before / MiB).toFixed(0)} MiB, after ${BOMBS} bombs ${(peak / MiB).toFixed(0)} MiB\n`);
    for (const m of messages) process.stdout.write(`  ${m}\n`);
    // Each names its own URL and the limit it crossed: the budget for the manifest bombs (crowded
    // out while others held it, to be retried; or, the last one left, too big for the whole of it),
    // the unpack limit for the one that is drained, the fetch limit (or the budget) for the endless one.
    messages.forEach((m, i) => expect(m).toContain(`${server.base}/bomb-${i}.tar.gz: `));
    for (const i of [0, 1, 2]) expect(messages[i]).toMatch(/the operator's memory budget for sources/);
    expect(messages[3]).toContain('more than 200 MiB once unpacked (the source limit, --source-max-unpacked); archive refused');
    expect(messages[4]).toMatch(/more than 50 MiB \(the source limit on fetched bytes, --source-max-fetched\)|the operator's memory budget for sources/);
    for (let i = 0; i < BOMBS; i++) {
      await expectWarningEvent(ns(), `bomb-${i}`, 'SourceError');
      expect(await find(client, cmPath(ns(), `bomb-cm-${i}`))).toBeUndefined();
    }
    expect(await find(client, cmPath(ns(), 'normal'))).toBeDefined();
    expect(peak).toBeLessThan(450 * MiB);
    expect(await op.readyz()).toBe(200);
  }, 300_000);
});

describe('broken and hostile sources', () => {
  const ns = useTestNamespace(CLUSTER, 'hostile');
  let op: OperatorProcess;
  beforeAll(async () => {
    op = await OperatorProcess.start(CLUSTER, ['--namespace', ns()]);
    // A route that demands the Secret's header; another origin redirects to it.
    server.routes.set('/private.yaml', (req, res) => {
      if (req.headers.authorization !== 'Bearer s3cret-hostile') return void res.writeHead(401).end('who are you?');
      res.end(cmYaml('never-private'));
    });
    server.routes.set('/elsewhere.yaml', (_req, res) => void res.writeHead(302, { location: `${server.otherOrigin}/private.yaml` }).end());
  });
  afterAll(async () => {
    await op?.stop('SIGTERM');
  });

  const bigConfigMap = (name: string, bytes: number): string =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  big: "${'x'.repeat(bytes)}"\n`;
  const cms = (prefix: string, n: number): string => Array.from({ length: n }, (_, i) => cmYaml(`${prefix}-${i}`)).join('---\n');
  const archive = async (path: string, entries: TarEntry[]): Promise<Record<string, unknown>> => {
    server.files.set(path, await tarGz(entries));
    return { http: { url: `${server.base}${path}` } };
  };
  const file = (path: string, text: string): Record<string, unknown> => {
    server.files.set(path, Buffer.from(text));
    return { http: { url: `${server.base}${path}` } };
  };
  /** Each case: the source (or spec), the reason and message expected, and objects that must not exist. */
  const cases: { name: string; spec: () => Promise<Record<string, unknown>>; reason: string; message: RegExp; never: string[] }[] = [
    {
      name: 'no-kind',
      reason: 'SourceError',
      message: /no-kind\.yaml: document 2 \(line \d+\): missing kind \(every object needs apiVersion, kind and metadata\.name\)/,
      never: ['never-no-kind'],
      spec: async () => ({ source: file('/no-kind.yaml', `${cmYaml('never-no-kind')}---\napiVersion: v1\nmetadata:\n  name: x\n`) }),
    },
    {
      name: 'no-apiversion',
      reason: 'SourceError',
      message: /key a\.yaml: document 1 \(line 1\): missing apiVersion/,
      never: ['never-no-apiversion'],
      spec: async () => {
        await client.request({
          method: 'POST',
          path: `/api/v1/namespaces/${ns()}/configmaps`,
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'no-apiversion-src' }, data: { 'a.yaml': 'kind: ConfigMap\nmetadata:\n  name: x\n', 'b.yaml': cmYaml('never-no-apiversion') } },
        });
        return { source: { configMap: { name: 'no-apiversion-src' } } };
      },
    },
    {
      name: 'too-many',
      reason: 'SourceError',
      message: /too-many\.yaml: more than 10000 objects \(the source limit, --source-max-objects\): split the manifests into several syncs/,
      never: ['many-0', 'many-10000'],
      spec: async () => ({ source: file('/too-many.yaml', cms('many', 10_001)) }),
    },
    {
      // 1,000 problems, about 100 KB of them: the condition names five and counts the rest (a
      // message past 32,768 characters had the status write refused, leaving no condition at all).
      name: 'a-thousand-problems',
      reason: 'SourceError',
      message: /^ConfigMap\/\S+\/dup-0 appears more than once in the set \(id [^)]+\); ConfigMap\/\S+\/dup-1 .*; and 995 more$/,
      never: ['dup-0', 'dup-999'],
      spec: async () => ({ source: file('/a-thousand-problems.yaml', `${cms('dup', 1000)}---\n${cms('dup', 1000)}`) }),
    },
    {
      // 1.4 MB inline: stored, but not with the inventory of its 4,000 objects (etcd's 1.5 MiB). Applied, its
      // status write was refused ("etcdserver: request is too large") again and again, the set never recorded.
      name: 'too-large-to-record',
      reason: 'InvalidSpec',
      message: /^with the inventory of its 4000 objects this Sync would take about 1\.\d\d MiB, past the 1\.50 MiB an object may take in etcd .*nothing was applied; move the objects out of spec\.source\.inline into an http or artifact source/,
      never: ['huge-0', 'huge-3999'],
      spec: async () => ({ source: { inline: Array.from({ length: 4000 }, (_, i) => ({ ...cm(`huge-${i}`), data: { a: 'x'.repeat(280) } })) } }),
    },
    {
      name: 'over-1mib',
      reason: 'ApplyFailed',
      message: /ConfigMap .*\/never-over-1mib: .*Too long: may not be more than 1048576 bytes/,
      never: ['never-over-1mib'],
      spec: async () => ({ source: file('/over-1mib.yaml', bigConfigMap('never-over-1mib', 2 * MiB)) }),
    },
    {
      // Past the API server's limit on a request body (3 MiB): refused before any validation.
      name: 'over-request-limit',
      reason: 'ApplyFailed',
      message: /ConfigMap .*\/never-over-request-limit: .*too large/i,
      never: ['never-over-request-limit'],
      spec: async () => ({ source: file('/over-request-limit.yaml', bigConfigMap('never-over-request-limit', 4 * MiB)) }),
    },
    {
      name: 'absolute',
      reason: 'SourceError',
      message: /absolute\.tar\.gz: entry "\/etc\/evil\.yaml" is an absolute path or leaves the archive root \(\.\.\); archive refused/,
      never: ['never-absolute-ok', 'never-absolute'],
      spec: async () => ({
        source: await archive('/absolute.tar.gz', [
          { name: 'ok.yaml', data: cmYaml('never-absolute-ok') },
          { name: '/etc/evil.yaml', data: cmYaml('never-absolute') },
        ]),
      }),
    },
    {
      name: 'symlink-out',
      reason: 'SourceError',
      message: /entry "app\/secrets\.yaml" is a link to "\.\.\/\.\.\/\.\.\/etc\/passwd", outside the archive root; archive refused/,
      never: ['never-symlink-ok'],
      spec: async () => ({
        source: await archive('/symlink.tar.gz', [
          { name: 'app/ok.yaml', data: cmYaml('never-symlink-ok') },
          { name: 'app/secrets.yaml', type: 'symlink', linkname: '../../../etc/passwd' },
        ]),
      }),
    },
    {
      name: 'hardlink-out',
      reason: 'SourceError',
      message: /entry "x\.yaml" is a link to "\.\.\/x\.yaml", outside the archive root; archive refused/,
      never: ['never-hardlink-ok'],
      spec: async () => ({
        source: await archive('/hardlink.tar.gz', [
          { name: 'ok.yaml', data: cmYaml('never-hardlink-ok') },
          { name: 'x.yaml', type: 'link', linkname: '../x.yaml' },
        ]),
      }),
    },
    {
      name: 'redirect-elsewhere',
      reason: 'SourceError',
      message: /GET http:\/\/localhost:\d+\/private\.yaml: HTTP 401 Unauthorized \(check headersSecretRef\)/,
      never: ['never-private'],
      spec: async () => {
        await client.request({
          method: 'POST',
          path: `/api/v1/namespaces/${ns()}/secrets`,
          body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'hostile-headers' }, stringData: { Authorization: 'Bearer s3cret-hostile' } },
        });
        return { source: { http: { url: `${server.base}/elsewhere.yaml`, headersSecretRef: { name: 'hostile-headers' } } } };
      },
    },
    {
      name: 'sa-missing',
      reason: 'ApplyFailed',
      message: /ConfigMap .*\/never-sa-missing: .*forbidden/,
      never: ['never-sa-missing'],
      spec: async () => ({ serviceAccountName: 'cluster-admin', source: { inline: [cm('never-sa-missing')] } }),
    },
  ];

  const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

  test.each(cases)('$name ends in Ready=False ($reason) with an Event, and applies nothing', async ({ name, spec, reason, message, never }) => {
    await applySync(client, ns(), name, { defaultNamespace: ns(), ...(await spec()) });
    const failed = await waitForReady(client, ns(), name, 'False', reason, 60_000);
    const msg = readyOf(failed)?.message ?? '';
    process.stdout.write(`hostile-input ${name}: ${reason}: ${msg.slice(0, 300)}\n`);
    expect(msg).toMatch(message);
    await expectWarningEvent(ns(), name, reason);
    for (const n of never) expect(await find(client, cmPath(ns(), n))).toBeUndefined();
  });

  test("a serviceAccountName naming another namespace's account is refused at admission (the CRD's pattern)", async () => {
    // Were it admitted, the name would go into system:serviceaccount:<ns>:<name> whole, and be forbidden there.
    const err = await applySync(client, ns(), 'sa-colon', { serviceAccountName: 'kube-system:generic-garbage-collector', source: { inline: [cm('never-sa-colon')] } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 422 });
    expect(String((err as Error).message)).toMatch(/spec\.serviceAccountName/);
    expect(await find(client, cmPath(ns(), 'never-sa-colon'))).toBeUndefined();
  });

  test('the redirect to another origin did not carry the Secret header there', () => {
    const there = server.seen.filter((s) => s.path === '/private.yaml');
    expect(there.length).toBeGreaterThan(0);
    for (const s of there) {
      expect(s.headers.host).toMatch(/^localhost:/);
      expect(s.headers.authorization).toBeUndefined();
    }
  });

  test('the operator kept serving: a good Sync beside them is Ready, no crash', async () => {
    await applySync(client, ns(), 'healthy', { defaultNamespace: ns(), source: file('/healthy.yaml', cmYaml('healthy')) });
    await waitForReady(client, ns(), 'healthy', 'True', 'Succeeded');
    expect(op.stderr.filter((l) => /Error|uncaught/i.test(l))).toEqual([]);
    expect(await op.readyz()).toBe(200);
  });
});

// The operator's fetch timeout is 60 s, so these take a minute: `make soak` (SOAK=1)
// runs them; `make test` covers the same deadline on fetchSource with a short
// timeout (test/integration/source.test.ts, "the fetch timeout ..."), and
// through an operator started with --source-fetch-timeout 2s (below).
if (process.env.SOAK === '1') {
  describe('servers that never answer or trickle (SOAK=1: the 60 s fetch timeout)', () => {
    const ns = useTestNamespace(CLUSTER, 'slow');
    let op: OperatorProcess;
    beforeAll(async () => {
      op = await OperatorProcess.start(CLUSTER, ['--namespace', ns()]);
      server.routes.set('/silent.yaml', silent);
      server.routes.set('/trickle.yaml', trickle(200));
    });
    afterAll(async () => {
      await op?.stop('SIGTERM');
    });

    test('each ends in Ready=False (SourceError) naming the timeout, with an Event; a good Sync meanwhile is Ready', async () => {
      await applySync(client, ns(), 'silent', { source: { http: { url: `${server.base}/silent.yaml` } } });
      await applySync(client, ns(), 'trickle', { source: { http: { url: `${server.base}/trickle.yaml` } } });
      server.files.set('/meanwhile.yaml', Buffer.from(cmYaml('meanwhile')));
      await applySync(client, ns(), 'meanwhile', { defaultNamespace: ns(), source: { http: { url: `${server.base}/meanwhile.yaml` } } });
      // Workers are not held up by the slow ones.
      await waitForReady(client, ns(), 'meanwhile', 'True', 'Succeeded', 30_000);
      for (const name of ['silent', 'trickle']) {
        const failed = await waitForReady(client, ns(), name, 'False', 'SourceError', 180_000);
        expect(readyOf(failed)?.message).toBe(`GET ${server.base}/${name}.yaml: no complete answer within 60000 ms (the fetch timeout, --source-fetch-timeout)`);
        await expectWarningEvent(ns(), name, 'SourceError');
      }
    }, 300_000);
  });
}

describe('a smaller --source-memory-budget', () => {
  const ns = useTestNamespace(CLUSTER, 'budget');
  let op: OperatorProcess;
  beforeAll(async () => {
    op = await OperatorProcess.start(CLUSTER, ['--namespace', ns(), '--source-memory-budget', '8']);
  });
  afterAll(async () => {
    await op?.stop('SIGTERM');
  });

  // A ConfigMap and a YAML comment that makes the file `mib` MiB: the budget holds the fetched bytes.
  const padded = (name: string, mib: number): Buffer => Buffer.from(`# ${'x'.repeat(mib * MiB)}\n${cmYaml(name)}`);

  test('a source that fits is applied; one larger than the whole budget is refused at once, naming it', async () => {
    server.files.set('/fits.yaml', padded('budget-fits', 3));
    server.files.set('/too-large.yaml', padded('budget-too-large', 10));
    await applySync(client, ns(), 'fits', { defaultNamespace: ns(), source: { http: { url: `${server.base}/fits.yaml` } } });
    await applySync(client, ns(), 'too-large', { defaultNamespace: ns(), source: { http: { url: `${server.base}/too-large.yaml` } } });
    await waitForReady(client, ns(), 'fits', 'True', 'Succeeded');
    // Read while 'fits' still held its share, it may first be told the budget is in use (retried later):
    // the refusal that names the budget as too small comes at the retry.
    const refused = await eventually('the refusal of a source larger than the budget', async () => {
      const s = await waitForReady(client, ns(), 'too-large', 'False', 'SourceError');
      return readyOf(s)?.message?.includes('more than 8 MiB to hold in memory at once') ? s : undefined;
    });
    expect(readyOf(refused)?.message).toBe(
      `${server.base}/too-large.yaml: more than 8 MiB to hold in memory at once (fetched bytes and the manifest files to parse; the operator's memory budget for sources); refused: split the source, or keep other files out of its manifests`,
    );
    await expectWarningEvent(ns(), 'too-large', 'SourceError');
    expect(await find(client, cmPath(ns(), 'budget-fits'))).toBeDefined();
    expect(await find(client, cmPath(ns(), 'budget-too-large'))).toBeUndefined();
  });
});

describe('source limits set by the operator\'s flags', () => {
  const ns = useTestNamespace(CLUSTER, 'limits');
  let op: OperatorProcess;
  beforeAll(async () => {
    op = await OperatorProcess.start(CLUSTER, ['--namespace', ns(), '--source-max-objects', '3', '--source-max-fetched', '1', '--source-fetch-timeout', '2s']);
  });
  afterAll(async () => {
    await op?.stop('SIGTERM');
  });

  test('lower than the defaults: a source past one (objects, fetched bytes, fetch time) is refused naming the flag that sets it; one within them is applied', async () => {
    const cms = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-${i}`, namespace: ns() }, data: { a: '1' } }));
    server.files.set('/two-mib.yaml', Buffer.from(`# ${'x'.repeat(2 * MiB)}\n${cmYaml('limits-big')}`));
    server.files.set('/small.yaml', Buffer.from(cmYaml('limits-small')));
    server.routes.set('/never.yaml', silent);
    await applySync(client, ns(), 'three', { source: { inline: cms(3, 'three') } });
    await applySync(client, ns(), 'four', { source: { inline: cms(4, 'four') } });
    await applySync(client, ns(), 'big', { defaultNamespace: ns(), source: { http: { url: `${server.base}/two-mib.yaml` } } });
    await applySync(client, ns(), 'small', { defaultNamespace: ns(), source: { http: { url: `${server.base}/small.yaml` } } });
    await applySync(client, ns(), 'never', { defaultNamespace: ns(), source: { http: { url: `${server.base}/never.yaml` } } });
    await waitForReady(client, ns(), 'three', 'True', 'Succeeded');
    await waitForReady(client, ns(), 'small', 'True', 'Succeeded');
    const four = await waitForReady(client, ns(), 'four', 'False', 'SourceError');
    expect(readyOf(four)?.message).toBe('spec.source.inline: more than 3 objects (the source limit, --source-max-objects)');
    const big = await waitForReady(client, ns(), 'big', 'False', 'SourceError');
    expect(readyOf(big)?.message).toBe(`GET ${server.base}/two-mib.yaml: more than 1 MiB (the source limit on fetched bytes, --source-max-fetched)`);
    // A server that never answers, given up after the operator's 2 s (60 s by default).
    const never = await waitForReady(client, ns(), 'never', 'False', 'SourceError');
    expect(readyOf(never)?.message).toBe(`GET ${server.base}/never.yaml: no complete answer within 2000 ms (the fetch timeout, --source-fetch-timeout)`);
    await expectWarningEvent(ns(), 'four', 'SourceError');
    expect(await find(client, cmPath(ns(), 'four-0'))).toBeUndefined();
    expect(await find(client, cmPath(ns(), 'limits-big'))).toBeUndefined();
  });
});
