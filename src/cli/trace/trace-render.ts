// The text view of `syncprims trace`: a block for the object, then one for
// each sync above it (as `flux trace` prints them), `---` between. Pure.
import { shortRevision } from '../format.js';
import type { Style } from '../terminal.js';
import type { Trace, TraceLink, TracedObject } from './trace-chain.js';

const WIDTH = 13;

export function renderTrace(trace: Trace, style: Style): string[] {
  const links = trace.appliedBy;
  const o = trace.object;
  const names = [`${o.kind}/${o.namespace ? `${o.namespace}/` : ''}${o.name}`, ...links.map((l) => `${l.kind}/${l.namespace}/${l.name}`)];
  const blocks = [objectBlock(o, links[0], style), ...links.map((link, i) => linkBlock(link, names[i] ?? '', links[i + 1], style))];
  return blocks.flatMap((b, i) => (i === 0 ? b : ['---', ...b]));
}

function field(label: string, value: string): string {
  return `${`${label}:`.padEnd(WIDTH)}${value}`;
}

function objectBlock(obj: TracedObject, first: TraceLink | undefined, style: Style): string[] {
  const lines = [field('Object', `${obj.kind}/${obj.name}`)];
  if (obj.namespace) lines.push(field('Namespace', obj.namespace));
  lines.push(field('Cluster', obj.server));
  lines.push(field('Applied by', first ? owner(first) : style.red('no sync (no syncprims.dev/owner-* labels)')));
  return lines;
}

function linkBlock(link: TraceLink, applied: string, next: TraceLink | undefined, style: Style): string[] {
  const lines = [field(link.kind, link.name), field('Namespace', link.namespace), ...clusterLine(link)];
  if (!link.found) return [...lines, field('Status', style.red(link.server ? 'not found' : 'not looked up'))];
  const colour = link.ready === 'True' ? style.green : link.ready === 'False' ? style.red : style.yellow;
  const facts: [string, string | undefined][] = [
    ['Target', link.target],
    ['Keeps', link.remoteSync && `${link.remoteSync} there`],
    ['Source', link.source],
    ['Paths', link.paths?.join(', ')],
    ['Revision', link.revision ? shortRevision(link.revision) : '-'],
    ['Attempting', link.attemptedRevision && shortRevision(link.attemptedRevision)],
    ['Inventory', link.listsObject ? `lists ${applied}` : style.yellow(`does not list ${applied}`)],
    ['Ready', colour(link.ready ?? 'no status yet') + (link.suspended ? style.yellow(' (suspended)') : '')],
    ['Reason', link.reason && colour(link.reason)],
    ['Message', link.message?.replace(/\s*\n\s*/g, ' ')],
    ['Applied by', next && owner(next)],
  ];
  return [...lines, ...facts.flatMap(([label, value]) => (value === undefined ? [] : [field(label, value)]))];
}

/** Where the sync is: its server, and whether it was reached as the managing cluster of an origin. */
function clusterLine(link: TraceLink): string[] {
  const managing = link.origin !== undefined ? `managing cluster, id ${link.origin}` : undefined;
  if (link.server) return [field('Cluster', managing ? `${link.server} (${managing})` : link.server)];
  return managing ? [field('Cluster', `the ${managing} (not given: --mgmt-kubeconfig)`)] : [];
}

function owner(link: TraceLink): string {
  return `${link.kind} ${link.namespace}/${link.name}${link.origin !== undefined ? ' (in the managing cluster)' : ''}`;
}
