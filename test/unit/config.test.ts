import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadKubeConfigFile } from '../../src/kube/config.js';

const dir = mkdtempSync(path.join(tmpdir(), 'syncprims-kubeconfig-'));
const write = (name: string, text: string): string => {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
};

describe('loadKubeConfigFile', () => {
  test('names a missing file', () => {
    expect(() => loadKubeConfigFile(path.join(dir, 'absent'))).toThrow(`cannot read kubeconfig ${dir}/absent: no such file`);
  });

  test('names a file that is not a kubeconfig', () => {
    const file = write('broken', 'clusters: [unclosed');
    expect(() => loadKubeConfigFile(file)).toThrow(`kubeconfig ${file} is not valid:`);
  });

  test('refuses a kubeconfig without a current cluster', () => {
    const file = write('empty', 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    expect(() => loadKubeConfigFile(file)).toThrow('has no current context with a cluster');
  });

  test('loads a valid one', () => {
    const file = write(
      'ok',
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:6441"}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ].join('\n'),
    );
    expect(loadKubeConfigFile(file).getCurrentCluster()?.server).toBe('https://127.0.0.1:6441');
  });
});
