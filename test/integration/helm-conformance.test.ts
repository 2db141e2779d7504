// Lane: own clusters (none: this file reaches no cluster, so it runs beside the shared lane)
// Helm conformance (issue 47): every chart case under test/fixtures/helm/conformance/
// renders through our helper (dist/helm/syncprims-helm, PROTOCOL.md) to what
// `helm template` prints for it, the helm CLI being built from the helper's own
// Go module (helm v4.3.2). Compared, object for object (YAML 1.1, empty documents
// left out), each with the chart file it came from:
// - our crds then manifests, in order, against helm template's documents that
//   are not hooks, in the order it prints them (its CRDs of crds/, then the
//   manifests in install order);
// - our hooks (every one, test hooks too), as a multiset, against its hook
//   documents, their events, weight and delete policies read from their
//   annotations as Helm reads them;
// - our `chart` against the case's Chart.yaml.
// An error case: both fail, helm template's message and our first stderr line
// (the message, PROTOCOL.md) each saying what the case expects.
import { beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import {
  asMultiset,
  assertHelmCli,
  caseNames,
  firstLine,
  helmObjects,
  helmTemplate,
  helperInput,
  ourObjects,
  readCase,
  type CliRun,
  type HelmCase,
  type HelperOutput,
} from '../support/helm-cases.js';
import { runHelmHelper, type HelmHelperResult } from '../support/helm-helper.js';

const CASES = caseNames();

interface Both {
  helm: CliRun;
  ours: HelmHelperResult;
}

const runs = new Map<string, Both>();

async function renderBoth(c: HelmCase): Promise<Both> {
  const [helm, ours] = await Promise.all([helmTemplate(c), runHelmHelper(helperInput(c), { timeoutMs: 20_000 })]);
  return { helm, ours };
}

beforeAll(async () => {
  assertHelmCli();
  // Two at a time: the machine has two cores, and each run is two short-lived processes.
  const queue = [...CASES];
  const worker = async (): Promise<void> => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) runs.set(name, await renderBoth(readCase(name)));
  };
  await Promise.all([worker(), worker()]);
}, 170_000);

function expectRefusedAlike(c: HelmCase, { helm, ours }: Both): void {
  const expected = c.expectError as NonNullable<HelmCase['expectError']>;
  expect({ code: helm.code === 0 ? 0 : 'failed', stderr: helm.stderr }).toEqual({ code: 'failed', stderr: expect.stringMatching(expected.helm) });
  expect({ code: ours.code, message: firstLine(ours.stderr) }).toEqual({ code: c.expectExit, message: expect.stringMatching(expected.ours) });
}

function expectRenderedAlike(c: HelmCase, { helm, ours }: Both): void {
  // (stderr shown when a code is not 0)
  expect({ code: helm.code, stderr: helm.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
  expect({ code: ours.code, stderr: ours.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
  const theirs = helmObjects(helm.stdout);
  // Two empty outputs would be equal: each case renders something.
  expect(theirs.length).toBeGreaterThan(0);
  const out = ours.json as HelperOutput;
  const mine = ourObjects(out);
  expect(mine.sequence).toEqual(theirs.filter((r) => !r.hook));
  expect(asMultiset(mine.hooks)).toEqual(asMultiset(theirs.filter((r) => r.hook)));
  if (!c.includeCRDs) expect(out.crds).toEqual([]);
  const meta = parse(readFileSync(path.join(c.dir, c.chart, 'Chart.yaml'), 'utf8')) as { name: string; version: string; appVersion?: string };
  expect({ name: out.chart.name, version: out.chart.version }).toEqual({ name: meta.name, version: meta.version });
  if (meta.appVersion !== undefined) expect(out.chart.appVersion).toBe(String(meta.appVersion));
}

describe('helm conformance: our helper renders what helm template prints', () => {
  test('the set is large enough, with error cases beside the rendered ones', () => {
    const cases = CASES.map(readCase);
    expect(cases.filter((c) => !c.expectError).length).toBeGreaterThanOrEqual(25);
    expect(cases.filter((c) => c.expectError).length).toBeGreaterThanOrEqual(5);
  });

  test.each(CASES)('%s', (name) => {
    const c = readCase(name);
    const both = runs.get(name) as Both;
    if (c.expectError) expectRefusedAlike(c, both);
    else expectRenderedAlike(c, both);
  });
});
