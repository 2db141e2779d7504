// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- browser code: the project's TypeScript setup has no DOM types (docs/ui.md)
// @ts-nocheck
/* global document, window, EventSource, CSS */
// The page: one event stream from the operator (the view, then each change),
// a namespace picker, the graph, the lists, and the selected sync's detail
// (read when selected, and again when that sync changes).
import { drawGraph } from './graph-view.js';
import { drawClusters, drawDetail, drawFleets, drawNotReady } from './panels.js';
import { el } from './dom.js';

const $ = (id) => document.getElementById(id);
const state = { view: undefined, version: -1, namespace: undefined, selected: undefined, selectedVersion: undefined };

function namespaceOf(key) {
  return key.split('/')[1];
}

function render() {
  const view = state.view;
  if (!view) return;
  const names = view.namespaces.map((n) => n.namespace);
  if (!state.namespace || !names.includes(state.namespace)) state.namespace = names[0];
  const select = $('ns');
  if (select.dataset.names !== names.join(',')) {
    select.replaceChildren(...names.map((n) => el('option', { value: n }, n)));
    select.dataset.names = names.join(',');
  }
  select.value = state.namespace ?? '';
  const ns = view.namespaces.find((n) => n.namespace === state.namespace);
  $('cycles').replaceChildren(...(ns?.cycles ?? []).map((c) => el('p', { class: 'cycle-list' }, `Cycle: ${c.join(' → ')}`)));
  drawGraph($('graph'), ns, state.selected, (n) => select_(n.key));
  drawNotReady($('notready'), view.notReady, select_);
  drawFleets($('fleets'), view.fleets ?? [], select_);
  drawClusters($('clusters'), view.clusters, select_);
  refreshDetail();
}

function nodeOf(key) {
  const ns = state.view?.namespaces.find((n) => n.namespace === namespaceOf(key));
  // A FleetSync's children are not graph nodes: they are listed under it.
  const child = (state.view?.fleets ?? []).flatMap((f) => f.children).find((c) => c.key === key);
  return ns?.nodes.find((n) => n.key === key) ?? child;
}

function select_(key) {
  state.selected = key;
  state.selectedVersion = undefined;
  state.namespace = namespaceOf(key);
  render();
  document.querySelector(`#graph [data-key="${CSS.escape(key)}"]`)?.focus();
}

/** Reads the selected sync's detail when it is newly selected or has changed since. */
async function refreshDetail() {
  const key = state.selected;
  const node = key && nodeOf(key);
  if (!node) return;
  const version = node.resourceVersion ?? 'none';
  if (state.selectedVersion === version) return;
  state.selectedVersion = version;
  const q = new URLSearchParams({ kind: node.kind, namespace: node.namespace, name: node.name });
  const res = await fetch(`/api/sync?${q}`);
  if (state.selected !== key) return;
  const detail = $('detail');
  if (!res.ok) {
    detail.replaceChildren(el('p', {}, `${node.label}: ${(await res.json()).error ?? res.statusText}`));
    return;
  }
  drawDetail(detail, await res.json());
  detail.dataset.key = key;
}

function connect() {
  const live = $('live');
  const source = new EventSource('/api/stream');
  source.addEventListener('view', (ev) => {
    const { view, version } = JSON.parse(ev.data);
    state.view = view;
    state.version = version;
    live.textContent = `live · ${view.namespaces.reduce((s, n) => s + n.nodes.length, 0)} syncs · updated ${new Date().toLocaleTimeString()}`;
    live.dataset.version = String(version);
    render();
  });
  // EventSource reconnects by itself; say so meanwhile.
  source.addEventListener('error', () => {
    live.textContent = 'disconnected: reconnecting…';
  });
}

$('ns').addEventListener('change', (ev) => {
  state.namespace = ev.target.value;
  render();
});
window.syncprimsUi = state;
connect();
