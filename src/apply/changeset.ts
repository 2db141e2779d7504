import { displayName } from './inventory.js';

/**
 * What an apply and prune did to each object (after fluxcd/pkg `ssa`
 * `changeset.go`), and one short line of it for Events and logs.
 */

export const CHANGE_ACTIONS = ['created', 'configured', 'unchanged', 'deleted', 'skipped'] as const;

/**
 * `skipped`: left alone on purpose (owned by another sync, or marked
 * `syncprims.dev/prune: disabled`); the message says why.
 */
export type ChangeAction = (typeof CHANGE_ACTIONS)[number];

export interface ChangeSetEntry {
  /** The object id, `<namespace>_<name>_<group>_<kind>`. */
  id: string;
  action: ChangeAction;
  message?: string;
}

/** Actions that wrote to the cluster. */
const WRITES: ReadonlySet<ChangeAction> = new Set(['created', 'configured', 'deleted']);

export class ChangeSet {
  readonly entries: ChangeSetEntry[] = [];

  constructor(entries: readonly ChangeSetEntry[] = []) {
    for (const entry of entries) this.add(entry);
  }

  add(entry: ChangeSetEntry): this;
  add(id: string, action: ChangeAction, message?: string): this;
  add(entryOrId: ChangeSetEntry | string, action?: ChangeAction, message?: string): this {
    const entry = typeof entryOrId === 'string' ? { id: entryOrId, action: action as ChangeAction, message } : entryOrId;
    this.entries.push(entry.message === undefined ? { id: entry.id, action: entry.action } : { ...entry });
    return this;
  }

  /** Adds the entries of another change set (e.g. the prune's after the apply's). */
  append(other: ChangeSet): this {
    for (const entry of other.entries) this.add(entry);
    return this;
  }

  /** How many entries each action has (zero for none). */
  counts(): Record<ChangeAction, number> {
    const counts = { created: 0, configured: 0, unchanged: 0, deleted: 0, skipped: 0 };
    for (const entry of this.entries) counts[entry.action] += 1;
    return counts;
  }

  /** Something was created, configured or deleted (skipped and unchanged objects are no change). */
  hasChanges(): boolean {
    return this.entries.some((e) => WRITES.has(e.action));
  }

  /** Entries other than `unchanged`, in the order added. */
  changed(): ChangeSetEntry[] {
    return this.entries.filter((e) => e.action !== 'unchanged');
  }

  get size(): number {
    return this.entries.length;
  }
}

/** `Kind/namespace/name action`; an id that does not parse is shown as it is. */
function describeEntry(entry: ChangeSetEntry): string {
  let name: string;
  try {
    name = displayName(entry.id);
  } catch {
    name = entry.id;
  }
  return `${name} ${entry.action}`;
}

/**
 * One line: `3 created, 1 configured, 12 unchanged, 1 deleted: Deployment/app/web configured, ...`.
 * Counts are in the order of CHANGE_ACTIONS, zeros left out; then at most `max`
 * entries other than `unchanged`, in the order added, and `and N more`.
 * Messages are not part of the line (they stay in the entries).
 */
export function formatChangeSet(cs: ChangeSet, max = 10): string {
  if (cs.size === 0) return 'no objects';
  const counts = cs.counts();
  const summary = CHANGE_ACTIONS.filter((a) => counts[a] > 0)
    .map((a) => `${counts[a]} ${a}`)
    .join(', ');
  const changed = cs.changed();
  const limit = Math.max(0, Math.floor(max));
  if (changed.length === 0 || limit === 0) return summary;
  const listed = changed.slice(0, limit).map(describeEntry);
  if (changed.length > limit) listed.push(`and ${changed.length - limit} more`);
  return `${summary}: ${listed.join(', ')}`;
}
