// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- browser code: the project's TypeScript setup has no DOM types (docs/ui.md)
// @ts-nocheck
/* global document */
// Small helpers to build DOM nodes (text is always set as text, never as HTML).

export const STATE_TEXT = {
  ready: 'Ready',
  progressing: 'Progressing',
  waiting: 'Waiting on dependencies',
  failed: 'Failed',
  suspended: 'Suspended',
  missing: 'Not found',
  unknown: 'Not in the cache',
};

/** el('p', {class: 'x'}, 'text', child...) */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    // Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
    else if (k === 'style') Object.assign(node.style, v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(typeof c === 'string' || typeof c === 'number' ? String(c) : c);
  }
  return node;
}

export function svg(tag, attrs = {}) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

/**
 * A table with a header row; `rows` are arrays of cells (strings or nodes); `rowAttrs(i)` gives a row its attributes;
 * the cells of the columns `nowrap` (indexes: names, reasons, times) are not broken.
 */
export function table(caption, header, rows, rowAttrs = () => ({}), nowrap = []) {
  return el(
    'table',
    {},
    el('caption', { class: 'visually-hidden' }, caption),
    el('thead', {}, el('tr', {}, header.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, rows.map((r, i) => el('tr', rowAttrs(i), r.map((c, j) => el('td', nowrap.includes(j) ? { class: 'nowrap' } : {}, c ?? '-'))))),
  );
}

/** A table wider than a phone's window, in a box of its own that scrolls (focusable, so that a keyboard can scroll it). */
export function scrolling(label, content) {
  return el('div', { class: 'table-scroll', role: 'region', 'aria-label': label, tabindex: 0 }, content);
}

/** `2026-01-02T03:04:05Z` as `5m ago` (and the full time as its title). */
export function ago(timestamp, now = Date.now()) {
  if (!timestamp) return '-';
  const at = Date.parse(timestamp);
  if (Number.isNaN(at)) return timestamp;
  const s = Math.max(0, Math.round((now - at) / 1000));
  const text = s < 60 ? `${s}s ago` : s < 3600 ? `${Math.floor(s / 60)}m ago` : s < 86400 ? `${Math.floor(s / 3600)}h ago` : `${Math.floor(s / 86400)}d ago`;
  return el('time', { datetime: timestamp, title: timestamp }, text);
}

export function badge(state) {
  return el('span', { class: `badge s-${state}` }, STATE_TEXT[state] ?? state);
}
