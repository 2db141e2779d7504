#!/usr/bin/env node
import { Command } from 'commander';
import { packageVersion } from '../version.js';
import { addBootstrapCommand } from './install/bootstrap.js';
import { addBuildCommand } from './build/build.js';
import { addClusterCommand } from './cluster/cluster.js';
import { addDiffCommand } from './diff/diff.js';
import { addDoctorCommand } from './doctor/doctor.js';
import { addGraphCommand } from './graph/graph.js';
import { addEventsCommand } from './events/events.js';
import { addDriveCommands } from './drive/drive.js';
import { addRolloutCommand } from './rollout/rollout.js';
import { errorLine, exitCodeOf } from './errors.js';
import { addGetCommand } from './get/get.js';
import { addInstallCommand } from './install/install.js';
import { addJoinCommand } from './join/join.js';
import { examples } from './options.js';
import { addRunCommand } from './run/run.js';
import { installOutputFilters } from './sanitize.js';
import { addTraceCommand } from './trace/trace.js';
import { addTreeCommand } from './tree/tree.js';
import { addUiCommand } from './run/ui.js';

// A reader that stops early (`| head`) is no error of ours.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

// Nothing from a cluster drives the terminal: escape sequences and control characters are filtered out of all output.
installOutputFilters();

const program = new Command()
  .name('syncprims')
  .description('Sync, RemoteSync and ProxySync: manifests applied in dependency order, across clusters')
  .version(packageVersion())
  // Usage errors are thrown (and exit 2), not exited on; set before the commands, which inherit it.
  .exitOverride()
  .showHelpAfterError('(add --help for usage)');

const version = program
  .command('version')
  .description('print the version of syncprims and, with --kubeconfig, of the cluster')
  .option('--kubeconfig <file>', 'kubeconfig of the cluster to ask')
  .option('--context <name>', 'kubeconfig context (default: its current context)')
  .action(async (opts: { kubeconfig?: string; context?: string }) => {
    console.log(`syncprims ${packageVersion()}`);
    if (!opts.kubeconfig && !opts.context) return;
    const { withCluster } = await import('./cluster.js');
    await withCluster(opts, async ({ client }) => {
      const v = await client.request<{ gitVersion: string }>({ path: '/version', timeoutMs: 10_000 });
      console.log(`server ${v.gitVersion} at ${client.server.origin}`);
    });
  });
examples(version, ['syncprims version --kubeconfig ~/.kube/config']);

addGetCommand(program);
addBuildCommand(program);
addGraphCommand(program);
addDoctorCommand(program);
addTreeCommand(program);
addTraceCommand(program);
addDiffCommand(program);
addEventsCommand(program);
addDriveCommands(program);
addRolloutCommand(program);
addClusterCommand(program);
addInstallCommand(program);
addJoinCommand(program);
addBootstrapCommand(program);
addRunCommand(program);
addUiCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  const code = exitCodeOf(err);
  // Commander has printed its own message (and help) already.
  if (!(err instanceof Error && err.name === 'CommanderError')) console.error(`syncprims: ${errorLine(err)}`);
  process.exitCode = code;
}
