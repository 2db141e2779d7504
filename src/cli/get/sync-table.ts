import { UsageError } from '../errors.js';
import { ageOf, shortRevision } from '../format.js';
import type { Style } from '../terminal.js';
import type { ReadyStatus, SyncRow } from '../../views/sync-rows.js';

/** The table of `syncprims get`: its header, a row's cells, and which rows `--status-selector` keeps. */

export interface TableShape {
  allNamespaces: boolean;
  /** `-o wide`: also the revision being applied (a FleetSync: rolled out) and the Ready message. */
  wide?: boolean;
}

export function tableHeader(shape: TableShape): string[] {
  const cols = ['KIND', 'NAMESPACE', 'NAME', 'READY', 'REASON', 'REVISION', 'CLUSTER', 'PENDING', 'AGE', 'TARGET-REVISION', 'MESSAGE'];
  return shapeCells(cols, shape);
}

/**
 * A row's cells, in the order of `tableHeader`; `-` for what is not there. A
 * FleetSync shows its phase where a sync shows its reason (with the reason
 * when they differ and it is not Ready) and, rolling out in waves, its
 * progress (`3/5 waves, 412/1000`); its clusters (`ready/selected`) where a
 * sync shows its cluster; wide, its rollout's message before the Ready one.
 */
export function rowCells(row: SyncRow, opts: TableShape & { style: Style; now?: number; reason?: string }): string[] {
  const { style } = opts;
  const colour = row.ready === 'True' ? style.green : row.ready === 'False' ? style.red : style.yellow;
  const reason = opts.reason ?? reasonText(row);
  const cells = [
    row.kind,
    row.namespace,
    row.name,
    row.ready ? colour(row.ready) : style.dim('-'),
    reason ? colour(reason) : '-',
    shortRevision(row.revision),
    row.fleet ? `${row.fleet.clusters} ready` : (row.cluster ?? '-'),
    row.pending.length > 0 ? style.yellow(row.pending.join(',')) : '-',
    ageOf(row.createdAt, opts.now),
    shortRevision(row.targetRevision),
    messageText(row),
  ];
  return shapeCells(cells, opts);
}

function reasonText(row: SyncRow): string | undefined {
  const phase = row.fleet?.phase;
  if (!phase) return row.reason;
  const tell = row.reason && row.reason !== phase && (row.ready === 'False' || row.reason === 'Suspended');
  const text = tell ? `${phase} (${row.reason})` : phase;
  return row.fleet?.progress ? `${text} ${row.fleet.progress}` : text;
}

/** The Ready message; a FleetSync's rollout message first, when it says something else. */
function messageText(row: SyncRow): string {
  const messages = [row.fleet?.rolloutMessage, row.message].filter((m): m is string => !!m).map(oneLine);
  const distinct = messages.filter((m, i) => messages.indexOf(m) === i);
  return distinct.length > 0 ? distinct.join('; ') : '-';
}

/** Without NAMESPACE unless across namespaces; the last two only when wide. */
function shapeCells(cells: string[], shape: TableShape): string[] {
  const shaped = shape.wide ? cells : cells.slice(0, -2);
  if (!shape.allNamespaces) shaped.splice(1, 1);
  return shaped;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
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
