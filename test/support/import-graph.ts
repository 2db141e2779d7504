// The imports of src/ as a graph, read from the text of its modules, and the
// rules of the house checked over it (test/unit/imports.test.ts): which
// folder may import which, and no circles.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Module (`src/cli/run.ts`, relative to the repository) -> the modules of ours it imports. */
export type ImportGraph = Map<string, string[]>;

// `import ... from '.x'`, `import type ...`, `export ... from '.x'`, `import '.x'` (names may span lines), and `import('.x')`.
const STATIC = /^\s*(?:import|export)\b[^'";]*?\bfrom\s*'(\.{1,2}\/[^']+)'/gm;
const BARE = /^\s*import\s*'(\.{1,2}\/[^']+)'/gm;
const DYNAMIC = /\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;

/** The relative specifiers of a module's text (comments' lines skipped). */
export function specifiersOf(text: string): string[] {
  const code = text
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
    .join('\n');
  return [STATIC, BARE, DYNAMIC].flatMap((re) => [...code.matchAll(re)]).map((m) => m[1]!);
}

/** The graph of `sources` (module path -> its text): each specifier resolved against its module, `.js` read as `.ts`. */
export function importGraph(sources: ReadonlyMap<string, string>): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const [file, text] of sources) {
    const targets = specifiersOf(text).map((s) => path.posix.join(path.posix.dirname(file), s).replace(/\.js$/, '.ts'));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Every `.ts` module under `dir` (relative to `root`), with its text. */
export function readSources(root: string, dir: string): Map<string, string> {
  const sources = new Map<string, string>();
  const walk = (rel: string): void => {
    for (const entry of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = path.posix.join(rel, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith('.ts')) sources.set(child, readFileSync(path.join(root, child), 'utf8'));
    }
  };
  walk(dir);
  return sources;
}

/** A rule over one arrow: what it forbids, and whether an arrow `from -> to` breaks it. */
export interface ImportRule {
  name: string;
  breaks(from: string, to: string): boolean;
}

/** Each arrow that breaks a rule, as `rule: from -> to`. */
export function violations(graph: ImportGraph, rules: readonly ImportRule[]): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      for (const rule of rules) if (rule.breaks(from, to)) found.push(`${rule.name}: ${from} -> ${to}`);
    }
  }
  return found.sort();
}

/** Each circle of the graph once, as its modules in import order (the first repeated at the end). */
export function cycles(graph: ImportGraph): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const onPath: string[] = [];
  const visit = (node: string): void => {
    const at = onPath.indexOf(node);
    if (at >= 0) {
      found.push([...onPath.slice(at), node]);
      return;
    }
    if (done.has(node)) return;
    onPath.push(node);
    for (const next of graph.get(node) ?? []) visit(next);
    onPath.pop();
    done.add(node);
  };
  for (const node of [...graph.keys()].sort()) visit(node);
  return found;
}

/** `src/cli/x.ts` is in `src/cli/`. */
export function inFolder(file: string, folder: string): boolean {
  return file.startsWith(folder.endsWith('/') ? folder : `${folder}/`);
}

/** The top folder of a module under src/ (`src/cli/run/run.ts` -> `cli`); undefined for a module at src/'s top (`src/version.ts`). */
export function layerOf(file: string): string | undefined {
  const parts = file.split('/');
  return parts.length > 2 && parts[0] === 'src' ? parts[1] : undefined;
}

/**
 * One rule per folder of `layers` (lowest first): its modules import only
 * folders before it in the list, and modules at src/'s top (`version.ts`,
 * which import nothing of ours). `exempt(from, to)` lets an arrow through
 * that another rule decides (the wiring of `run`).
 */
export function layerRules(layers: readonly string[], exempt: (from: string, to: string) => boolean = () => false): ImportRule[] {
  return layers.map((layer, rank) => ({
    name: rank === 0 ? `${layer}/ imports nothing of ours` : `${layer}/ imports only ${layers.slice(0, rank).join(', ')}`,
    breaks: (from: string, to: string) => {
      if (layerOf(from) !== layer) return false;
      const target = layerOf(to);
      if (target === undefined || target === layer || exempt(from, to)) return false;
      const at = layers.indexOf(target);
      return at < 0 || at >= rank;
    },
  }));
}
