#!/usr/bin/env node
import { Command } from 'commander';
import { KubeClient } from '../kube/client.js';
import { loadKubeConfigFile } from '../kube/config.js';
import { packageVersion } from '../version.js';
import { addRunCommand } from './run.js';

const program = new Command()
  .name('syncprims')
  .description('Sync, RemoteSync and ProxySync: manifests applied in dependency order, across clusters')
  .version(packageVersion());

program
  .command('version')
  .description('print the version of syncprims and, with --kubeconfig, of the cluster')
  .option('--kubeconfig <file>', 'kubeconfig of the cluster to ask')
  .action(async (opts: { kubeconfig?: string }) => {
    console.log(`syncprims ${packageVersion()}`);
    if (!opts.kubeconfig) return;
    const kc = loadKubeConfigFile(opts.kubeconfig);
    const client = await KubeClient.create(kc.getCurrentContext(), kc);
    try {
      const v = await client.request<{ gitVersion: string }>({ path: '/version', timeoutMs: 10_000 });
      console.log(`server ${v.gitVersion} at ${client.server.origin}`);
    } finally {
      client.close();
    }
  });

addRunCommand(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`syncprims: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
