import { KIND_NAMES, type Kind } from '../../api/kinds.js';
import type { KubeClient } from '../../kube/client.js';
import { ApiError, TransportError } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/resources.js';
import type { WatchEventType } from '../../kube/watch-stream.js';
import { errorLine, findCause } from '../errors.js';
import type { OutputFormat } from '../options.js';
import { toJson, toYaml } from '../output.js';
import { listSyncs, withKind } from '../../views/sync-api.js';
import { syncRow } from '../../views/sync-rows.js';
import { rowCells, tableHeader, type RowFilter, type TableShape } from './sync-table.js';
import { columnWidths, formatRow } from '../table.js';
import { styleFor, type Style } from '../terminal.js';
import { MAX_BACKOFF_MS, sleep, syncWatch } from '../watch-events.js';

/**
 * `get --watch`: after the list, one line per change until SIGINT or
 * SIGTERM. One watch per kind from the list's resourceVersion; a watch that
 * ends is resumed, an expired one (410) relisted, a cluster that stops
 * answering retried with a capped backoff (said once on stderr).
 */

export interface FollowOptions {
  kinds: Kind[];
  /** Undefined: every namespace. */
  namespace?: string;
  name?: string;
  resourceVersions: Map<Kind, string>;
  filter: RowFilter;
  output: OutputFormat;
  allNamespaces: boolean;
  wide: boolean;
  /** Every object read by the list (shown or not). */
  initial: KubeObject[];
  /** The column widths of the table already printed; undefined when none was. */
  widths?: number[];
}


export async function followSyncs(client: KubeClient, opts: FollowOptions): Promise<void> {
  const abort = new AbortController();
  const stop = (): void => abort.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const printer = new ChangePrinter(opts, styleFor(process.stdout));
  try {
    await Promise.all(
      opts.kinds.map((kind) =>
        followKind(client, kind, opts, printer, abort.signal).catch((err: unknown) => {
          abort.abort();
          throw err;
        }),
      ),
    );
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

async function followKind(client: KubeClient, kind: Kind, opts: FollowOptions, printer: ChangePrinter, signal: AbortSignal): Promise<void> {
  let resourceVersion = opts.resourceVersions.get(kind) ?? '';
  let failures = 0;
  while (!signal.aborted) {
    try {
      resourceVersion = await watchOnce(client, kind, resourceVersion, opts, printer, signal);
      failures = 0;
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiError && err.gone) {
        resourceVersion = await relist(client, kind, opts, printer);
        continue;
      }
      if (!findCause(err, TransportError)) throw err;
      if (++failures === 1) process.stderr.write(`syncprims: watching ${KIND_NAMES[kind].plural}: ${errorLine(err)}; retrying\n`);
      await sleep(Math.min(MAX_BACKOFF_MS, 500 * 2 ** failures) * (1 + Math.random() * 0.2), signal);
    }
  }
}

/** One watch stream, until the server ends it; returns the last resourceVersion seen. */
async function watchOnce(client: KubeClient, kind: Kind, from: string, opts: FollowOptions, printer: ChangePrinter, signal: AbortSignal): Promise<string> {
  let resourceVersion = from;
  for await (const event of syncWatch(client, { kind, namespace: opts.namespace, name: opts.name }, resourceVersion, signal)) {
    resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion;
    if (event.type !== 'BOOKMARK') printer.change(event.type, withKind(event.object, kind));
  }
  return resourceVersion;
}

/** After a 410: the list again, printed as changes against what is known. */
async function relist(client: KubeClient, kind: Kind, opts: FollowOptions, printer: ChangePrinter): Promise<string> {
  const list = await listSyncs(client, kind, opts.namespace);
  const items = list.items.filter((o) => opts.name === undefined || o.metadata.name === opts.name);
  printer.replace(kind, items);
  return list.resourceVersion;
}

/** Prints a change unless it shows nothing new (a status write that changed no column). */
class ChangePrinter {
  private widths: number[] | undefined;
  private readonly shown = new Map<string, string>();
  private readonly known = new Map<string, KubeObject>();

  constructor(
    private readonly opts: FollowOptions,
    private readonly style: Style,
  ) {
    this.widths = opts.widths;
    for (const obj of opts.initial) {
      this.known.set(keyOf(obj), obj);
      if (opts.filter(syncRow(obj))) this.shown.set(keyOf(obj), this.signature(obj, undefined));
    }
  }

  change(type: WatchEventType, obj: KubeObject): void {
    const key = keyOf(obj);
    if (type === 'DELETED') this.known.delete(key);
    else this.known.set(key, obj);
    if (type !== 'DELETED' && !this.opts.filter(syncRow(obj))) return;
    const reason = type === 'DELETED' ? 'Deleted' : undefined;
    const signature = this.signature(obj, reason);
    if (this.shown.get(key) === signature) return;
    this.shown.set(key, signature);
    this.write(obj, reason);
  }

  /** A relisted kind: what changed, appeared or went since it was last known. */
  replace(kind: Kind, items: KubeObject[]): void {
    const present = new Set(items.map(keyOf));
    for (const [key, obj] of this.known) {
      if (obj.kind === kind && !present.has(key)) this.change('DELETED', obj);
    }
    for (const obj of items) this.change('MODIFIED', obj);
  }

  private get shape(): TableShape {
    return { allNamespaces: this.opts.allNamespaces, wide: this.opts.wide };
  }

  private signature(obj: KubeObject, reason: string | undefined): string {
    return rowCells(syncRow(obj), { ...this.shape, style: this.style, now: 0, reason }).slice(0, -1).join('\u0000');
  }

  private write(obj: KubeObject, reason: string | undefined): void {
    if (this.opts.output === 'json') return void process.stdout.write(toJson(obj));
    if (this.opts.output === 'yaml') return void process.stdout.write(`---\n${toYaml(obj)}`);
    const cells = rowCells(syncRow(obj), { ...this.shape, style: this.style, reason });
    if (!this.widths) {
      const header = tableHeader(this.shape);
      this.widths = columnWidths([header, cells]);
      process.stdout.write(`${formatRow(header, this.widths)}\n`);
    }
    this.widths = columnWidths([cells], this.widths);
    process.stdout.write(`${formatRow(cells, this.widths)}\n`);
  }
}

function keyOf(obj: KubeObject): string {
  return `${obj.kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}
