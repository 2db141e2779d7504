// Where each node of a namespace's graph is drawn: left to right in
// dependency order. A node's column is one more than the deepest of its
// dependencies (longest path), so every arrow of an acyclic graph points
// left; the edges of a cycle are left out of the layering (they point
// wherever they land, drawn red). Within a column, nodes keep the graph
// model's order.

export interface LayoutEdge {
  from: string;
  to: string;
  cycle: boolean;
}

export interface Placement {
  col: number;
  row: number;
}

export function layoutColumns(nodeKeys: readonly string[], edges: readonly LayoutEdge[]): Map<string, Placement> {
  const deps = new Map<string, string[]>();
  for (const e of edges) {
    if (e.cycle || e.from === e.to) continue;
    deps.set(e.from, [...(deps.get(e.from) ?? []), e.to]);
  }
  const col = new Map<string, number>();
  for (const key of nodeKeys) columnOf(key, deps, col);
  const rows = new Map<number, number>();
  const out = new Map<string, Placement>();
  for (const key of nodeKeys) {
    const c = col.get(key) ?? 0;
    const row = rows.get(c) ?? 0;
    rows.set(c, row + 1);
    out.set(key, { col: c, row });
  }
  return out;
}

/** Iterative (a chain of thousands would overflow the stack): depth-first, columns set on the way back. */
function columnOf(start: string, deps: ReadonlyMap<string, readonly string[]>, col: Map<string, number>): void {
  if (col.has(start)) return;
  const onPath = new Set<string>([start]);
  const stack: { key: string; next: number }[] = [{ key: start, next: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const children = deps.get(top.key) ?? [];
    if (top.next < children.length) {
      const child = children[top.next++]!;
      // A back edge here would be on a cycle: those were left out, so this only guards.
      if (col.has(child) || onPath.has(child)) continue;
      onPath.add(child);
      stack.push({ key: child, next: 0 });
      continue;
    }
    stack.pop();
    onPath.delete(top.key);
    col.set(top.key, children.reduce((max, c) => Math.max(max, (col.get(c) ?? -1) + 1), 0));
  }
}
