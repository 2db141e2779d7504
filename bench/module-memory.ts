// What loading code costs the operator before it holds a single object: each
// case imports some modules in a fresh Node process, forces a GC, and reports
// the resident set and the V8 heap used, against a process that imports
// nothing. It names where the operator's baseline memory goes (issue 14: peak
// RSS at 1,000 Syncs x 10 objects, target 150 MiB), so that a change aimed at
// it can be measured. Writes docs/benchmarks/module-memory.md; asserts nothing.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median, ROOT } from './support.js';

const OUT = path.join(ROOT, 'docs/benchmarks/module-memory.md');
const RUNS = 3;

interface Case {
  name: string;
  /** Module specifiers imported, in order (resolved from the repository's root). */
  modules: string[];
}

const CLIENT_NODE = '@kubernetes/client-node';
/** What `syncprims run` imports (src/cli/run/run.ts, operatorModules). */
const OPERATOR = [
  './dist/kube/kubeconfig.js',
  './dist/kube/config.js',
  './dist/controllers/index.js',
  './dist/runtime/manager.js',
  './dist/kube/client.js',
  './dist/cli/cluster.js',
  './dist/cli/run/run.js',
];
const CASES: Case[] = [
  { name: 'nothing (Node itself)', modules: [] },
  { name: `${CLIENT_NODE} (its index, as \`import { KubeConfig } from '${CLIENT_NODE}'\` loads it)`, modules: [CLIENT_NODE] },
  { name: `${CLIENT_NODE}/dist/config.js (KubeConfig alone)`, modules: [`${CLIENT_NODE}/dist/config.js`] },
  { name: `${CLIENT_NODE}/dist/gen/index.js (the generated API models and clients, which config.js imports)`, modules: [`${CLIENT_NODE}/dist/gen/index.js`] },
  {
    name: `${CLIENT_NODE}/dist/gen/configuration.js and servers.js (what config.js uses of them)`,
    modules: [`${CLIENT_NODE}/dist/gen/configuration.js`, `${CLIENT_NODE}/dist/gen/servers.js`],
  },
  { name: "src/kube/kubeconfig.ts (syncprims' own KubeConfig alone)", modules: ['./dist/kube/kubeconfig.js'] },
  {
    name: "the operator's modules with client-node's KubeConfig (dist/config.js, with all it imports)",
    modules: [`${CLIENT_NODE}/dist/config.js`, ...OPERATOR],
  },
  { name: "the operator's modules with syncprims' own KubeConfig (what `syncprims run` imports: controllers, manager, client, KubeConfig)", modules: OPERATOR },
];

interface Sample {
  rssMiB: number;
  heapMiB: number;
}

/** One fresh process: imports, GC, memoryUsage. */
function sample({ modules }: Case): Sample {
  const script = `${modules.map((m) => `await import(${JSON.stringify(m)});`).join('\n')}
global.gc(); global.gc();
const m = process.memoryUsage();
console.log(JSON.stringify({ rssMiB: m.rss / 1048576, heapMiB: m.heapUsed / 1048576 }));`;
  const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!) as Sample;
}

function main(): void {
  const rows = CASES.map((c) => {
    const samples = Array.from({ length: RUNS }, () => sample(c));
    return { c, rss: median(samples.map((s) => s.rssMiB)), heap: median(samples.map((s) => s.heapMiB)) };
  });
  const base = rows[0]!;
  const f = (n: number) => n.toFixed(1);
  const lines = rows.map((r) => `| ${r.c.name} | ${f(r.rss)} | ${f(r.rss - base.rss)} | ${f(r.heap)} | ${f(r.heap - base.heap)} |`);
  for (const r of rows) console.log(`${r.c.name}: RSS ${f(r.rss)} MiB (+${f(r.rss - base.rss)}), heap ${f(r.heap)} MiB (+${f(r.heap - base.heap)})`);
  const date = new Date().toISOString().slice(0, 10);
  const report = `## What loading code costs (bench/module-memory.ts)

Script: \`bench/module-memory.ts\`. Measured ${date} on ${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim() ?? '?'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB,
Node ${process.version}. No cluster.

Method: per case, a fresh \`node --expose-gc\` process imports the modules named, runs two full GCs, and reports
\`process.memoryUsage()\`: the resident set (RSS) and the V8 heap used; the median of ${RUNS} processes. "Added" is
over a process that imports nothing. What the operator's objects cost comes on top (the other sections).

| imported | RSS (MiB) | added | heap used (MiB) | added |
|---|---|---|---|---|
${lines.join('\n')}

Reading: the operator needs a \`KubeConfig\` (loading kubeconfigs, credentials per request), and client-node's
\`config.js\` imports its whole generated API (\`gen/index.js\`) for \`makeApiClient\`, besides node-fetch, two proxy
agents, js-yaml and every auth provider (oidc brings openid-client), none of which the operator uses (its requests
go through \`src/kube/client.ts\`). \`syncprims run\` therefore loads a KubeConfig of its own
(\`src/kube/kubeconfig.ts\`): client-node's entry parsing (\`config_types.js\`) and token file authenticator, the
exec and auth-provider authenticators only when a kubeconfig's user names them (docs/runtime.md).
`;
  mkdirSync(path.dirname(OUT), { recursive: true });
  writeFileSync(OUT, report);
  console.log(`wrote ${OUT}`);
}

main();
