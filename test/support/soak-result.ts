// The result files of the soak stages (`make soak`, soak/run.sh): what makes a
// stage "done", and so skipped by the next run. A stage is done only when its
// checks held, in a run at the same SOAK_SCALE, of the commit checked out now,
// with no change in the tree then or now. Each result records that commit and
// whether the tree had changes, and the checks that were made; a stage whose
// checks did not all hold writes `<stage>.failed.json` instead (its figures
// kept to read), so that the next run tries it again.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const SOAK_DIR = path.join(process.cwd(), '.local', 'soak');
/** SOAK_SCALE shortens (or lengthens) every stage: sizes and durations are multiplied by it. */
export const SCALE = Number(process.env.SOAK_SCALE ?? 1);

export const resultFile = (stage: string): string => path.join(SOAK_DIR, `${stage}.json`);

/** The commit checked out, and whether the tree differs from it (changed, staged or untracked files). */
export interface Provenance {
  commit: string;
  dirty: boolean;
}

export function provenance(): Provenance {
  const git = (...args: string[]): string => execFileSync('git', args, { encoding: 'utf8' }).trim();
  return { commit: git('rev-parse', 'HEAD'), dirty: git('status', '--porcelain') !== '' };
}

/** One claim of a stage, checked: what was claimed, whether it held, and what was seen. */
export interface Check {
  what: string;
  ok: boolean;
  seen: string | number;
}

export const check = (what: string, ok: boolean, seen: string | number): Check => ({ what, ok, seen });

/**
 * Ends a stage: prints each check; when all held (and there is at least one),
 * writes `<stage>.json`, else `<stage>.failed.json` and sets a non-zero exit
 * code. `ran` is the provenance taken when the stage started.
 */
export function finishStage(stage: string, ran: Provenance, checks: Check[], figures: Record<string, unknown>): boolean {
  for (const c of checks) console.log(`  check: ${c.what}: ${c.ok ? 'holds' : 'FAILS'} (${c.seen})`);
  const passed = checks.length > 0 && checks.every((c) => c.ok);
  const name = passed ? stage : `${stage}.failed`;
  mkdirSync(SOAK_DIR, { recursive: true });
  rmSync(resultFile(passed ? `${stage}.failed` : stage), { force: true });
  const result = { stage, passed, finishedAt: new Date().toISOString(), scale: SCALE, ...ran, checks, ...figures };
  writeFileSync(resultFile(name), `${JSON.stringify(result, null, 2)}\n`);
  console.log(`wrote ${path.relative(process.cwd(), resultFile(name))}${passed ? '' : ': the stage FAILED'}`);
  if (!passed) process.exitCode = 1;
  return passed;
}

/** Why the stage must run again, or undefined when its result stands for the tree as it is (it is skipped). */
export function runAgainBecause(stage: string, now: Provenance, scale = SCALE): string | undefined {
  const file = resultFile(stage);
  if (!existsSync(file)) return 'no result yet';
  const r = JSON.parse(readFileSync(file, 'utf8')) as Partial<Provenance> & { passed?: boolean; scale?: number };
  if (r.passed !== true) return 'its result does not say it passed';
  if (Number(r.scale) !== scale) return `its result is of SOAK_SCALE=${r.scale}, not ${scale}`;
  if (r.commit !== now.commit) return `its result is of commit ${r.commit?.slice(0, 12) ?? '(none recorded)'}, not ${now.commit.slice(0, 12)}`;
  if (r.dirty !== false) return 'its result was made with changes in the tree';
  if (now.dirty) return 'the tree has changes that are not committed';
  return undefined;
}
