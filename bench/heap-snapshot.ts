// What a V8 heap snapshot (`node --heapsnapshot-signal`, v8.writeHeapSnapshot)
// holds, by what the objects are: the live heap (a snapshot collects garbage
// first), each node's self size summed per group. For the benchmark reports:
// open the file in Chrome DevTools (Memory tab) for retainers.
import { readFileSync } from 'node:fs';

export interface HeapGroup {
  what: string;
  count: number;
  bytes: number;
}

export interface HeapSummary {
  totalBytes: number;
  nodes: number;
  groups: HeapGroup[];
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

const STRING_TYPES = new Set(['string', 'concatenated string', 'sliced string']);

/** The group of a node: its type, or for objects the constructor that made them. */
function groupOf(type: string, name: string): string {
  if (STRING_TYPES.has(type)) return 'strings';
  if (type === 'code') return 'compiled code and its metadata';
  if (type === 'closure') return 'functions (closures)';
  if (type === 'array') return 'arrays\' and objects\' backing stores';
  if (type === 'hidden' || type === 'object shape') return 'V8 internals (maps, shapes, property arrays)';
  if (type === 'native') return 'native (buffers, sockets)';
  if (type === 'number' || type === 'heap number') return 'numbers';
  if (type === 'object') {
    if (name === 'Object') return 'plain objects ({...})';
    if (name === 'Array') return 'arrays';
    if (name.startsWith('system /')) return 'V8 internals (maps, shapes, property arrays)';
    return `${name} objects`;
  }
  return type;
}

/** Reads a snapshot file (it can be large: hundreds of MiB of JSON for a few hundred MiB of heap) and groups its nodes. */
export function summarizeHeapSnapshot(file: string, top = 12): HeapSummary {
  const s = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = s.snapshot.meta.node_fields;
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const types = s.snapshot.meta.node_types[0];
  const groups = new Map<string, HeapGroup>();
  let totalBytes = 0;
  for (let i = 0; i < s.nodes.length; i += width) {
    const what = groupOf(types[s.nodes[i + typeAt]!] ?? '?', s.strings[s.nodes[i + nameAt]!] ?? '');
    const bytes = s.nodes[i + sizeAt]!;
    totalBytes += bytes;
    const g = groups.get(what) ?? { what, count: 0, bytes: 0 };
    g.count++;
    g.bytes += bytes;
    groups.set(what, g);
  }
  const sorted = [...groups.values()].sort((a, b) => b.bytes - a.bytes);
  return { totalBytes, nodes: s.nodes.length / width, groups: sorted.slice(0, top) };
}
