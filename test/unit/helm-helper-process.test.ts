// renderChart's side of the Helm helper's protocol (helm/PROTOCOL.md),
// against stand-in helpers (shell scripts at SYNCPRIMS_HELM_HELPER): what it
// writes on the helper's stdin (the chart folder's files only, the request),
// the flags it gives, the memory it takes from the lease and gives back, and
// each exit code turned into its SourceError. The real helper is run by
// test/integration/helm.test.ts.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ByteBudget } from '../../src/source/budget.js';
import { HELM_BASE_MEMORY, renderChart, type ChartRenderRequest } from '../../src/source/helm.js';
import { SourceError } from '../../src/source/index.js';

let dir: string;
const before = process.env.SYNCPRIMS_HELM_HELPER;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'helm-helper-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  if (before === undefined) delete process.env.SYNCPRIMS_HELM_HELPER;
  else process.env.SYNCPRIMS_HELM_HELPER = before;
});

/** A helper that keeps its stdin and arguments, prints `stdout` and `stderr`, and exits with `code`. */
function helper(name: string, body: { stdout?: string; stderr?: string; code?: number }): { input: () => string; args: () => string } {
  const script = path.join(dir, name);
  const input = path.join(dir, `${name}.in`);
  const args = path.join(dir, `${name}.args`);
  writeFileSync(
    script,
    [
      '#!/bin/sh',
      `echo "$@" > '${args}'`,
      `/bin/cat > '${input}'`,
      body.stdout !== undefined ? `printf '%s' '${body.stdout}'` : '',
      body.stderr !== undefined ? `printf '%s\\n' '${body.stderr}' >&2` : '',
      `exit ${body.code ?? 0}`,
    ].join('\n'),
  );
  chmodSync(script, 0o755);
  process.env.SYNCPRIMS_HELM_HELPER = script;
  return { input: () => readFileSync(input, 'utf8'), args: () => readFileSync(args, 'utf8').trim() };
}

const files = new Map([
  ['web/Chart.yaml', Buffer.from('apiVersion: v2\nname: web\nversion: 1.0.0\n')],
  ['web/templates/cm.yaml', Buffer.from('kind: ConfigMap')],
  ['other/x.yaml', Buffer.from('never sent')],
]);
const request: ChartRenderRequest = {
  chart: 'web',
  releaseName: 'web',
  namespace: 'apps',
  values: [{ from: 'ConfigMap apps/v key values.yaml', yaml: 'a: 1\n' }, { from: 'spec.helm.values', object: { b: 2 } }],
  includeCRDs: true,
};
const opts = { label: 'https://charts.test/web.tgz', maxOutputBytes: 1 << 20 };
const ANSWER = JSON.stringify({
  chart: { name: 'web', version: '1.0.0' },
  crds: [],
  manifests: [{ path: 'web/templates/cm.yaml', data: 'kind: ConfigMap' }],
  hooks: [{ path: 'web/templates/job.yaml', data: 'kind: Job', events: ['pre-install'], weight: 1, deletePolicies: [] }],
  walls: { noNewPrivs: true, seccomp: true, landlock: 6, landlockNet: true },
});

describe('renderChart and a helper', () => {
  test("writes the chart folder's files and the request, gives the limits as flags, and parses the answer; the lease given back", async () => {
    const h = helper('ok', { stdout: ANSWER });
    const budget = new ByteBudget(256 << 20);
    const lease = budget.lease('web');
    const answer = await renderChart(files, request, { ...opts, lease });
    expect(answer.manifests).toEqual([{ path: 'web/templates/cm.yaml', data: 'kind: ConfigMap' }]);
    expect(answer.hooks[0]?.events).toEqual(['pre-install']);
    const sent = JSON.parse(h.input()) as Record<string, unknown>;
    expect(Object.keys(sent.files as object)).toEqual(['web/Chart.yaml', 'web/templates/cm.yaml']);
    expect(Buffer.from((sent.files as Record<string, string>)['web/Chart.yaml']!, 'base64').toString()).toMatch(/^apiVersion: v2/);
    expect({ ...sent, files: undefined }).toEqual({ ...request, files: undefined, kubeVersion: '', apiVersions: [], maxOutputBytes: 1 << 20 });
    const [flag, memory, timeoutFlag, timeout] = h.args().split(' ');
    expect([flag, timeoutFlag, timeout]).toEqual(['-memory', '-timeout', '30000ms']);
    expect(Number(memory)).toBeGreaterThan(HELM_BASE_MEMORY);
    expect(lease.held).toBe(0);
    expect(budget.inUse).toBe(0);
  });

  const failures: [number, string, RegExp][] = [
    [10, 'values.schema.json: $ref to file:///etc/passwd leaves the chart', /^https:\/\/charts\.test\/web\.tgz: values\.schema\.json: \$ref to file:\/\/\/etc\/passwd leaves the chart; refused \(charts render in a sandbox: docs\/source\.md, Helm\)$/],
    [11, 'template: web/templates/cm.yaml:3: function "nope" not defined', /^https:\/\/charts\.test\/web\.tgz: helm template web: template: web\/templates\/cm\.yaml:3: function "nope" not defined$/],
    [12, 'used more than 40 MiB (the memory limit); refused', /^https:\/\/charts\.test\/web\.tgz: helm template web: used more than 40 MiB/],
    [13, 'took longer than 30 s (the time limit); refused', /^https:\/\/charts\.test\/web\.tgz: helm template web: took longer than 30 s/],
    [14, 'printed more than 1 MiB; refused', /^https:\/\/charts\.test\/web\.tgz: helm template web: printed more than 1 MiB; refused$/],
    [2, 'panic: runtime error', /^https:\/\/charts\.test\/web\.tgz: helm template web: the helm helper ended \(exit 2\): panic: runtime error; refused$/],
  ];

  test.each(failures)('exit %i is a SourceError with the helper\'s message in context', async (code, stderr, message) => {
    helper(`exit-${code}`, { stderr, code });
    const err = await renderChart(files, request, opts).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(SourceError);
    expect((err as Error).message).toMatch(message);
  });

  test('an answer of another shape, and a missing helper, say what to do', async () => {
    helper('odd', { stdout: '{"chart":{}}' });
    await expect(renderChart(files, request, opts)).rejects.toThrow(/answered something other than a rendered chart .*make build builds it/);
    process.env.SYNCPRIMS_HELM_HELPER = path.join(dir, 'absent');
    await expect(renderChart(files, request, opts)).rejects.toThrow(/: the helm helper .*absent is missing \(make build builds it\)$/);
  });
});
