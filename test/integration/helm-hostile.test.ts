// Lane: own clusters (none: this file reaches no cluster, so it runs beside the shared lane)
// Hostile charts given to the Helm helper (issue 47, PROTOCOL.md): each refused
// with its exit code and a message a person can act on (the first stderr line,
// short enough for the caller, which reads the first 4 KiB), and nothing on
// stdout: nothing to apply. What Helm itself allows (a .Files.Get of a path
// outside the chart gives "") renders, and nothing of the machine is in it.
// Archives (symlinks, `../`, bombs) are refused before the helper, by
// extractTarGz: test/unit/source-archive.test.ts.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { HostileServer } from '../support/hostile-archives.js';
import { runHelmHelper, type HelmHelperResult } from '../support/helm-helper.js';

const EXIT = { refused: 10, failed: 11, memory: 12, time: 13, output: 14 } as const;
const MiB = 1024 * 1024;

const CHART_YAML = 'apiVersion: v2\nname: hostile\nversion: 0.1.0\n';
const CONFIG_MAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hostile\n';

/** A chart at the source's root: Chart.yaml, a ConfigMap, and the files given. */
function chartFiles(files: Record<string, string>, root = ''): Record<string, string> {
  const all: Record<string, string> = { 'Chart.yaml': CHART_YAML, 'templates/cm.yaml': CONFIG_MAP, ...files };
  return Object.fromEntries(Object.entries(all).map(([p, text]) => [root ? `${root}/${p}` : p, Buffer.from(text).toString('base64')]));
}

function input(files: Record<string, string>, more: Record<string, unknown> = {}): Record<string, unknown> {
  return { files, chart: '', releaseName: 'hostile', namespace: 'hostile', values: [], includeCRDs: false, kubeVersion: '', apiVersions: [], maxOutputBytes: 32 * MiB, ...more };
}

/** A run refused with one of `codes`: its message (first stderr line), checked to be there and short, and nothing on stdout. */
function refusedWith(run: HelmHelperResult, codes: number[]): string {
  const message = run.stderr.split('\n')[0] ?? '';
  // (the code expected is shown as the list of codes when it is none of them, beside the message)
  const code = run.code !== null && codes.includes(run.code) ? run.code : codes;
  expect({ code: run.code, stdout: run.stdout, message }).toEqual({ code, stdout: '', message: expect.any(String) });
  expect(message.trim().length).toBeGreaterThan(0);
  expect(message.length).toBeLessThanOrEqual(4096);
  return message;
}

function schemaWithRef(ref: string): string {
  return JSON.stringify({ type: 'object', properties: { port: { $ref: ref } } });
}

describe('values schema: $ref resolved only inside the chart', () => {
  const server = new HostileServer();
  beforeAll(async () => {
    await server.start();
    server.files.set('/schema.json', Buffer.from('{"type": "integer"}'));
  });
  afterAll(() => server.stop());

  test.each([
    ['a file URL', 'file:///etc/passwd'],
    ['a relative path out of the chart', '../../x.json'],
    ['an absolute path', '/etc/hostname'],
  ])('%s is refused, naming the $ref', async (_what, ref) => {
    const run = await runHelmHelper(input(chartFiles({ 'values.schema.json': schemaWithRef(ref), 'values.yaml': 'port: 80\n' })));
    const message = refusedWith(run, [EXIT.refused]);
    expect(message).toContain(ref);
  });

  test('an http URL (to a loopback server) is refused, and the server gets no request', async () => {
    const ref = `${server.base}/schema.json`;
    const run = await runHelmHelper(input(chartFiles({ 'values.schema.json': schemaWithRef(ref), 'values.yaml': 'port: 80\n' })));
    expect(refusedWith(run, [EXIT.refused])).toContain(ref);
    expect(server.seen).toEqual([]);
  });

  test('a $schema naming an http meta-schema is not fetched either', async () => {
    const schema = JSON.stringify({ $schema: `${server.base}/meta.json`, type: 'object' });
    const run = await runHelmHelper(input(chartFiles({ 'values.schema.json': schema })));
    expect(run.code === 0 || run.code === EXIT.refused).toBe(true);
    expect(server.seen).toEqual([]);
  });
});

describe('paths that leave the chart', () => {
  test('a chart folder outside the source is refused', async () => {
    const run = await runHelmHelper(input(chartFiles({}, 'app'), { chart: '../..' }));
    expect(refusedWith(run, [EXIT.refused])).toContain('../..');
  });

  test.each([['../evil.yaml'], ['/etc/evil.yaml'], ['app/../../evil.yaml']])('a source file named %s is refused, naming it', async (name) => {
    const files = { ...chartFiles({}, 'app'), [name]: Buffer.from(CONFIG_MAP).toString('base64') };
    const run = await runHelmHelper(input(files, { chart: 'app' }));
    expect(refusedWith(run, [EXIT.refused])).toContain(name);
  });

  test('.Files.Get and .Files.Glob of machine files and the service-account token give nothing (as in Helm: .Files is the chart)', async () => {
    const reads = ['/etc/passwd', '../../../../etc/passwd', '/var/run/secrets/kubernetes.io/serviceaccount/token', '../../../var/run/secrets/kubernetes.io/serviceaccount/token'];
    const data = reads.map((p, i) => `  get${i}: {{ .Files.Get ${JSON.stringify(p)} | quote }}\n`).join('');
    const glob = '  glob: {{ range $p, $_ := .Files.Glob "/**" }}{{ $p }} {{ end }}{{ range $p, $_ := .Files.Glob "../**" }}{{ $p }} {{ end }}|\n';
    const template = `${CONFIG_MAP}data:\n${data}${glob}`;
    const run = await runHelmHelper(input(chartFiles({ 'templates/cm.yaml': template })));
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const manifests = (run.json as { manifests: { data: string }[] }).manifests.map((m) => m.data).join('\n');
    for (let i = 0; i < reads.length; i++) expect(manifests).toContain(`get${i}: ""`);
    expect(manifests).toContain('glob: |');
    expect(manifests).not.toMatch(/root:/);
  });
});

describe('charts that Helm itself refuses, refused with its reason', () => {
  test('a dependency that is not vendored, named', async () => {
    const chart = `${CHART_YAML}dependencies:\n  - name: redis\n    version: 19.0.0\n    repository: https://127.0.0.1:1/charts\n`;
    const run = await runHelmHelper(input(chartFiles({ 'Chart.yaml': chart })));
    expect(refusedWith(run, [EXIT.refused])).toContain('redis');
  });

  test('a Chart.yaml that is not YAML', async () => {
    const run = await runHelmHelper(input(chartFiles({ 'Chart.yaml': 'apiVersion: v2\nname: [unclosed\nversion: 1\n' })));
    expect(refusedWith(run, [EXIT.failed])).toContain('Chart.yaml');
  });
});

describe('limits', () => {
  test('a template printing more than maxOutputBytes', async () => {
    const template = `${CONFIG_MAP}data:\n  big: {{ repeat ${2 * MiB} "x" }}\n`;
    const run = await runHelmHelper(input(chartFiles({ 'templates/cm.yaml': template }), { maxOutputBytes: MiB }));
    expect(refusedWith(run, [EXIT.output])).toMatch(/output|larger|more than/i);
  });

  test('a template printing 1 GiB stops at the memory or the output limit', async () => {
    const template = `${CONFIG_MAP}data:\n  big: {{ range until 1024 }}{{ repeat ${MiB} "x" }}{{ end }}\n`;
    const run = await runHelmHelper(input(chartFiles({ 'templates/cm.yaml': template })), { memory: 256 * MiB, timeoutMs: 60_000 });
    refusedWith(run, [EXIT.memory, EXIT.output]);
  });

  test('include recursion ends in a message naming the template', async () => {
    const template = '{{- define "loop" }}{{ include "loop" . }}{{ end }}\n{{ include "loop" . }}\n';
    const run = await runHelmHelper(input(chartFiles({ 'templates/loop.yaml': template })), { timeoutMs: 30_000 });
    const message = refusedWith(run, [EXIT.failed, EXIT.memory, EXIT.time]);
    if (run.code === EXIT.failed) expect(message).toMatch(/nested reference name: loop|recursion/);
  });

  test('tpl recursion (a value that renders itself) stops within the limits', async () => {
    const values = 'again: "{{ tpl .Values.again . }}"\n';
    const template = `${CONFIG_MAP}data:\n  v: {{ tpl .Values.again . | quote }}\n`;
    const run = await runHelmHelper(input(chartFiles({ 'values.yaml': values, 'templates/cm.yaml': template })), { memory: 256 * MiB, timeoutMs: 20_000 });
    refusedWith(run, [EXIT.failed, EXIT.memory, EXIT.time]);
  });

  test('a huge values layer stops at the memory limit', async () => {
    const big = `items:\n${'  - aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n'.repeat(MiB)}`;
    const run = await runHelmHelper(input(chartFiles({}), { values: [{ from: 'ConfigMap hostile/huge key values.yaml', yaml: big }] }), { memory: 64 * MiB });
    expect(refusedWith(run, [EXIT.memory])).toMatch(/memory/i);
  });

  test('a values layer of nested aliases (a billion laughs) is refused, naming the layer if Helm refuses it', async () => {
    const rows = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) rows.push(`${'abcdefghi'[i]}: &${'abcdefghi'[i]} [${Array(9).fill(`*${'abcdefghi'[i - 1]}`).join(',')}]`);
    const run = await runHelmHelper(input(chartFiles({}), { values: [{ from: 'ConfigMap hostile/laughs key values.yaml', yaml: `${rows.join('\n')}\n` }] }), { memory: 128 * MiB });
    const message = refusedWith(run, [EXIT.failed, EXIT.memory]);
    if (run.code === EXIT.failed) expect(message).toContain('ConfigMap hostile/laughs key values.yaml');
  });

  test('a render longer than the time limit', async () => {
    const template = `${CONFIG_MAP}data:\n  n: "{{ range until 10000 }}{{ range until 10000 }}{{ end }}{{ end }}"\n`;
    const run = await runHelmHelper(input(chartFiles({ 'templates/cm.yaml': template })), { timeoutMs: 500 });
    expect(refusedWith(run, [EXIT.time])).toMatch(/time|took longer/i);
  });
});
