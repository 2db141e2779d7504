// Parsing the real-world sets as a Sync does (src/source/parse.ts): the subset
// reader (src/source/yaml-subset.ts, with the library for what it hands over)
// against the `yaml` library alone (`fullParser`). Each sample is a fresh Node
// process, as a new operator is: its first pass (cold: the parser's code not
// yet optimised, which a new Sync's first apply waits for) and the median of
// the next ones (warm). Writes docs/benchmarks/parse.md; asserts nothing.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median, ROOT } from './support.js';

const OUT = path.join(ROOT, 'docs/benchmarks/parse.md');
const CORPUS = process.env.CORPUS ?? path.join(ROOT, 'test', 'fixtures', 'corpus');
const RUNS = Number(process.env.RUNS ?? 3);
const WARM_PASSES = 5;
const SETS = ['kube-prometheus', 'argo-cd'];
const READERS = ['subset', 'full'] as const;

interface Sample {
  bytes: number;
  files: number;
  objects: number;
  coldMs: number;
  warmMs: number;
}

/** One fresh process: every .yaml file of the set parsed once (cold), then WARM_PASSES more times. */
function sample(set: string, reader: (typeof READERS)[number]): Sample {
  const script = `
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
const { parseManifests } = await import('./dist/source/parse.js');
const files = [];
const walk = (d) => { for (const n of readdirSync(d).sort()) { const p = join(d, n); if (statSync(p).isDirectory()) walk(p); else if (/\\.ya?ml$/.test(n)) files.push([p, readFileSync(p, 'utf8')]); } };
walk(${JSON.stringify(path.join(CORPUS, set))});
const options = { fullParser: ${reader === 'full'} };
const pass = () => { const t = performance.now(); let n = 0; for (const [p, x] of files) n += parseManifests(x, p, options).length; return [performance.now() - t, n]; };
const [coldMs, objects] = pass();
const warm = Array.from({ length: ${WARM_PASSES} }, () => pass()[0]).sort((a, b) => a - b);
console.log(JSON.stringify({ bytes: files.reduce((s, [, x]) => s + Buffer.byteLength(x), 0), files: files.length, objects, coldMs, warmMs: warm[Math.floor(warm.length / 2)] }));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out) as Sample;
}

function main(): void {
  const rows: string[] = [];
  const ratios: string[] = [];
  for (const set of SETS) {
    const by = new Map<string, Sample[]>();
    // The readers alternate, so that the machine's load falls on both alike.
    for (let run = 0; run < RUNS; run++) for (const reader of READERS) by.set(reader, [...(by.get(reader) ?? []), sample(set, reader)]);
    const med = (reader: string, f: (s: Sample) => number): number => median((by.get(reader) ?? []).map(f));
    for (const reader of READERS) {
      const s = by.get(reader)![0]!;
      const cold = (by.get(reader) ?? []).map((x) => Math.round(x.coldMs)).join(', ');
      rows.push(`| ${set} | ${(s.bytes / 1024).toFixed(0)} KiB, ${s.files} files, ${s.objects} objects | ${reader === 'subset' ? 'subset reader' : '`yaml` alone'} | ${Math.round(med(reader, (x) => x.coldMs))} ms (${cold}) | ${Math.round(med(reader, (x) => x.warmMs))} ms |`);
      console.log(`${set}, ${reader}: cold ${cold} ms, warm ${Math.round(med(reader, (x) => x.warmMs))} ms`);
    }
    const r = (f: (s: Sample) => number): string => (med('full', f) / med('subset', f)).toFixed(1);
    ratios.push(`- ${set}: the library alone took ${r((x) => x.coldMs)}x the subset reader's time cold, ${r((x) => x.warmMs)}x warm.`);
  }
  const report = `## Parsing manifests (bench/parse.ts)

Script: \`bench/parse.ts\`. Measured ${new Date().toISOString().slice(0, 10)} on ${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim() ?? '?'}), Node ${process.version}, from \`dist/\` as built.

Method: every \`.yaml\` file of each set in \`${path.relative(ROOT, CORPUS)}\` parsed with \`parseManifests\`, in a fresh Node
process per sample (${RUNS} per reader, the two readers alternating): the first pass over the set (cold, as in a new
operator, whose first Sync waits for it) and the median of the next ${WARM_PASSES} (warm). "subset reader" is
\`parseManifests\` as the operator runs it (src/source/yaml-subset.ts, handing what it is unsure of to the library); "\`yaml\`
alone" is the same with \`fullParser: true\`. Both give the same objects (test/unit/yaml-subset.test.ts).

| set | size | reader | cold (median; runs) | warm (median) |
|---|---|---|---|---|
${rows.join('\n')}

${ratios.join('\n')}
`;
  mkdirSync(path.dirname(OUT), { recursive: true });
  writeFileSync(OUT, report);
  console.log(`\n${report}`);
}

main();
