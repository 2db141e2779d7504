// client-node's KubeConfig (dist/config.js) imports the whole generated API
// (dist/gen/index.js: every model and API class, about 60 MiB of RSS and 24
// MiB of heap, bench/module-memory.ts) for two helpers that only its
// makeApiClient uses. The operator never calls makeApiClient: its requests go
// through src/kube/client.ts. registerLeanClientNode() points that one import
// at a module holding just those two helpers (client-node-gen-shim.ts), by a
// module resolution hook (node:module register). Called by `syncprims run`
// before client-node is first loaded; the CLI's short-lived commands load
// client-node as it is. The hook matches one specifier from one file: a
// client-node that moves them is loaded whole, as before (a unit test checks
// that the shim still exports what config.js imports).
import { register } from 'node:module';

/** Registers the hook (once); call before anything imports client-node. */
export function registerLeanClientNode(): void {
  if (registered) return;
  registered = true;
  register('./lean-client-node-hooks.js', import.meta.url);
}

let registered = false;
