// The rules of the house, read from the imports of src/ (issues 33 and 44):
// no circles; every folder imports only the folders below it in LAYERS
// (../shared/DESIGN.md's list: kube/ stands on nothing of ours, ui/ below
// cli/); the read models (views/) sit below both the CLI and the web view,
// which do not import each other but at the command that starts the web
// view; and neither reaches into the controllers but at that same wiring.
import { describe, expect, test } from '@jest/globals';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cycles, importGraph, inFolder, layerRules, readSources, specifiersOf, violations, type ImportRule } from '../support/import-graph.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The command that starts the operator, and with it the web view: the one module of cli/ that wires ui/ and controllers/. */
const WIRING = ['src/cli/run/run.ts'];

/**
 * The folders of src/, lowest first (DESIGN.md's list, docs/adr/0007): each
 * imports only those before it. fleet/ (the pure fleet rules) stands below
 * proxy/ and controllers/; ui/ below cli/, whose `run` wires it.
 */
const LAYERS = ['kube', 'api', 'runtime', 'source', 'apply', 'deps', 'clusters', 'fleet', 'proxy', 'controllers', 'views', 'ui', 'cli'] as const;

/** cli/ -> controllers/ and ui/ at run's wiring: decided by the rules below, not by the layers. */
const atWiring = (from: string, to: string): boolean => WIRING.includes(from) && (inFolder(to, 'src/controllers') || inFolder(to, 'src/ui'));

const RULES: ImportRule[] = [
  ...layerRules(LAYERS, atWiring),
  {
    name: "cli/ imports ui/ only at the web view's wiring",
    breaks: (from, to) => inFolder(from, 'src/cli') && inFolder(to, 'src/ui') && !WIRING.includes(from),
  },
  {
    name: "cli/, ui/ and views/ import no controllers/ but at run's wiring",
    breaks: (from, to) =>
      ['src/cli', 'src/ui', 'src/views'].some((f) => inFolder(from, f)) &&
      inFolder(to, 'src/controllers') &&
      !WIRING.includes(from),
  },
];

describe('reading the imports', () => {
  test('static, type-only, re-exported, multi-line, side-effect and dynamic imports; not comments nor packages', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      'import {',
      '  c,',
      '  type D,',
      "} from './c.js';",
      "export { e } from './e.js';",
      "export * from './f.js';",
      "import './g.js';",
      "const { h } = await import('../h.js');",
      "// import { x } from './commented.js';",
      " * import('./doc.js')",
      "import { z } from 'zod';",
      "export const LABEL = 'a/b';",
    ].join('\n');
    expect(specifiersOf(text).sort()).toEqual(['../b.js', '../h.js', './a.js', './c.js', './e.js', './f.js', './g.js']);
  });

  test('specifiers resolve against their module, .js read as .ts', () => {
    const graph = importGraph(new Map([['src/cli/x.ts', "import { y } from '../views/y.js';\nimport { z } from './z.js';"]]));
    expect(graph.get('src/cli/x.ts')).toEqual(['src/views/y.ts', 'src/cli/z.ts']);
  });
});

describe('the rules, over a made-up house that breaks each', () => {
  const house = new Map([
    ['src/kube/client.ts', "import { log } from '../runtime/logger.js';"],
    ['src/views/rows.ts', "import type { Style } from '../cli/terminal.js';\nimport { page } from '../ui/page.js';"],
    ['src/ui/model.ts', "import { syncRow } from '../cli/sync-rows.js';\nimport { rows } from '../views/rows.js';"],
    ['src/cli/get.ts', "import { serve } from '../ui/server.js';\nimport { x } from '../controllers/sync.js';\nimport { rows } from '../views/rows.js';"],
    ['src/cli/run/run.ts', "const { startUi } = await import('../../ui/index.js');\nconst c = await import('../../controllers/index.js');"],
    ['src/cli/events-run.ts', "import { remoteSyncName } from '../controllers/proxysync-remote.js';"],
    ['src/views/graph.ts', "import { remoteSyncName } from '../controllers/proxysync-remote.js';"],
    ['src/fleet/rollout.ts', "import { gateUnmet } from '../controllers/fleetsync.js';\nimport { selectClusters } from '../clusters/inventory.js';"],
    ['src/apply/engine.ts', "import { dependentsOf } from '../deps/graph.js';"],
    ['src/a.ts', "import { b } from './b.js';"],
    ['src/b.ts', "import type { C } from './c.js';"],
    ['src/c.ts', "export { a } from './a.js';"],
  ]);
  const graph = importGraph(house);

  test('each arrow that breaks a rule is named; the wiring is not', () => {
    expect(violations(graph, RULES)).toEqual([
      'apply/ imports only kube, api, runtime, source: src/apply/engine.ts -> src/deps/graph.ts',
      "cli/ imports ui/ only at the web view's wiring: src/cli/get.ts -> src/ui/server.ts",
      "cli/, ui/ and views/ import no controllers/ but at run's wiring: src/cli/events-run.ts -> src/controllers/proxysync-remote.ts",
      "cli/, ui/ and views/ import no controllers/ but at run's wiring: src/cli/get.ts -> src/controllers/sync.ts",
      "cli/, ui/ and views/ import no controllers/ but at run's wiring: src/views/graph.ts -> src/controllers/proxysync-remote.ts",
      'fleet/ imports only kube, api, runtime, source, apply, deps, clusters: src/fleet/rollout.ts -> src/controllers/fleetsync.ts',
      'kube/ imports nothing of ours: src/kube/client.ts -> src/runtime/logger.ts',
      'ui/ imports only kube, api, runtime, source, apply, deps, clusters, fleet, proxy, controllers, views: src/ui/model.ts -> src/cli/sync-rows.ts',
      'views/ imports only kube, api, runtime, source, apply, deps, clusters, fleet, proxy, controllers: src/views/rows.ts -> src/cli/terminal.ts',
      'views/ imports only kube, api, runtime, source, apply, deps, clusters, fleet, proxy, controllers: src/views/rows.ts -> src/ui/page.ts',
    ]);
  });

  test('every arrow up the layers breaks a rule, and no arrow down them does (but into controllers/ from the read side)', () => {
    for (const [rank, from] of LAYERS.entries()) {
      for (const [at, to] of LAYERS.entries()) {
        if (at === rank) continue;
        const arrow = new Map([[`src/${from}/a.ts`, `import { b } from '../${to}/b.js';`]]);
        const broken = violations(importGraph(arrow), RULES);
        const readSideIntoControllers = ['views', 'ui', 'cli'].includes(from) && to === 'controllers';
        const cliIntoUi = from === 'cli' && to === 'ui';
        expect([`${from} -> ${to}`, broken.length > 0]).toEqual([`${from} -> ${to}`, at > rank || readSideIntoControllers || cliIntoUi]);
      }
    }
  });

  test('a module at the top of src/ (version.ts) may be imported by any folder', () => {
    expect(violations(importGraph(new Map([['src/kube/a.ts', "import { v } from '../version.js';"]])), RULES)).toEqual([]);
  });

  test('a circle is found, through type-only imports and re-exports too', () => {
    expect(cycles(graph)).toEqual([['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/a.ts']]);
  });
});

describe('src/ as it stands', () => {
  const graph = importGraph(readSources(ROOT, 'src'));

  test('is read whole: every import names a module that exists, and the wiring is seen', () => {
    expect(graph.size).toBeGreaterThan(100);
    const missing = [...graph].flatMap(([from, targets]) => targets.filter((to) => !existsSync(path.join(ROOT, to))).map((to) => `${from} -> ${to}`));
    expect(missing).toEqual([]);
    expect(graph.get('src/cli/run/run.ts')).toEqual(expect.arrayContaining(['src/ui/index.ts', 'src/controllers/index.ts']));
  });

  test('has no import circle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  test('keeps the folders in their places', () => {
    expect(violations(graph, RULES)).toEqual([]);
  });

  test('keeps cli/ in folders per command family, each small', () => {
    const cli = [...graph.keys()].filter((file) => inFolder(file, 'src/cli'));
    const byFolder = new Map<string, number>();
    for (const file of cli) byFolder.set(path.dirname(file), (byFolder.get(path.dirname(file)) ?? 0) + 1);
    expect(byFolder.size).toBeGreaterThan(8);
    const crowded = [...byFolder].filter(([folder, count]) => count > (folder === 'src/cli' ? 16 : 12));
    expect(crowded).toEqual([]);
  });

  test('the wiring names modules that exist', () => {
    for (const file of WIRING) expect(graph.has(file)).toBe(true);
  });
});
