/**
 * The shortest cycle through `start` (`[start, ..., start]`), or undefined
 * when `start` is on none. Breadth-first from `start` over `successors`, so
 * the path is the one a person would draw. toposort only says that a graph
 * has a cycle and names one node of it; users need the whole path.
 */
export function cycleThrough(start: string, successors: (node: string) => readonly string[]): string[] | undefined {
  const parent = new Map<string, string>();
  const queue: string[] = [start];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    for (const next of successors(node)) {
      if (next === start) return [...pathTo(node, start, parent), start];
      if (parent.has(next)) continue;
      parent.set(next, node);
      queue.push(next);
    }
  }
  return undefined;
}

function pathTo(node: string, start: string, parent: Map<string, string>): string[] {
  const path = [node];
  for (let at = node; at !== start; ) {
    at = parent.get(at)!;
    path.push(at);
  }
  return path.reverse();
}
