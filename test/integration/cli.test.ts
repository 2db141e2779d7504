// The `syncprims` binary as users run it (built to dist/ by `make build`).
import { describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ensureClusters, kubeconfigPath, ROOT } from '../support/controlplane.js';

const run = promisify(execFile);
const CLI = path.join(ROOT, 'dist', 'cli', 'main.js');

describe('syncprims CLI', () => {
  test('version prints its own version and the cluster it asks', async () => {
    await ensureClusters(['mgmt']);
    const { stdout } = await run('node', [CLI, 'version', '--kubeconfig', kubeconfigPath('mgmt')]);
    expect(stdout).toMatch(/^syncprims \d+\.\d+\.\d+\nserver v1\.36\.3 at https:\/\/127\.0\.0\.1:6441\n$/);
  });

  test('a missing kubeconfig ends in a clear error and a non-zero exit', async () => {
    const err = await run('node', [CLI, 'version', '--kubeconfig', '/nonexistent/kubeconfig']).catch(
      (e: unknown) => e as { code: number; stderr: string },
    );
    expect(err).toMatchObject({ code: 1 });
    expect((err as { stderr: string }).stderr).toBe('syncprims: cannot read kubeconfig /nonexistent/kubeconfig: no such file\n');
  });

  test.each([
    ['--source-memory-budget', '4', 'want a whole number of MiB, at least 8'],
    ['--source-max-objects', '0', 'want a whole number of objects, at least 1'],
    ['--source-max-files', '1.5', 'want a whole number of files, at least 1'],
    ['--source-max-fetched', '-1', 'want a whole number of MiB, at least 1'],
    ['--source-fetch-timeout', '0s', 'want a duration above 0'],
    ['--source-fetch-timeout', '60', 'invalid duration "60": must be a duration such as 30s'],
    ['--upstream-lease-duration', '2s', 'want whole seconds, at least 3s'],
    ['--upstream-lease-duration', '3500ms', 'want whole seconds, at least 3s'],
  ])('run refuses %s %s before it starts', async (flag, value, why) => {
    await ensureClusters(['mgmt']);
    const err = await run('node', [CLI, 'run', '--kubeconfig', kubeconfigPath('mgmt'), flag, value], { timeout: 60_000 }).catch((e: unknown) => e as { code: number; stderr: string });
    expect(err).toMatchObject({ code: 1 });
    expect((err as { stderr: string }).stderr).toContain(`${flag} ${value}: ${why}`);
  });
  test.each([['install'], ['bootstrap']])('%s --replicas: checked before any cluster is asked, as one number for both', async (command) => {
    const err = await run('node', [CLI, command, '--replicas', '0', '--kubeconfig', '/nonexistent/kubeconfig']).catch((e: unknown) => e as { code: number; stderr: string });
    expect(err).toMatchObject({ code: 2 });
    expect((err as { stderr: string }).stderr).toContain('--replicas 0: want a whole number of replicas, at least 1');
  });

  test('install --replicas 3 prints a Deployment of three sharded replicas', async () => {
    const { stdout } = await run('node', [CLI, 'install', '--replicas', '3', '-o', 'json']);
    const deployment = (JSON.parse(stdout) as { items: { kind: string; spec: { replicas: number; template: { spec: { containers: { args: string[] }[] } } } }[] }).items.find((o) => o.kind === 'Deployment');
    expect(deployment?.spec.replicas).toBe(3);
    expect(deployment?.spec.template.spec.containers[0]?.args).toEqual(expect.arrayContaining(['--shards']));
    expect(deployment?.spec.template.spec.containers[0]?.args).not.toContain('--leader-elect');
  });
});
