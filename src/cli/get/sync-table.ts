import { UsageError } from '../errors.js';
import { ageOf, shortRevision } from '../format.js';
import type { Style } from '../terminal.js';
import type { ReadyStatus, SyncRow } from '../../views/sync-rows.js';

/** The table of `syncprims get`: its header, a row's cells, and which rows `--status-selector` keeps. */

export function tableHeader(allNamespaces: boolean): string[] {
  const cols = ['KIND', 'NAMESPACE', 'NAME', 'READY', 'REASON', 'REVISION', 'CLUSTER', 'PENDING', 'AGE'];
  return allNamespaces ? cols : cols.filter((c) => c !== 'NAMESPACE');
}

/** A row's cells, in the order of `tableHeader`; `-` for what is not there. */
export function rowCells(row: SyncRow, opts: { allNamespaces: boolean; style: Style; now?: number; reason?: string }): string[] {
  const { style } = opts;
  const colour = row.ready === 'True' ? style.green : row.ready === 'False' ? style.red : style.yellow;
  const cells = [
    row.kind,
    row.namespace,
    row.name,
    row.ready ? colour(row.ready) : style.dim('-'),
    (opts.reason ?? row.reason) ? colour(opts.reason ?? row.reason ?? '') : '-',
    shortRevision(row.revision),
    row.cluster ?? '-',
    row.pending.length > 0 ? style.yellow(row.pending.join(',')) : '-',
    ageOf(row.createdAt, opts.now),
  ];
  if (!opts.allNamespaces) cells.splice(1, 1);
  return cells;
}

/** `--status-selector`: which rows to show. */
export type RowFilter = (row: SyncRow) => boolean;

const READY_VALUES: Record<string, ReadyStatus> = { true: 'True', false: 'False', unknown: 'Unknown' };

/**
 * `ready=false`, `ready=true`, `ready=unknown` (also a sync with no Ready
 * condition yet), `ready!=true`; several joined by commas must all hold.
 */
export function parseStatusSelector(text: string | undefined): RowFilter {
  if (text === undefined) return () => true;
  const tests = text.split(',').map((term) => {
    const m = /^\s*([a-zA-Z]+)\s*(!=|==|=)\s*([a-zA-Z]+)\s*$/.exec(term);
    const key = m?.[1]?.toLowerCase();
    const want = READY_VALUES[m?.[3]?.toLowerCase() ?? ''];
    if (!m || key !== 'ready' || !want) {
      throw new UsageError(`--status-selector ${JSON.stringify(text)}: want ready=true, ready=false, ready=unknown or ready!=true`);
    }
    const negate = m[2] === '!=';
    return (row: SyncRow) => ((row.ready ?? 'Unknown') === want) !== negate;
  });
  return (row) => tests.every((t) => t(row));
}
