// A GraphModel as Mermaid (a flowchart, which GitHub and most Markdown
// viewers draw) or as Graphviz DOT. Arrows point from a sync to what it
// depends on; colours say the state; a dependency that does not exist is a
// dashed node; the edges of a cycle are red, and each cycle is listed in a
// comment at the top.
import type { GraphModel, GraphNode, MemberCounts, NodeState } from '../../views/graph-model.js';

export const GRAPH_FORMATS = ['mermaid', 'dot'] as const;
export type GraphFormat = (typeof GRAPH_FORMATS)[number];

interface Look {
  fill: string;
  stroke: string;
  text: string;
  dashed: boolean;
  /** Said after the label, when the colour is not enough. */
  note?: string;
}

const LOOKS: Record<NodeState, Look> = {
  ready: { fill: '#d4edda', stroke: '#2e7d32', text: '#1b5e20', dashed: false },
  failed: { fill: '#f8d7da', stroke: '#c62828', text: '#8e0000', dashed: false },
  progressing: { fill: '#fff3cd', stroke: '#f9a825', text: '#5d4000', dashed: false },
  missing: { fill: '#ffffff', stroke: '#757575', text: '#616161', dashed: true, note: 'not found' },
  unknown: { fill: '#eeeeee', stroke: '#757575', text: '#616161', dashed: true, note: 'not readable' },
};

const CYCLE_COLOUR = '#d32f2f';
const LEGEND =
  'green: Ready; red: not Ready; yellow: progressing; dashed: not found (or not readable); red arrows: a dependency cycle; a FleetSync counts its children (one per cluster), and "per cluster" on its arrow to a FleetSync means each cluster\'s child waits for that cluster\'s child';

export function renderGraph(model: GraphModel, format: GraphFormat): string {
  return format === 'dot' ? toDot(model) : toMermaid(model);
}

function header(model: GraphModel, comment: string): string[] {
  return [
    `${comment} syncprims dependency graph of ${model.title}: an arrow points from a sync to a sync it depends on`,
    `${comment} ${LEGEND}`,
    ...(model.nodes.length === 0 ? [`${comment} no syncs`] : []),
    ...model.cycles.map((c) => `${comment} cycle: ${c.join(' -> ')}`),
  ];
}

/** The node's text: its label, what the colour cannot say, and a FleetSync's clusters. */
function labelOf(n: GraphNode): string {
  const notes = [...(LOOKS[n.state].note ? [LOOKS[n.state].note] : []), ...(n.members ? [membersText(n.members)] : [])];
  return notes.length > 0 ? `${n.label} (${notes.join('; ')})` : n.label;
}

/** `3 clusters: 2 ready, 1 failed`. */
export function membersText(m: MemberCounts): string {
  const parts = [`${m.ready} ready`, ...(m.failed > 0 ? [`${m.failed} failed`] : []), ...(m.progressing > 0 ? [`${m.progressing} progressing`] : [])];
  return `${m.total} cluster${m.total === 1 ? '' : 's'}: ${parts.join(', ')}`;
}

export function toMermaid(model: GraphModel): string {
  const id = new Map(model.nodes.map((n, i) => [n.key, `n${i}`]));
  // The diagram's type first: older Mermaid versions refuse a comment before it.
  const lines = ['flowchart LR', ...header(model, '%%')];
  for (const n of model.nodes) lines.push(`  ${id.get(n.key)}["${labelOf(n)}"]:::${n.state}`);
  const dashedTo = new Set(model.nodes.filter((n) => LOOKS[n.state].dashed).map((n) => n.key));
  for (const e of model.edges) {
    const arrow = dashedTo.has(e.to) ? '-.->' : '-->';
    lines.push(`  ${id.get(e.from)} ${arrow}${e.label ? `|${e.label}|` : ''} ${id.get(e.to)}`);
  }
  const cycleLinks = model.edges.flatMap((e, i) => (e.cycle ? [i] : []));
  if (cycleLinks.length > 0) lines.push(`  linkStyle ${cycleLinks.join(',')} stroke:${CYCLE_COLOUR},stroke-width:2px,color:${CYCLE_COLOUR}`);
  for (const state of usedStates(model)) {
    const look = LOOKS[state];
    lines.push(`  classDef ${state} fill:${look.fill},stroke:${look.stroke},color:${look.text}${look.dashed ? ',stroke-dasharray:5 5' : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

export function toDot(model: GraphModel): string {
  const lines = [...header(model, '//'), 'digraph syncprims {', '  rankdir=LR;', '  node [shape=box, style="rounded,filled", fontname="Helvetica"];'];
  for (const n of model.nodes) {
    const look = LOOKS[n.state];
    const style = look.dashed ? ', style="rounded,dashed,filled"' : '';
    lines.push(`  ${quote(n.key)} [label=${quote(labelOf(n))}${style}, fillcolor="${look.fill}", color="${look.stroke}", fontcolor="${look.text}"];`);
  }
  const dashedTo = new Set(model.nodes.filter((n) => LOOKS[n.state].dashed).map((n) => n.key));
  for (const e of model.edges) {
    const attrs = [
      ...(e.label ? [`label=${quote(e.label)}`] : []),
      ...(dashedTo.has(e.to) ? ['style=dashed'] : []),
      ...(e.cycle ? [`color="${CYCLE_COLOUR}"`, `fontcolor="${CYCLE_COLOUR}"`, 'penwidth=2'] : []),
    ];
    lines.push(`  ${quote(e.from)} -> ${quote(e.to)}${attrs.length > 0 ? ` [${attrs.join(', ')}]` : ''};`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

function usedStates(model: GraphModel): NodeState[] {
  const used = new Set(model.nodes.map((n) => n.state));
  return (Object.keys(LOOKS) as NodeState[]).filter((s) => used.has(s));
}

function quote(text: string): string {
  return `"${text.replace(/["\\]/g, '\\$&')}"`;
}
