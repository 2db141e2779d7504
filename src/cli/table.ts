import { visibleWidth } from './terminal.js';

/** Columns aligned as kubectl's tabwriter does: left-aligned, three spaces apart, the last one unpadded. */

const GAP = '   ';

/** The width of each column for a header and rows (at least `atLeast`, e.g. the widths already printed). */
export function columnWidths(rows: readonly (readonly string[])[], atLeast: readonly number[] = []): number[] {
  const widths = [...atLeast];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, visibleWidth(cell));
    });
  }
  return widths;
}

/** One line of a table. */
export function formatRow(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((cell, i) => (i === cells.length - 1 ? cell : cell + ' '.repeat(Math.max(0, (widths[i] ?? 0) - visibleWidth(cell)))))
    .join(GAP)
    .trimEnd();
}

/** A whole table: the header, then the rows. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): { lines: string[]; widths: number[] } {
  const widths = columnWidths([header, ...rows]);
  return { lines: [header, ...rows].map((r) => formatRow(r, widths)), widths };
}
