import { Option, type Command } from 'commander';
import { ExitCode } from './errors.js';

/** The flags every command shares, declared once so that they read the same everywhere. */

export const OUTPUT_FORMATS = ['table', 'yaml', 'json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** `--kubeconfig`, `--context` and `-n/--namespace`; `help` words them for a command whose use of them differs. */
export function clusterOptions(cmd: Command, help: { kubeconfig?: string; namespace?: string } = {}): Command {
  return cmd
    .option('--kubeconfig <file>', help.kubeconfig ?? 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'kubeconfig context (default: its current context)')
    .option('-n, --namespace <ns>', help.namespace ?? 'the namespace (default: the context\'s, else "default")');
}

/** `--operator-namespace`: where the operator's Leases are, for what reads its sharding Leases (`what`: get clusters' SHARD, doctor's checks). */
export function operatorNamespaceOption(cmd: Command, what = 'SHARD'): Command {
  return cmd.option(
    '--operator-namespace <ns>',
    `the operator's namespace, where its Leases are (its --leader-election-namespace, install's -n), for ${what} (default: syncprims-system)`,
  );
}

/** `-A/--all-namespaces`, for commands that list. */
export function allNamespacesOption(cmd: Command): Command {
  return cmd.option('-A, --all-namespaces', 'every namespace (adds a NAMESPACE column)');
}

/** `-o/--output`, for commands that print objects. */
export function outputOption(cmd: Command, formats: readonly OutputFormat[] = OUTPUT_FORMATS, fallback: OutputFormat = 'table'): Command {
  return cmd.addOption(new Option('-o, --output <format>', 'output format').choices(formats).default(fallback));
}

/** The examples shown after a command's `--help`, and the exit codes. */
export function examples(cmd: Command, lines: string[]): Command {
  const text = [
    '',
    'Examples:',
    ...lines.map((l) => (l.startsWith('#') || l === '' ? `  ${l}` : `  $ ${l}`)),
    '',
    `Exit codes: ${ExitCode.Ok} ok, ${ExitCode.Failure} a failure, ${ExitCode.Usage} bad usage, ${ExitCode.Unreachable} the cluster could not be reached.`,
  ].join('\n');
  return cmd.addHelpText('after', text);
}
