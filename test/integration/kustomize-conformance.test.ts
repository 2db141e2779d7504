// Lane: own clusters (none: this file reaches no cluster, so it runs beside the shared lane)
// The kustomize conformance set (issue 36): every kustomization under
// test/fixtures/kustomize/conformance/ renders through `syncprims build --path`
// to exactly what the local `kubectl kustomize` (v1.36, kustomize v5.8.1)
// prints for it: the helper's YAML byte for byte, and the objects
// `syncprims build` prints, its own marks (owner labels, the default
// namespace) aside. Together the cases use every field docs/source.md lists
// as supported. No cluster is needed.
import { beforeAll, describe, expect, jest, test } from '@jest/globals';
import { Command } from 'commander';
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { addBuildCommand } from '../../src/cli/build/build.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { buildKustomization } from '../../src/source/kustomize.js';
import { parseManifests } from '../../src/source/parse.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { LOCAL, ROOT } from '../support/controlplane.js';
import { inParallel, readTree, withoutBuildMarks } from './kustomize-support.js';

const KUBECTL = path.join(LOCAL, 'bin', 'kubectl');
const CASES_DIR = path.join(ROOT, 'test', 'fixtures', 'kustomize', 'conformance');
const CASES = readdirSync(CASES_DIR).sort();
const NAMESPACE = 'conformance';

const kubectlOutput = new Map<string, string>();

beforeAll(async () => {
  assertCliBuilt();
  // kubectl once per case, a few at a time.
  await inParallel(CASES, 4, async (name) => {
    const { stdout } = await promisify(execFile)(KUBECTL, ['kustomize', path.join(CASES_DIR, name)], { maxBuffer: 16 * 1024 * 1024 });
    kubectlOutput.set(name, stdout);
  });
}, 120_000);

const BUILD_ARGS = ['--owner', 'sync/conformance', '-n', NAMESPACE, '--default-namespace', NAMESPACE, '-o', 'json'];

/** `syncprims build --path DIR ...` run in this process (the CLI's own command, its output captured). */
async function syncprimsBuild(dir: string): Promise<string> {
  const program = new Command().exitOverride();
  addBuildCommand(program);
  const out: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => out.push(String(chunk)) > 0);
  try {
    await program.parseAsync(['build', '--path', dir, ...BUILD_ARGS], { from: 'user' });
  } finally {
    write.mockRestore();
  }
  return out.join('');
}

/** What kubectl printed, as objects, beside the objects syncprims build printed (less its own marks). */
function compared(name: string, printedJson: string): { expected: KubeObject[]; printed: KubeObject[] } {
  const expected = parseManifests(kubectlOutput.get(name) as string, 'kubectl kustomize');
  const printed = (JSON.parse(printedJson) as { items: KubeObject[] }).items.map((o) => withoutBuildMarks(o, NAMESPACE, expected));
  return { expected, printed };
}

describe('kustomize conformance: syncprims build renders what kubectl kustomize prints', () => {
  test('the set is large enough', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(25);
  });

  test.each(CASES)('%s', async (name) => {
    const dir = path.join(CASES_DIR, name);
    // Two empty outputs would be equal: each case renders something.
    expect(parseManifests(kubectlOutput.get(name) as string, 'kubectl kustomize').length).toBeGreaterThan(0);
    // The shared builder (the operator's and the CLI's): the same bytes.
    const yaml = await buildKustomization(readTree(dir), '', name, { maxObjects: 10_000, maxOutputBytes: 1 << 24 });
    expect(yaml).toBe(kubectlOutput.get(name));
    // syncprims build: the same objects, in the same order.
    const { expected, printed } = compared(name, await syncprimsBuild(dir));
    expect(printed).toEqual(expected);
  });

  test('the syncprims command itself, as a process, offline: an overlay whose base and component are outside the folder given', async () => {
    const overlay = path.join(ROOT, 'test', 'fixtures', 'kustomize', 'overlay', 'overlays', 'prod');
    const [cli, kubectl] = await Promise.all([
      runCli(['build', '--path', overlay, ...BUILD_ARGS]),
      promisify(execFile)(KUBECTL, ['kustomize', overlay]),
    ]);
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    kubectlOutput.set('overlays/prod', kubectl.stdout);
    const { expected, printed } = compared('overlays/prod', cli.stdout);
    expect(printed.map((o) => o.metadata.name)).toEqual(['prod-app-config-bg9h65b2f2', 'prod-dashboard', 'prod-web', 'prod-web']);
    expect(printed).toEqual(expected);
  });
});
