// Lane: own clusters (none: this file reaches no cluster, so it runs beside the shared lane)
// The Helm helper's sandbox (issue 47, docs/adr/0013): its walls refuse what a
// hostile chart could reach for (the probe shows each refused, and the same
// probe without the walls succeeding), a chart renders through the protocol,
// and each way a render can end has its exit code and a message a person can
// act on. Runs the helper that `make build` builds (dist/helm/); no cluster.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { helmFiles, helmHelperPath, runHelmHelper } from '../support/helm-helper.js';

const TOKEN = 'read /var/run/secrets/kubernetes.io/serviceaccount/token';
const EPERM = 'refused: operation not permitted';

/** A loopback TCP listener that counts the connections it is offered. */
interface Listener {
  server: Server;
  port: number;
  connections: number;
}

async function listen(): Promise<Listener> {
  const l: Listener = { server: createServer(), port: 0, connections: 0 };
  l.server.on('connection', (socket) => {
    l.connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => l.server.listen(0, '127.0.0.1', resolve));
  l.port = (l.server.address() as AddressInfo).port;
  return l;
}

interface Probe {
  walls: { noNewPrivs: boolean; seccomp: boolean; landlock: number; landlockNet: boolean };
  attempts: Record<string, string>;
}

async function probe(port: number, more: string[] = []): Promise<Probe> {
  const run = await runHelmHelper('', { args: ['-probe', '-probe-port', String(port), ...more] });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return run.json as Probe;
}

let listener: Listener;
beforeAll(async () => {
  listener = await listen();
});
afterAll(async () => {
  await new Promise((resolve) => listener.server.close(resolve));
});

describe('the walls', () => {
  test('refuse a socket, a connect to a loopback listener, open, the service-account token and execve; seccomp and Landlock hold', async () => {
    const before = listener.connections;
    const got = await probe(listener.port);
    expect(got.attempts).toEqual({
      socket: EPERM,
      [`connect 127.0.0.1:${listener.port}`]: EPERM,
      'open /etc/hostname': EPERM,
      [TOKEN]: EPERM,
      'execve /bin/true': EPERM,
    });
    expect(listener.connections).toBe(before);
    expect(got.walls.noNewPrivs).toBe(true);
    expect(got.walls.seccomp).toBe(true);
    // This machine's kernel (6.18) has Landlock with its network rules (ABI 4 and later).
    expect(got.walls.landlock).toBeGreaterThanOrEqual(4);
    expect(got.walls.landlockNet).toBe(true);
    console.log(`${helmHelperPath()}: walls ${JSON.stringify(got.walls)}`);
  });

  test('without them (-no-sandbox, tests only) the same probe succeeds', async () => {
    const before = listener.connections;
    const got = await probe(listener.port, ['-no-sandbox']);
    expect(got.walls).toEqual({ noNewPrivs: false, seccomp: false, landlock: 0, landlockNet: false });
    expect(got.attempts.socket).toBe('ok');
    expect(got.attempts[`connect 127.0.0.1:${listener.port}`]).toBe('ok');
    expect(got.attempts['open /etc/hostname']).toBe('ok');
    expect(got.attempts['execve /bin/true']).toBe('ok');
    // No token on this machine: refused by the filesystem, not by a wall.
    expect(got.attempts[TOKEN]).not.toBe(EPERM);
    for (let i = 0; i < 50 && listener.connections === before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(listener.connections).toBe(before + 1);
  });
});

const CHART = {
  'charts/web/Chart.yaml': "apiVersion: v2\nname: web\nversion: 1.2.3\nappVersion: '4.5'\n",
  'charts/web/values.yaml': 'replicas: 1\ndb:\n  host: db\n',
  'charts/web/templates/cm.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\n  namespace: {{ .Release.Namespace }}\n' +
    'data:\n  replicas: {{ .Values.replicas | quote }}\n  host: {{ .Values.db.host }}\n  password: {{ .Values.db.password | quote }}\n' +
    '  kube: {{ .Capabilities.KubeVersion.Version }}\n  monitoring: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" | quote }}\n' +
    '---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {{ .Release.Name }}\n',
  'charts/web/templates/job.yaml':
    'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    helm.sh/hook: pre-install,pre-upgrade\n' +
    "    helm.sh/hook-weight: '-5'\n    helm.sh/hook-delete-policy: hook-succeeded\n",
  'charts/web/templates/NOTES.txt': 'not a manifest',
  'charts/web/crds/widgets.yaml': 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n',
  'other/secret.yaml': 'not part of the chart',
};

function input(tree: Record<string, string>, more: Record<string, unknown> = {}): Record<string, unknown> {
  return { files: helmFiles(tree), chart: 'charts/web', releaseName: 'web', namespace: 'apps', values: [], includeCRDs: false, kubeVersion: '', apiVersions: [], maxOutputBytes: 1 << 20, ...more };
}

describe('a chart renders through the protocol', () => {
  test('manifests in the order helm template prints them, hooks with their events, weight and delete policies, CRDs when asked', async () => {
    const values = [
      { from: 'ConfigMap apps/base key values.yaml', yaml: 'replicas: 3\n' },
      { from: 'Secret apps/creds key password', targetPath: 'db.password', value: 's3,cr\\et' },
      { from: 'spec.helm.values', object: { db: { host: 'db.apps' } } },
    ];
    const run = await runHelmHelper(input(CHART, { values, includeCRDs: true, kubeVersion: 'v1.36.3', apiVersions: ['monitoring.coreos.com/v1'] }));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.json).toEqual({
      chart: { name: 'web', version: '1.2.3', appVersion: '4.5' },
      crds: [{ path: 'web/crds/widgets.yaml', data: CHART['charts/web/crds/widgets.yaml'] }],
      manifests: [
        { path: 'web/templates/cm.yaml', data: 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: web\n' },
        {
          path: 'web/templates/cm.yaml',
          data:
            'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-cm\n  namespace: apps\ndata:\n  replicas: "3"\n  host: db.apps\n' +
            '  password: "s3,cr\\\\et"\n  kube: v1.36.3\n  monitoring: "true"\n',
        },
      ],
      hooks: [
        {
          path: 'web/templates/job.yaml',
          data: CHART['charts/web/templates/job.yaml'],
          events: ['pre-install', 'pre-upgrade'],
          weight: -5,
          deletePolicies: ['hook-succeeded'],
        },
      ],
      walls: { noNewPrivs: true, seccomp: true, landlock: expect.any(Number), landlockNet: true },
    });
  });

  test('without includeCRDs no CRD is given', async () => {
    const run = await runHelmHelper(input(CHART));
    expect(run.code).toBe(0);
    expect((run.json as { crds: unknown[] }).crds).toEqual([]);
  });
});

function withSchema(schema: unknown): Record<string, string> {
  return { ...CHART, 'charts/web/values.schema.json': JSON.stringify(schema) };
}

describe('refused (exit 10): a $ref leaving the chart is never read nor fetched', () => {
  test('a $ref to a file outside the chart', async () => {
    const run = await runHelmHelper(input(withSchema({ properties: { db: { $ref: '../../../etc/passwd' } } })));
    expect(run.code).toBe(10);
    expect(run.stderr.split('\n')[0]).toBe(
      'values.schema.json of chart "web": $ref "../../../etc/passwd" leaves the chart (a `..` segment); only the chart\'s own files can be referred to',
    );
  });

  test('a $ref to a URL of a loopback server: the server receives no request', async () => {
    const server = await listen();
    try {
      const url = `http://127.0.0.1:${server.port}/schema.json`;
      const run = await runHelmHelper(input(withSchema({ properties: { db: { $ref: url } } })));
      expect(run.code).toBe(10);
      expect(run.stderr.split('\n')[0]).toBe(`values.schema.json of chart "web": $ref "${url}" is a URL; the sandbox fetches nothing: only the chart's own files can be referred to`);
      expect(server.connections).toBe(0);
    } finally {
      await new Promise((resolve) => server.server.close(resolve));
    }
  });

  test("a $ref to the chart's own file is followed", async () => {
    const tree = { ...withSchema({ properties: { replicas: { $ref: 'schemas/count.json' } } }), 'charts/web/schemas/count.json': '{"type": "integer"}' };
    const run = await runHelmHelper(input(tree, { values: [{ from: 'spec.helm.values', object: { replicas: 'three' } }] }));
    expect(run.code).toBe(11);
    expect(run.stderr.split('\n')[0]).toBe("values don't meet the specifications of the schema(s) in the following chart(s): web: - at '/replicas': got string, want integer");
  });
});

describe('each limit ends the render with its code and says what happened', () => {
  test('a template error (11), with where it is', async () => {
    const run = await runHelmHelper(input({ ...CHART, 'charts/web/templates/bad.yaml': 'a: {{ .Values.no.such }}\n' }));
    expect(run.code).toBe(11);
    expect(run.stderr.split('\n')[0]).toBe('web/templates/bad.yaml:1:13: executing "web/templates/bad.yaml" at <.Values.no.such>: nil pointer evaluating interface {}.such');
  });

  test('a template including itself with ever larger data: the memory limit (12)', async () => {
    const tree = {
      ...CHART,
      'charts/web/templates/_self.tpl': '{{- define "self" -}}{{ include "self" (printf "%s%s" . .) }}{{- end -}}',
      'charts/web/templates/boom.yaml': 'a: {{ include "self" "ab" }}\n',
    };
    const run = await runHelmHelper(input(tree), { memory: 128 << 20 });
    expect(run.code).toBe(12);
    expect(run.stderr.split('\n')[0]).toBe(
      'the render needed more than 128 MiB of memory (the Helm limit): a template that includes itself without end, or builds ever larger values, does this',
    );
  });

  test('a template including itself with the same data: Helm stops it, told short', async () => {
    const tree = { ...CHART, 'charts/web/templates/_self.tpl': '{{- define "self" -}}{{ include "self" . }}{{- end -}}', 'charts/web/templates/loop.yaml': 'a: {{ include "self" . }}\n' };
    const run = await runHelmHelper(input(tree));
    expect(run.code).toBe(11);
    const line = run.stderr.split('\n')[0] ?? '';
    expect(line).toMatch(/^template: web\/templates\/loop.yaml:1:6: executing .* error calling include: \(\d+ nested includes\) \.\.\. rendering template has a nested reference name: self: unable to execute template$/);
    expect(line.length).toBeLessThan(400);
  });

  test('a long loop: the time limit (13)', async () => {
    const tree = { ...CHART, 'charts/web/templates/slow.yaml': '{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}' };
    const run = await runHelmHelper(input(tree), { timeoutMs: 300 });
    expect(run.code).toBe(13);
    expect(run.stderr.split('\n')[0]).toBe('the render took longer than 300ms (the Helm time limit): a template that loops or includes itself without end does this');
  });

  test('output larger than maxOutputBytes (14)', async () => {
    const tree = { ...CHART, 'charts/web/templates/many.yaml': '{{ range until 2000 }}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{{ . }}\n{{ end }}' };
    const run = await runHelmHelper(input(tree, { maxOutputBytes: 64 * 1024 }));
    expect(run.code).toBe(14);
    expect(run.stderr.split('\n')[0]).toMatch(/^the rendered chart is \d+ bytes, more than the 65536 bytes allowed \(the Helm output limit\)$/);
  });
});
