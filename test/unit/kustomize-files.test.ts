// Which selected folders are kustomizations to build, and which files are still read as manifests (issue 36).
import { describe, expect, test } from '@jest/globals';
import path from 'node:path';
import { selectSource, SourceError, type ArchiveFiles } from '../../src/source/index.js';
import { isKustomizationFile, kustomizationRoots, reachableFolders } from '../../src/source/kustomize-files.js';

const files: ArchiveFiles = new Map(
  [
    'README.md',
    'base/kustomization.yaml',
    'base/deploy.yaml',
    'base/patches/extra.yaml',
    'overlays/prod/kustomization.yml',
    'overlays/prod/replicas.yaml',
    'overlays/dev/Kustomization',
    'overlays/notes.yaml',
    'plain/cm.yaml',
    'plain/deep/secret.json',
  ].map((p) => [p, Buffer.from(`# ${p}\n`)]),
);

describe('kustomization files and roots', () => {
  test('the three names kustomize recognizes, and no other', () => {
    expect(['a/kustomization.yaml', 'kustomization.yml', 'x/Kustomization'].map(isKustomizationFile)).toEqual([true, true, true]);
    expect(['a/kustomization.json', 'Kustomization.yaml', 'a/kustomizations.yaml'].map(isKustomizationFile)).toEqual([false, false, false]);
  });

  test('the topmost folders holding one, at or below the folder given; none for a file', () => {
    expect(kustomizationRoots(files.keys(), '')).toEqual(['base', 'overlays/dev', 'overlays/prod']);
    expect(kustomizationRoots(files.keys(), 'overlays')).toEqual(['overlays/dev', 'overlays/prod']);
    expect(kustomizationRoots(['a/kustomization.yaml', 'a/b/kustomization.yaml', 'ab/kustomization.yaml'], 'a')).toEqual(['a']);
    expect(kustomizationRoots(files.keys(), 'plain')).toEqual([]);
    expect(kustomizationRoots(files.keys(), undefined)).toEqual([]);
  });
});

describe('selectSource', () => {
  const select = (paths?: string[]) => {
    const s = selectSource(files, paths, 'a.tgz');
    return { manifests: s.manifests.map((f) => f.path), kustomizations: s.kustomizations };
  };

  test('a selected folder holding a kustomization is built; its files are not read', () => {
    expect(select(['overlays/prod'])).toEqual({ manifests: [], kustomizations: ['overlays/prod'] });
    expect(select(['overlays/prod/kustomization.yml'])).toEqual({ manifests: [], kustomizations: ['overlays/prod'] });
  });

  test('files outside any kustomization are read as today, beside the kustomizations', () => {
    expect(select(['overlays/prod', 'plain'])).toEqual({ manifests: ['plain/cm.yaml', 'plain/deep/secret.json'], kustomizations: ['overlays/prod'] });
    expect(select(['overlays'])).toEqual({ manifests: ['overlays/notes.yaml'], kustomizations: ['overlays/dev', 'overlays/prod'] });
    expect(select()).toEqual({ manifests: ['overlays/notes.yaml', 'plain/cm.yaml', 'plain/deep/secret.json'], kustomizations: ['base', 'overlays/dev', 'overlays/prod'] });
  });

  test('a file inside a kustomization named on its own is read as a file; a folder of nothing is still an error', () => {
    expect(select(['base/deploy.yaml'])).toEqual({ manifests: ['base/deploy.yaml'], kustomizations: [] });
    expect(() => select(['nothing'])).toThrow(SourceError);
  });
});

describe('reachableFolders: what a build can read', () => {
  const tree: Record<string, string> = {
    'apps/prod/kustomization.yaml': 'resources:\n- ../../bases/web\n- cm.yaml\n- ../shared/ns.yaml\ncomponents:\n- ../../components/mon\ntransformers:\n- |-\n  apiVersion: builtin\n  kind: LabelTransformer\n',
    'bases/web/kustomization.yaml': 'bases:\n- ../common\n- github.com/example/x//y?ref=v1\n',
    'bases/common/Kustomization': 'resources:\n- ../web\n',
    'components/mon/kustomization.yaml': 'kind: Component\n',
    'apps/shared/ns.yaml': '',
    'unrelated/kustomization.yaml': 'resources: []\n',
  };
  const archive = {
    kind: async (p: string) => (p in tree ? ('file' as const) : Object.keys(tree).some((f) => f.startsWith(`${p}/`)) ? ('folder' as const) : undefined),
    read: async (p: string) => tree[p],
  };
  const resolve = (dir: string, entry: string): string | undefined => {
    const joined = path.posix.normalize(path.posix.join(dir, entry));
    return joined.startsWith('..') ? undefined : joined;
  };

  test('the folders its kustomizations include, transitively (cycles followed once), and the files they name outside them', async () => {
    const { folders, files } = await reachableFolders(['apps/prod'], archive, resolve);
    expect(folders.sort()).toEqual(['apps/prod', 'bases/common', 'bases/web', 'components/mon']);
    expect(files).toEqual(['apps/shared/ns.yaml']);
  });
});
