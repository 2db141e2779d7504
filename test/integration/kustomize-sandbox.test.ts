// Lane: own clusters (none: this file reaches no cluster, so it runs beside the shared lane)
// The kustomize sandbox (issue 36): what a kustomization may not do is
// refused with a message naming its file and field; cycles, nesting and bombs
// stop within the limits; the helper's memory is drawn from the source budget.
// Runs the helper that `make build` builds (dist/kustomize/); no cluster.
import { describe, expect, test } from '@jest/globals';
import { ByteBudget, buildKustomizations, DEFAULT_SOURCE_LIMITS, extractTarGz, SourceError, type ArchiveFiles } from '../../src/source/index.js';
import { keepForKustomize, kustomizeArchive } from '../../src/source/kustomize-archive.js';
import { manifestFilter } from '../../src/source/select.js';
import { tarGz } from '../support/tarball.js';
import { KUSTOMIZE_BASE_MEMORY } from '../../src/source/kustomize.js';

const OPTS = { maxObjects: 10_000, maxOutputBytes: 64 << 20 };

function filesOf(tree: Record<string, string>): ArchiveFiles {
  return new Map(Object.entries(tree).map(([p, text]) => [p, Buffer.from(text)]));
}

async function refusal(tree: Record<string, string>, dir: string, opts: Partial<typeof OPTS> & { timeoutMs?: number } = {}): Promise<string> {
  const err = await buildKustomizations(filesOf(tree), [dir], 'https://example.test/app.tgz', { ...OPTS, ...opts }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SourceError);
  return (err as Error).message;
}

const CONFIG_MAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  k: v\n';
const BASE = { 'base/kustomization.yaml': 'resources:\n- cm.yaml\n', 'base/cm.yaml': CONFIG_MAP };

describe('refused, naming the kustomization file and the field', () => {
  test('a remote base: a git repository, an https URL', async () => {
    const git = await refusal({ ...BASE, 'prod/kustomization.yaml': 'resources:\n- ../base\n- github.com/example/deploy//base?ref=v1\n' }, 'prod');
    expect(git).toBe(
      'https://example.test/app.tgz: prod/kustomization.yaml: resources[1]: "github.com/example/deploy//base?ref=v1" is a remote base (a git repository or a URL); ' +
        'only the source\'s own files can be used: vendor it into the source; refused (kustomize runs in a sandbox: docs/source.md, Kustomize)',
    );
    const url = await refusal({ ...BASE, 'prod/kustomization.yaml': 'resources:\n- ../base\n- https://127.0.0.2:1/app.yaml\n' }, 'prod');
    expect(url).toContain('prod/kustomization.yaml: resources[1]: "https://127.0.0.2:1/app.yaml" is a remote base');
    const base = await refusal({ 'prod/kustomization.yaml': 'bases:\n- git@github.com:example/deploy.git\n' }, 'prod');
    expect(base).toContain('prod/kustomization.yaml: bases[0]: "git@github.com:example/deploy.git" is a remote base');
  });

  test('a remote file in a field that names one', async () => {
    const msg = await refusal({ ...BASE, 'prod/kustomization.yaml': 'resources:\n- ../base\npatches:\n- path: https://127.0.0.2:1/patch.yaml\n' }, 'prod');
    expect(msg).toContain('prod/kustomization.yaml: patches[0].path: "https://127.0.0.2:1/patch.yaml" is a remote file');
  });

  test('an exec plugin, a container function, a plugin that is not a builtin', async () => {
    const exec = 'apiVersion: example.com/v1\nkind: Sops\nmetadata:\n  name: s\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./decrypt\n';
    const msg = await refusal({ ...BASE, 'base/kustomization.yaml': 'resources:\n- cm.yaml\ngenerators:\n- sops.yaml\n', 'base/sops.yaml': exec }, 'base');
    expect(msg).toContain('base/kustomization.yaml: generators[0]: Sops is a KRM function plugin (config.kubernetes.io/function: exec or container)');
    const container = exec.replace('exec:\n        path: ./decrypt', 'container:\n        image: example.com/fn:v1');
    const inline = `resources:\n- cm.yaml\ntransformers:\n- |-\n${container.replace(/^/gm, '  ')}\n`;
    expect(await refusal({ ...BASE, 'base/kustomization.yaml': inline }, 'base')).toContain('base/kustomization.yaml: transformers[0]: Sops is a KRM function plugin');
    const goPlugin = 'apiVersion: example.com/v1\nkind: Rot13\nmetadata:\n  name: r\n';
    const msg2 = await refusal({ ...BASE, 'base/kustomization.yaml': 'resources:\n- cm.yaml\ntransformers:\n- rot.yaml\n', 'base/rot.yaml': goPlugin }, 'base');
    expect(msg2).toContain("base/kustomization.yaml: transformers[0]: Rot13 is not one of kustomize's builtin plugins");
  });

  test('helmCharts (it needs the helm program)', async () => {
    const msg = await refusal({ 'app/kustomization.yaml': 'helmCharts:\n- name: redis\n  repo: https://127.0.0.2:1/charts\n  version: 1.0.0\n' }, 'app');
    expect(msg).toContain('app/kustomization.yaml: helmCharts: helm charts are not supported (they need the helm program)');
  });
});

describe('hostile kustomizations stop within the limits', () => {
  test('a cycle of bases, named in full', async () => {
    const msg = await refusal({ 'a/kustomization.yaml': 'resources:\n- ../b\n', 'b/kustomization.yaml': 'resources:\n- ../c\n', 'c/kustomization.yaml': 'resources:\n- ../a\n' }, 'a');
    expect(msg).toContain('c/kustomization.yaml: resources: a cycle of bases: a -> b -> c -> a');
  });

  test('bases nested too deep', async () => {
    const tree: Record<string, string> = { 'l40/kustomization.yaml': 'resources:\n- cm.yaml\n', 'l40/cm.yaml': CONFIG_MAP };
    for (let i = 0; i < 40; i++) tree[`l${i}/kustomization.yaml`] = `resources:\n- ../l${i + 1}\n`;
    expect(await refusal(tree, 'l0')).toContain('resources: bases nested more than 20 deep (l0 -> ...)');
  });

  test('a patch bomb (each patch doubles the object) stops at the memory limit', async () => {
    const ops = Array.from({ length: 40 }, () => '    - op: copy\n      from: /spec/l\n      path: /spec/l/-\n').join('');
    const tree = {
      'bomb/kustomization.yaml': `resources:\n- widget.yaml\npatches:\n- target:\n    kind: Widget\n  patch: |-\n${ops}`,
      'bomb/widget.yaml': `apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: bomb\nspec:\n  l: ["${'x'.repeat(1024)}"]\n`,
    };
    const msg = await refusal(tree, 'bomb');
    expect(msg).toMatch(/^https:\/\/example.test\/app.tgz: kustomize build bomb: the build needed more than \d+ MiB of memory \(the kustomize limit\); refused$/);
  });

  test('a build past the time limit is stopped', async () => {
    const many = Array.from({ length: 3000 }, (_, i) => CONFIG_MAP.replace('name: app', `name: app-${i}`)).join('---\n');
    const msg = await refusal({ 'slow/kustomization.yaml': 'resources:\n- all.yaml\nnamePrefix: p-\n', 'slow/all.yaml': many }, 'slow', { timeoutMs: 1 });
    expect(msg).toContain('kustomize build slow: the build took longer than 1ms (the kustomize time limit); refused');
  });
});

describe('memory from the source budget', () => {
  test('the helper takes its memory from the lease while it runs, and gives it back', async () => {
    const budget = new ByteBudget(256 << 20);
    const lease = budget.lease('app.tgz');
    const files = filesOf({ ...BASE, 'prod/kustomization.yaml': 'resources:\n- ../base\nnamePrefix: prod-\n' });
    let held = 0;
    const building = buildKustomizations(files, ['prod'], 'app.tgz', { ...OPTS, lease });
    await new Promise((resolve) => setImmediate(resolve));
    held = budget.inUse;
    const objects = await building;
    expect(objects.map((o) => o.metadata.name)).toEqual(['prod-app']);
    expect(held).toBeGreaterThanOrEqual(KUSTOMIZE_BASE_MEMORY);
    expect(budget.inUse).toBe(0);
  });

  test('a build that could never fit in the budget is refused before it starts', async () => {
    const lease = new ByteBudget(32 << 20).lease('app.tgz');
    const err = await buildKustomizations(filesOf(BASE), ['base'], 'app.tgz', { ...OPTS, lease }).catch((e: unknown) => e);
    expect((err as Error).message).toContain("app.tgz: more than 32 MiB to hold in memory at once (fetched bytes and the manifest files to parse; the operator's memory budget for sources)");
  });

  test("an archive's files that no build can reach are neither kept nor given to the helper", async () => {
    const tree = { ...BASE, 'prod/kustomization.yaml': 'resources:\n- ../base\nnamePrefix: prod-\n', 'media/video.bin': Buffer.alloc(16 << 20) };
    const data = await tarGz(Object.entries(tree).map(([name, content]) => ({ name, data: content })));
    // Room for the helper and the overlay, not for the video as well.
    const lease = new ByteBudget(KUSTOMIZE_BASE_MEMORY + (4 << 20)).lease('a.tgz');
    const kept = await extractTarGz(data, DEFAULT_SOURCE_LIMITS, 'a.tgz', { keep: keepForKustomize(manifestFilter(['prod'])), lease });
    const objects = await kustomizeArchive({ data, kept, dirs: ['prod'], label: 'a.tgz', limits: { ...DEFAULT_SOURCE_LIMITS }, maxObjects: 100, lease });
    expect(objects.map((o) => o.metadata.name)).toEqual(['prod-app']);
  });
});
