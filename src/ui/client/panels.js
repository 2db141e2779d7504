// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- browser code: the project's TypeScript setup has no DOM types (docs/ui.md)
// @ts-nocheck
// The lists beside the graph: what is not Ready, the FleetSyncs and their children, the remote clusters, and the selected sync.
import { ago, badge, el, table } from './dom.js';

/** A sync's name as a button that selects it. */
function pick(item, onPick) {
  return el('button', { type: 'button', class: 'linkish', 'data-pick': item.key, onclick: () => onPick(item.key) }, `${item.kind}/${item.namespace ? `${item.namespace}/` : ''}${item.name}`);
}

export function drawNotReady(container, items, onPick) {
  container.replaceChildren(
    items.length === 0
      ? el('p', {}, 'Every sync is Ready.')
      : table(
          'Syncs that are not Ready',
          ['Sync', 'State', 'Reason', 'Since'],
          items.map((i) => [pick(i, onPick), badge(i.state), el('span', { title: i.message ?? '' }, i.reason ?? '-'), ago(i.since)]),
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
        el('p', { title: f.message ?? '' }, `${f.phase ?? f.reason ?? 'no status yet'}${f.progress ? ` · ${f.progress}` : ''} · ${f.readyClusters} clusters ready`, f.clusters?.failed ? ` · ${f.clusters.failed} failed` : '', f.clusters?.unreachable ? ` · ${f.clusters.unreachable} unreachable` : ''),
        f.failures.length === 0 ? null : el('ul', { class: 'failures' }, f.failures.map((x) => el('li', { title: x.message }, `${x.cluster}: ${x.reason}`))),
        el('ul', {}, f.children.map((c) => el('li', { 'data-cluster': c.cluster }, `${c.cluster}: `, pick(c, onPick), ' ', badge(c.state)))),
      ),
    ),
  );
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
    table('Conditions', ['Type', 'Status', 'Reason', 'Message', 'Since'], d.conditions.map((c) => [c.type, c.status, c.reason, c.message, ago(c.lastTransitionTime)])),
    ...summary(d),
    el('h3', {}, `Inventory (${d.inventoryTotal})`),
    d.inventoryNote ? el('p', { class: 'hint' }, d.inventoryNote) : null,
    d.inventory.length === 0 ? el('p', {}, 'No objects.') : table('Inventory', ['Object', 'kstatus', 'Message'], d.inventory.map((o) => [`${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`, o.status, o.message])),
    el('h3', {}, 'Recent Events'),
    d.eventsError ? el('p', {}, `Events could not be read: ${d.eventsError}`) : null,
    d.events.length === 0 ? el('p', {}, 'No Events.') : table('Recent Events', ['Type', 'Reason', 'Message', 'Count', 'Last seen'], d.events.map((e) => [e.type, e.reason, e.message, e.count ?? '-', ago(e.lastSeen)])),
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
      // Wider than a phone's window: it scrolls in its own box (focusable, so that a keyboard can scroll it).
      el(
        'div',
        { class: 'table-scroll', role: 'region', 'aria-label': 'Rollout waves', tabindex: 0 },
        table('Rollout waves, in order', ['Wave', 'Clusters', 'Updated', 'Ready', 'Failed', 'Unreachable', 'Soak', 'Approval'], waves, (i) =>
          r.waves[i].current ? { class: 'current', 'aria-current': 'step', 'data-wave': r.waves[i].name } : { 'data-wave': r.waves[i].name },
        ),
      ),
    ),
  ];
}
