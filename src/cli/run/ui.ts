import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { parseAddr } from '../../runtime/http-endpoints.js';
import { CliError, ExitCode, UsageError } from '../errors.js';
import { examples } from '../options.js';

/** Where `syncprims run --ui-addr 8082` (or a port-forward to it) serves the web view. */
export const DEFAULT_UI_ADDR = '127.0.0.1:8082';

interface UiFlags {
  addr: string;
  open?: boolean;
}

/** `syncprims ui`: checks that an operator serves the web view at an address, prints it (and opens it). */
export function addUiCommand(program: Command): void {
  const cmd = program
    .command('ui')
    .description("print (or --open) the address of the local operator's read-only web view, once it answers there")
    .option('--addr <addr>', 'where the operator serves it (`syncprims run --ui-addr`, or the local end of a port-forward)', DEFAULT_UI_ADDR)
    .option('--open', 'open it in the desktop browser (xdg-open or open)');
  cmd.addHelpText(
    'after',
    `
The view has no login of its own: it listens on loopback unless told otherwise. For an operator
in a cluster, add --ui-addr 8082 to its arguments and forward the port:
  kubectl -n syncprims-system port-forward deploy/syncprims-operator 8082`,
  );
  examples(cmd, ['syncprims ui', 'syncprims ui --addr 127.0.0.1:9000 --open']);
  cmd.action(ui);
}

async function ui(flags: UiFlags): Promise<void> {
  let url: string;
  try {
    const { host, port } = parseAddr(flags.addr);
    url = `http://${host ?? '127.0.0.1'}:${port}/`;
  } catch (err) {
    throw new UsageError(`--addr ${flags.addr}: ${(err as Error).message}`);
  }
  const view = await fetch(new URL('api/view', url), { signal: AbortSignal.timeout(5_000) })
    .then(async (res) => (res.ok ? ((await res.json()) as { view: { namespaces: { nodes: unknown[] }[] } }) : undefined))
    .catch(() => undefined);
  if (!view) {
    throw new CliError(`no syncprims web view answers at ${url}: start the operator with --ui-addr ${flags.addr}, or forward its port (kubectl port-forward)`, ExitCode.Unreachable);
  }
  const syncs = view.view.namespaces.reduce((n, ns) => n + ns.nodes.length, 0);
  const namespaces = view.view.namespaces.length;
  console.log(`${url} (${syncs} syncs in ${namespaces} namespace${namespaces === 1 ? '' : 's'})`);
  if (flags.open) openInBrowser(url);
}

function openInBrowser(url: string): void {
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
  child.on('error', (err) => console.error(`syncprims: cannot open a browser (${opener}: ${err.message}): open ${url} yourself`));
  child.unref();
}
