// The text view of `syncprims tree`: box-drawing lines as `flux tree` draws
// them, state coloured only when `style` says so (a terminal). Pure.
import type { HealthStatus } from '../../apply/health.js';
import { displayNode, parseNodeKey } from '../../deps/refs.js';
import { shortRevision } from '../format.js';
import type { Style } from '../terminal.js';
import type { AppliedObject, ClusterView, FleetChildTree, Forest, RelatedSync, SyncState, SyncTree, Tree, UnmadeCluster } from '../../views/tree-model.js';
import { groupByWave, waveCounts, type WaveView } from '../../views/rollout-view.js';

/** A line of the tree and the lines under it. */
export interface TextNode {
  text: string;
  children?: TextNode[];
}

/** Draws a tree: the root's line, then each child under `├──` / `└──`. */
export function drawTree(root: TextNode, style: Style): string[] {
  const lines = [root.text];
  const walk = (nodes: TextNode[], prefix: string): void => {
    nodes.forEach((node, i) => {
      const last = i === nodes.length - 1;
      lines.push(`${prefix}${style.dim(last ? '└── ' : '├── ')}${node.text}`);
      walk(node.children ?? [], `${prefix}${style.dim(last ? '    ' : '│   ')}`);
    });
  };
  walk(root.children ?? [], '');
  return lines;
}

/** The lines of `syncprims tree`. */
export function renderTree(tree: Tree, style: Style): string[] {
  const sections: TextNode[] = [];
  if (tree.cycle) {
    const path = tree.cycle.map((key) => displayKey(key, tree.namespace)).join(' → ');
    sections.push({ text: style.red(`cycle: ${path}`) });
  }
  if (tree.dependsOn.length > 0) sections.push({ text: 'depends on', children: tree.dependsOn.map((d) => relatedNode(d, 'dependsOn', tree.namespace, style)) });
  if (tree.dependents.length > 0) sections.push({ text: 'depended on by', children: tree.dependents.map((d) => relatedNode(d, 'dependents', tree.namespace, style)) });
  sections.push(...appliedNodes(tree, style, true));
  const root = { text: `${tree.kind}/${tree.namespace}/${tree.name}${gap}${stateText(tree, style)}`, children: sections };
  return drawTree(root, style);
}

/** The lines of `syncprims tree` with no name: each root's state and what it has (a FleetSync's children under it). */
export function renderForest(forest: Forest, style: Style): string[] {
  if (forest.roots.length === 0) return [style.dim(`no syncs in namespace ${forest.namespace}`)];
  return forest.roots.flatMap((root) => drawTree({ text: `${root.kind}/${root.namespace}/${root.name}${gap}${stateText(root, style)}`, children: appliedNodes(root, style, true) }, style));
}

const gap = '  ';

/** `Ready=True  Succeeded  sha256:0123456789ab`, and the message when not Ready. */
export function stateText(state: Partial<SyncState>, style: Style): string {
  const colour = state.ready === 'True' ? style.green : state.ready === 'False' ? style.red : style.yellow;
  const parts = [state.ready ? colour(`Ready=${state.ready}`) : style.yellow('no status yet')];
  if (state.reason) parts.push(colour(state.reason));
  if (state.phase && state.phase !== state.reason) parts.push(colour(state.phase));
  if (state.progress) parts.push(`${state.progress} updated`);
  if (state.clusters) parts.push(`${state.clusters} clusters ready`);
  if (state.revision) parts.push(style.dim(shortRevision(state.revision)));
  const text = parts.join(gap);
  return state.ready !== 'True' && state.message ? `${text} — ${oneLine(state.message)}` : text;
}

function relatedNode(node: RelatedSync, direction: 'dependsOn' | 'dependents', namespace: string, style: Style): TextNode {
  const name = displayKey(`${node.kind}/${node.namespace}/${node.name}`, namespace);
  const notes: string[] = [node.missing ? style.red('not found') : stateText(node, style)];
  if (node.requiredStatus === 'InProgress') notes.push(style.dim('(requiredStatus InProgress)'));
  if (node.unmet && !node.missing) notes.push(style.yellow(`(${direction === 'dependsOn' ? 'unmet' : 'waits'}: ${node.unmet})`));
  if (node.cycle) notes.push(style.red('↺ cycle'));
  if (node.shownAbove) notes.push(style.dim('(shown above)'));
  const text = [name, ...notes].join(gap);
  const next = (direction === 'dependsOn' ? node.dependsOn : node.dependents) ?? [];
  return next.length > 0 ? { text, children: next.map((n) => relatedNode(n, direction, namespace, style)) } : { text };
}

/** What a sync applied: its objects (under a header for the root), or its cluster and the objects there. */
function appliedNodes(sync: SyncTree, style: Style, root: boolean): TextNode[] {
  const out: TextNode[] = [];
  if (!root && sync.pending?.length) out.push({ text: style.yellow(`waiting for ${sync.pending.join(', ')}`) });
  if (sync.notFollowed) return [...out, { text: style.dim(`not followed: ${sync.notFollowed}`) }];
  if (sync.children && sync.waves?.length) return [...out, wavesNode(sync.waves, clusterEntries(sync.children, sync.unmade), style)];
  if (sync.children) return [...out, childrenNode(clusterEntries(sync.children, sync.unmade), style)];
  const objects = (sync.objects ?? []).map((o) => objectNode(o, style));
  if (sync.cluster) return [...out, clusterNode(sync.cluster, objects, style)];
  if (!root) return [...out, ...objects];
  return [...out, objects.length > 0 ? { text: `applied (${objects.length})`, children: objects } : { text: style.dim('applied: no objects') }];
}

/** One cluster of a FleetSync: its child, and why its template cannot be made (a cluster with no child yet may have only that). */
interface ClusterEntry {
  clusterName: string;
  child?: FleetChildTree;
  unmade?: UnmadeCluster;
}

/** The children, and the clusters whose template cannot be made that have none, by cluster name. */
function clusterEntries(children: FleetChildTree[], unmade: UnmadeCluster[] = []): ClusterEntry[] {
  const why = new Map(unmade.map((u) => [u.cluster, u]));
  const entries: ClusterEntry[] = children.map((c) => ({ clusterName: c.clusterName, child: c, ...(why.has(c.clusterName) ? { unmade: why.get(c.clusterName) } : {}) }));
  const withChild = new Set(children.map((c) => c.clusterName));
  for (const u of unmade) if (!withChild.has(u.cluster)) entries.push({ clusterName: u.cluster, unmade: u });
  return entries.sort((a, b) => a.clusterName.localeCompare(b.clusterName));
}

/** A FleetSync's children: per cluster, the child's kind/name and state, and what it has in its cluster. */
function childrenNode(entries: ClusterEntry[], style: Style): TextNode {
  if (entries.length === 0) return { text: style.dim('clusters: no children (no cluster selected yet)') };
  return {
    text: `clusters (${entries.length})`,
    children: entries.map((c) => childNode(c, style)),
  };
}

/** One cluster's child: its kind/name and state, and what it has in its cluster; first, why its template cannot be made. */
function childNode({ clusterName, child, unmade }: ClusterEntry, style: Style): TextNode {
  const problem = unmade ? [{ text: style.red(`${unmade.reason}: ${oneLine(unmade.message)}`) }] : [];
  if (!child) return { text: [clusterName, style.red('no child: its template cannot be made')].join(gap), children: problem };
  const text = [clusterName || style.dim('(no cluster label)'), `${child.sync.kind}/${child.sync.name}`, stateText(child.sync, style)].join(gap);
  const under = [...problem, ...appliedNodes(child.sync, style, false)];
  return under.length > 0 ? { text, children: under } : { text };
}

/** A FleetSync rolling out in waves: each wave, in order, with its children under it (those of no wave last). */
function wavesNode(waves: WaveView[], entries: ClusterEntry[], style: Style): TextNode {
  const groups = groupByWave(entries, (c) => c.clusterName, waves);
  return {
    text: `waves (${waves.length})`,
    children: groups.map(({ wave, items }) => {
      const text = wave ? waveText(wave, style) : style.dim(`in no wave (${items.length})`);
      const under = items.map((c) => childNode(c, style));
      return under.length > 0 ? { text, children: under } : { text };
    }),
  };
}

/** `canary  1/1 updated, 1/1 ready, 0 failed, 0 unreachable  soak until …  approved  ◀ the rollout is here`. */
function waveText(w: WaveView, style: Style): string {
  const colour = w.failed > 0 ? style.red : w.done ? style.green : style.yellow;
  const parts = [w.name, colour(waveCounts(w))];
  if (w.soakUntil) parts.push(`soak until ${w.soakUntil}`);
  if (w.approval === 'approved') parts.push(w.approvedBy ? `approved by ${w.approvedBy}` : 'approved');
  if (w.approval === 'required') parts.push(style.yellow('needs approval'));
  if (w.current) parts.push(style.bold('◀ the rollout is here'));
  return parts.join(gap);
}

function clusterNode(cluster: ClusterView, objects: TextNode[], style: Style): TextNode {
  const where = cluster.server ? `cluster ${cluster.server}${cluster.kubeconfig ? ` (${cluster.kubeconfig})` : ''}` : 'cluster';
  if (cluster.problem) {
    const message = oneLine(cluster.message ?? '');
    // remoteFailure's lines begin with what went wrong (`unreachable: ...`): said once.
    const text = `${where}: ${style.red(message.startsWith(cluster.problem) ? message : `${cluster.problem}: ${message}`)}`;
    return objects.length > 0 ? { text, children: objects } : { text };
  }
  if (objects.length === 0) return { text: `${where}: ${style.dim('no objects applied')}` };
  return { text: `applied in ${where}`, children: objects };
}

function objectNode(obj: AppliedObject, style: Style): TextNode {
  const name = obj.namespace ? `${obj.kind}/${obj.namespace}/${obj.name}` : `${obj.kind}/${obj.name}`;
  if (obj.sync) {
    const children = appliedNodes(obj.sync, style, false);
    const text = `${name}${gap}${stateText(obj.sync, style)}`;
    return children.length > 0 ? { text, children } : { text };
  }
  const status = statusColour(obj.status, style)(obj.status);
  if (obj.status === 'Current') return { text: `${name}${gap}${status}` };
  // The health message names the object first (`Deployment web: ...`): said once is enough.
  const message = obj.message.startsWith(`${obj.kind} ${obj.name}: `) ? obj.message.slice(obj.kind.length + obj.name.length + 3) : obj.message;
  return { text: `${name}${gap}${status} — ${oneLine(message)}` };
}

function statusColour(status: HealthStatus, style: Style): (text: string) => string {
  if (status === 'Current') return style.green;
  if (status === 'Failed' || status === 'NotFound') return style.red;
  return style.yellow;
}

/** `Kind/name` in `namespace`, `Kind/namespace/name` outside it. */
function displayKey(key: string, namespace: string): string {
  return displayNode(parseNodeKey(key), namespace);
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
