// What soak/run.sh asks of the result files (soak-result.ts), as commands:
//   node soak-stage.js provenance                 the commit and tree now, as JSON (taken when a stage starts)
//   node soak-stage.js skip STAGE                 exit 0 when STAGE's result stands for the tree as it is
//   node soak-stage.js jest STAGE PROVENANCE REPORT SECONDS COMMAND
//                                                 a jest stage's result, from jest's --json REPORT: it passes
//                                                 only when jest ran at least one test and none failed
import { existsSync, readFileSync } from 'node:fs';
import { check, finishStage, provenance, runAgainBecause, type Check, type Provenance } from './soak-result.js';

interface JestReport {
  success: boolean;
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numRuntimeErrorTestSuites: number;
  testResults: { assertionResults: { fullName: string; status: string }[] }[];
}

/** The checks of a jest run: it ran tests (a `-t` that matches nothing passes in jest), and all of them passed. */
export function jestChecks(report: JestReport | undefined): Check[] {
  if (!report) return [check('jest wrote its report', false, 'no report')];
  return [
    check('jest passed', report.success, String(report.success)),
    check('at least one test ran and passed', report.numPassedTests > 0, report.numPassedTests),
    check('no test failed', report.numFailedTests === 0, report.numFailedTests),
    check('no suite failed to run', report.numRuntimeErrorTestSuites === 0, report.numRuntimeErrorTestSuites),
  ];
}

function jestStage(stage: string, ranJson: string, reportFile: string, seconds: string, command: string): boolean {
  const report = existsSync(reportFile) ? (JSON.parse(readFileSync(reportFile, 'utf8')) as JestReport) : undefined;
  const tests = report?.testResults.flatMap((r) => r.assertionResults.map((a) => `${a.status}: ${a.fullName}`)) ?? [];
  return finishStage(stage, JSON.parse(ranJson) as Provenance, jestChecks(report), { seconds: Number(seconds), command, tests });
}

function main(args: string[]): number {
  const [verb, stage, ...rest] = args;
  if (verb === 'provenance') {
    console.log(JSON.stringify(provenance()));
    return 0;
  }
  if (verb === 'skip' && stage) {
    const because = runAgainBecause(stage, provenance());
    console.log(because ?? 'done at this commit and scale, with a clean tree');
    return because === undefined ? 0 : 1;
  }
  if (verb === 'jest' && stage && rest.length === 4) return jestStage(stage, rest[0]!, rest[1]!, rest[2]!, rest[3]!) ? 0 : 1;
  console.error('usage: soak-stage.js provenance | skip STAGE | jest STAGE PROVENANCE REPORT SECONDS COMMAND');
  return 2;
}

process.exitCode = main(process.argv.slice(2));
