// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- browser code: the project's TypeScript setup has no DOM types (docs/ui.md)
// @ts-nocheck
// The lists beside the graph: what is not Ready, the FleetSyncs and their children, the remote clusters, and the selected sync.
import { ago, badge, el, scrolling, table } from './dom.js';

/** A sync's name as a button that selects it: `Kind/namespace/name`, broken only after a `/`, each part cut short with an ellipsis where it cannot fit (the whole name in its title). */
function pick(item, onPick) {
  const full = `${item.kind}/${item.namespace ? `${item.namespace}/` : ''}${item.name}`;
  return el('button', { type: 'button', class: 'linkish', title: full, 'data-pick': item.key, onclick: () => onPick(item.key) }, nameParts(full));
}

/** `a/b/c` as spans that do not break inside, with a break opportunity after each `/`. */
function nameParts(full) {
  const parts = full.split('/');
  return parts.flatMap((p, i) => (i < parts.length - 1 ? [el('span', { class: 'part' }, `${p}/`), el('wbr')] : [el('span', { class: 'part' }, p)]));
}

export function drawNotReady(container, items, onPick) {
  container.replaceChildren(
    items.length === 0
      ? el('p', {}, 'Every sync is Ready.')
      : el(
          'div',
          { class: 'not-ready' },
          table(
            'Syncs that are not Ready',
            ['Sync', 'State', 'Reason', 'Since'],
            items.map((i) => [pick(i, onPick), badge(i.state), el('span', { class: 'reason', title: i.message ? `${i.reason ?? '-'}: ${i.message}` : (i.reason ?? '') }, i.reason ?? '-'), ago(i.since)]),
          ),
        ),
  );
}

export function drawFleets(container, fleets, onPick) {
  if (fleets.length === 0) {
    container.replaceChildren(el('p', {}, 'No FleetSyncs.'));
    return;
  }
  container.replaceChildren(
    ...fleets.map((f) =>
      el(
        'article',
        { class: 'fleet', 'data-fleet': f.key },
        el('h3', {}, pick({ key: f.key, kind: 'FleetSync', namespace: f.namespace, name: f.name }, onPick), ' ', badge(f.state)),
        el('p', { class: 'fleet-summary' }, `${f.phase ?? f.reason ?? 'no status yet'}${f.progress ? ` · ${f.progress}` : ''} · ${f.readyClusters} clusters ready`, f.clusters?.failed ? ` · ${f.clusters.failed} failed` : '', f.clusters?.unreachable ? ` · ${f.clusters.unreachable} unreachable` : ''),
        f.message ? el('p', { class: 'fleet-message' }, f.message) : null,
        fleetClusters(f, onPick),
      ),
    ),
  );
}

/** One row per cluster: its wave, its child (selectable), its values, the overrides that select it, and why it fails. */
function fleetClusters(f, onPick) {
  const rows = f.clusterRows ?? [];
  if (rows.length === 0) return el('p', {}, 'No cluster selected.');
  const children = new Map(f.children.map((c) => [c.key, c]));
  const cells = rows.map((r) => {
    const child = r.child && children.get(r.child);
    return [
      child ? el('button', { type: 'button', class: 'linkish', title: child.label, 'data-pick': child.key, onclick: () => onPick(child.key) }, r.name) : r.name,
      r.wave ?? '-',
      child ? badge(child.state) : el('span', { class: 'hint' }, 'no child'),
      values(r, f.valuesKnown),
      r.overrides.length === 0 ? '-' : el('ul', { class: 'plain' }, r.overrides.map((o) => el('li', { title: `overrides[${o.index}]: ${o.first}${o.patches > 1 ? ` and ${o.patches - 1} more` : ''}` }, el('code', {}, `#${o.index}`), ` ${o.first}`, o.patches > 1 ? ` (+${o.patches - 1})` : ''))),
      r.problem ? el('span', { class: 'problem', title: `${r.problem.reason}: ${r.problem.message}` }, el('strong', {}, r.problem.reason), ` ${r.problem.message}`) : '-',
    ];
  });
  const attrs = (i) => ({ 'data-cluster': rows[i].name, class: rows[i].problem ? 'failing' : undefined });
  return scrolling(`Clusters of FleetSync ${f.name}`, table(`Clusters of FleetSync ${f.namespace}/${f.name}`, ['Cluster', 'Wave', 'Child', 'Values', 'Overrides', 'Problem'], cells, attrs, [0, 1, 2]));
}

/** A cluster's values but cluster_name (its name, in the first column), as `key=value`. */
function values(r, known) {
  if (!r.values) return el('span', { class: 'hint' }, known ? 'not in the inventory' : 'not read yet');
  const entries = Object.entries(r.values).filter(([k]) => k !== 'cluster_name');
  if (entries.length === 0) return '-';
  return el('ul', { class: 'plain values' }, entries.map(([k, v]) => el('li', { title: `${k}=${v}` }, el('code', {}, `${k}=${v}`))));
}

export function drawClusters(container, clusters, onPick) {
  if (clusters.length === 0) {
    container.replaceChildren(el('p', {}, 'No RemoteSync or ProxySync names a cluster.'));
    return;
  }
  container.replaceChildren(
    ...clusters.map((c) =>
      el(
        'article',
        { class: 'cluster', 'data-cluster': c.key, 'data-reachable': c.reachable === undefined ? 'unknown' : String(c.reachable) },
        el('h3', {}, `${c.namespace}/${c.name}`),
        el('p', {}, reachability(c)),
        el('ul', {}, c.syncs.map((s) => el('li', {}, pick({ ...s, namespace: c.namespace }, onPick), ' ', badge(s.state)))),
      ),
    ),
  );
}

function reachability(c) {
  if (c.reachable === false) {
    const last = !c.lastReached ? '' : c.lastReached === 'never' ? ' (never reached)' : ` (last reached ${c.lastReached})`;
    return el('span', { class: 'unreachable', title: c.message ?? '' }, 'Unreachable', c.since ? [' · found ', ago(c.since)] : '', last);
  }
  if (c.reachable === true) return el('span', { class: 'reachable', title: c.lastReached ? `answered at ${c.lastReached}` : '' }, 'Reachable');
  return el('span', {}, 'Not tried yet');
}

export function drawDetail(container, d) {
  const rows = [
    ['Kind', d.kind],
    ['Name', `${d.namespace}/${d.name}`],
    ['Generation', `${d.generation ?? '-'} (observed ${d.observedGeneration ?? '-'})`],
    ['Applied revision', d.lastAppliedRevision ?? '-'],
    ['Attempted revision', d.lastAttemptedRevision ?? '-'],
    ...(d.cluster ? [['Cluster', d.cluster]] : []),
  ];
  const parts = [
    el('dl', {}, rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])),
    ...rollout(d.rollout),
    el('h3', {}, 'Conditions'),
    scrolling('Conditions', table('Conditions', ['Type', 'Status', 'Reason', 'Message', 'Since'], d.conditions.map((c) => [c.type, c.status, c.reason, c.message, ago(c.lastTransitionTime)]), undefined, [0, 1, 2, 4])),
    ...summary(d),
    el('h3', {}, `Inventory (${d.inventoryTotal})`),
    d.inventoryNote ? el('p', { class: 'hint' }, d.inventoryNote) : null,
    d.inventory.length === 0 ? el('p', {}, 'No objects.') : table('Inventory', ['Object', 'kstatus', 'Message'], d.inventory.map((o) => [`${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`, o.status, o.message])),
    el('h3', {}, 'Recent Events'),
    d.eventsError ? el('p', {}, `Events could not be read: ${d.eventsError}`) : null,
    d.events.length === 0 ? el('p', {}, 'No Events.') : scrolling('Recent Events', table('Recent Events', ['Type', 'Reason', 'Message', 'Count', 'Last seen'], d.events.map((e) => [e.type, e.reason, e.message, e.count ?? '-', ago(e.lastSeen)]), undefined, [0, 1, 3, 4])),
  ];
  container.replaceChildren(...parts.filter(Boolean));
}

function summary(d) {
  const out = [];
  if (d.summary) {
    const s = d.summary;
    out.push(el('h3', {}, d.kind === 'ProxySync' ? 'Remote summary (mirrored)' : 'Summary'));
    out.push(el('p', {}, `${s.total} objects: ${s.current} Current, ${s.inProgress} InProgress, ${s.failed} Failed, ${s.terminating} Terminating, ${s.notFound} NotFound, ${s.unknown} Unknown`));
  }
  if (d.remote) out.push(el('p', {}, `Remote Sync ${d.remote.namespace}/${d.remote.name} in ${d.remote.cluster}`));
  return out;
}

/** A FleetSync rolling out in waves: its phase, message, revisions and one row per wave, the current one marked. */
function rollout(r) {
  if (!r) return [];
  const rows = [
    ['Phase', r.phase],
    ['Progress', r.progress],
    ['Message', r.message ?? '-'],
    ['Current revision', r.currentRevision ?? '-'],
    ['Update revision', r.updateRevision ?? '-'],
  ];
  const waves = r.waves.map((w) => [
    w.current ? [w.name, el('span', { class: 'current-mark' }, ' (current)')] : w.name,
    w.clusters,
    `${w.updated}/${w.clusters}`,
    `${w.ready}/${w.clusters}`,
    w.failed,
    w.unreachable,
    w.soak,
    w.approval,
  ]);
  return [
    el(
      'section',
      { class: 'rollout', 'aria-labelledby': 'rollout-h', 'data-phase': r.phase },
      el('h3', { id: 'rollout-h' }, 'Rollout'),
      el('dl', {}, rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])),
      scrolling(
        'Rollout waves',
        table('Rollout waves, in order', ['Wave', 'Clusters', 'Updated', 'Ready', 'Failed', 'Unreachable', 'Soak', 'Approval'], waves, (i) =>
          r.waves[i].current ? { class: 'current', 'aria-current': 'step', 'data-wave': r.waves[i].name } : { 'data-wave': r.waves[i].name },
        ),
      ),
    ),
  ];
}
