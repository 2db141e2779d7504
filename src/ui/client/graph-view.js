// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- browser code: the project's TypeScript setup has no DOM types (docs/ui.md)
// @ts-nocheck
/* global document, CSS */
// One namespace's dependency graph: nodes are buttons (focusable, labelled,
// keyboard-operable) placed by the server's layout, edges an SVG behind them.
import { el, svg, STATE_TEXT } from './dom.js';

const W = 190;
const H = 46;
const COL = 260;
const ROW = 62;
const PAD = 12;
/** Room on the left for the loops of edges between nodes of one column (a cycle's). */
const LEFT = 48;

const pos = (n) => ({ x: LEFT + n.col * COL, y: PAD + n.row * ROW, row: n.row });

/** Draws `ns` (a NamespaceView) into `container`; `selected` is a node key; `onSelect(node)` on click or Enter. */
export function drawGraph(container, ns, selected, onSelect) {
  const focused = document.activeElement?.dataset?.key;
  container.replaceChildren();
  if (!ns || ns.nodes.length === 0) {
    container.append(el('p', { class: 'hint' }, 'No syncs in this namespace.'));
    return;
  }
  const byKey = new Map(ns.nodes.map((n) => [n.key, n]));
  const onCycle = new Set(ns.edges.filter((e) => e.cycle).flatMap((e) => [e.from, e.to]));
  const width = LEFT + PAD + (Math.max(...ns.nodes.map((n) => n.col)) + 1) * COL;
  const height = PAD * 2 + (Math.max(...ns.nodes.map((n) => n.row)) + 1) * ROW;
  container.append(edgesSvg(ns.edges, byKey, width, height));
  const sizer = el('div', { 'aria-hidden': 'true', style: { width: `${width}px`, height: `${height}px` } });
  container.append(sizer);
  const list = el('div', { role: 'list', 'aria-label': `Syncs of namespace ${ns.namespace}` });
  for (const n of ns.nodes) list.append(el('div', { role: 'listitem' }, nodeButton(n, n.key === selected, onCycle.has(n.key), onSelect)));
  container.append(list);
  if (focused) container.querySelector(`[data-key="${CSS.escape(focused)}"]`)?.focus({ preventScroll: true });
}

function nodeButton(n, pressed, cycle, onSelect) {
  const { x, y } = pos(n);
  const stateText = STATE_TEXT[n.state] ?? n.state;
  // A FleetSync: its clusters ready of those selected (a cluster not admitted yet has no child to count).
  const ready = n.readyClusters ?? (n.members ? `${n.members.ready}/${n.members.total}` : undefined);
  const members = ready ? ` · ${ready} clusters ready` : '';
  const extra = `${members}${n.pending.length > 0 ? ` · waits on ${n.pending.length}` : ''}`;
  return el(
    'button',
    {
      type: 'button',
      class: `node s-${n.state}${cycle ? ' on-cycle' : ''}`,
      style: { left: `${x}px`, top: `${y}px` },
      'data-key': n.key,
      'data-state': n.state,
      'aria-pressed': pressed ? 'true' : 'false',
      title: [n.label, stateText, n.reason, n.message].filter(Boolean).join(' — '),
      onclick: () => onSelect(n),
    },
    el('span', { class: 'name' }, n.label),
    el('span', { class: 'state' }, `${stateText}${cycle ? ' · cycle' : ''}${extra}`),
  );
}

function edgesSvg(edges, byKey, width, height) {
  const root = svg('svg', { width, height, 'aria-hidden': 'true', focusable: 'false' });
  const defs = svg('defs');
  for (const [id, colour] of [['arrow', '#555'], ['arrow-cycle', '#c62828'], ['arrow-unmet', '#8a5a00']]) {
    const marker = svg('marker', { id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
    marker.append(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: colour }));
    defs.append(marker);
  }
  root.append(defs);
  for (const e of edges) {
    const from = byKey.get(e.from);
    const to = byKey.get(e.to);
    if (!from || !to) continue;
    root.append(edgePath(e, pos(from), pos(to)));
    if (e.label) root.append(edgeLabel(e.label, pos(from), pos(to)));
  }
  return root;
}

/**
 * From the dependent's left side to the dependency's right side; within one
 * column (a cycle's edges), a loop on the left from side to side; to a column
 * further right (a cycle's edge back), a curve around.
 */
function edgePath(e, a, b) {
  const x1 = a.x;
  const y1 = a.y + H / 2;
  const y2 = b.y + H / 2;
  if (a.x === b.x) {
    // Upward loops further out than downward ones, so the two edges of a pair stay apart.
    const out = Math.min(LEFT - 4, 16 + 4 * Math.abs(a.row - b.row) + (a.row > b.row ? 14 : 0));
    return edgeElement(e, `M ${x1} ${y1 - 6} C ${x1 - out} ${y1 - 6}, ${x1 - out} ${y2 + 6}, ${x1} ${y2 + 6}`);
  }
  const x2 = b.x + W;
  const bend = Math.max(40, Math.abs(x1 - x2) / 2);
  const d = x2 <= x1 ? `M ${x1} ${y1} C ${x1 - bend} ${y1}, ${x2 + bend} ${y2}, ${x2} ${y2}` : `M ${x1} ${y1} C ${x1 - 60} ${y1 - 40}, ${x2 + 60} ${y2 + 40}, ${x2} ${y2}`;
  return edgeElement(e, d);
}

function edgeElement(e, d) {
  const kind = e.cycle ? 'cycle' : e.unmet ? 'unmet' : '';
  return svg('path', { d, class: `edge ${kind}`, 'marker-end': `url(#${kind ? `arrow-${kind}` : 'arrow'})`, 'data-from': e.from, 'data-to': e.to });
}

function edgeLabel(text, a, b) {
  const t = svg('text', { x: (a.x + b.x + W) / 2, y: (a.y + b.y + H) / 2 - 4, class: 'edge-label', 'text-anchor': 'middle' });
  t.textContent = text;
  return t;
}
