// How `syncprims doctor` prints what it found: a table for a person (one
// finding per line), or YAML / JSON for a script.
import type { Finding } from './doctor-findings.js';
import { summaryLine, type ShardSummary } from './doctor-shards.js';
import type { OutputFormat } from '../options.js';
import { toJson, toYaml } from '../output.js';
import { formatTable } from '../table.js';
import type { Style } from '../terminal.js';

export function doctorHeader(allNamespaces: boolean): string[] {
  return ['PROBLEM', ...(allNamespaces ? ['NAMESPACE'] : []), 'OBJECT', 'FINDING', 'WHAT TO DO'];
}

export function findingCells(f: Finding, allNamespaces: boolean, style: Style): string[] {
  const colour = f.severity === 'error' ? style.red : style.yellow;
  return [colour(f.problem), ...(allNamespaces ? [f.namespace || '-'] : []), f.object, f.message, f.action];
}

export interface ReportOptions {
  format: OutputFormat;
  allNamespaces: boolean;
  style: Style;
  checked: string;
  /** Under `run --shards`: the replicas and what each holds (a line after the findings; `shards` in YAML and JSON). */
  shards?: ShardSummary;
}

/** The report in `format`; for a table with nothing found, the line that says so. */
export function doctorReport(findings: readonly Finding[], opts: ReportOptions): string {
  if (opts.format !== 'table') {
    const value = { findings, ...(opts.shards ? { shards: opts.shards } : {}) };
    return opts.format === 'json' ? toJson(value) : toYaml(value);
  }
  const shards = opts.shards ? `${summaryLine(opts.shards)}\n` : '';
  if (findings.length === 0) return `No problems found (${opts.checked}).\n${shards}`;
  const table = formatTable(doctorHeader(opts.allNamespaces), findings.map((f) => findingCells(f, opts.allNamespaces, opts.style)));
  return `${table.lines.join('\n')}\n${shards}`;
}
