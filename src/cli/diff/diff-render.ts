import { structuredPatch } from 'diff';
import type { KubeObject } from '../../kube/resources.js';
import { maskSecrets, ourLabelsDiffer, withoutNoise } from './diff-noise.js';
import { toYaml } from '../output.js';
import type { Style } from '../terminal.js';

/** How `syncprims diff` shows one object: a unified diff from the live object to the merged one (the dry run's answer). */

/** What applying would do to an object: `configured` covers "unchanged" until the two sides are compared. */
export type DiffAction = 'created' | 'configured' | 'pruned';

export interface ObjectChange {
  action: DiffAction;
  /** `ConfigMap apps/demo`, `Namespace apps`: the headers name it so. */
  object: string;
  /** The object in the cluster now (none when it would be created). */
  live?: KubeObject;
  /** The object as the server would hold it after the apply (none when it would be pruned). */
  merged?: KubeObject;
  /** Said in the `+++` header: `would be adopted`, `not dry-run: ...`. */
  notes?: string[];
}

/**
 * The two sides as compared: the objects without noise, Secret values
 * masked. Our owner and origin labels are noise unless the apply changes
 * them (it adopts the object, or gives it another origin).
 */
export function cleanSides(change: ObjectChange): [KubeObject | undefined, KubeObject | undefined] {
  const { live, merged } = change;
  const keep = live !== undefined && merged !== undefined && ourLabelsDiffer(live, merged);
  return maskSecrets(live && withoutNoise(live, keep), merged && withoutNoise(merged, keep));
}

/** The two sides as YAML. */
export function sidesOf(change: ObjectChange): { before: string; after: string } {
  const [live, merged] = cleanSides(change);
  return { before: live ? toYaml(live) : '', after: merged ? toYaml(merged) : '' };
}

/** Whether applying changes the object once noise is left out (created and pruned objects always do). */
export function differs(change: ObjectChange): boolean {
  if (change.action !== 'configured') return true;
  const { before, after } = sidesOf(change);
  return before !== after;
}

/** The words after the `+++` header's name. */
function headerNotes(change: ObjectChange): string {
  const notes = [...(change.action === 'configured' ? [] : [`would be ${change.action}`]), ...(change.notes ?? [])];
  return notes.length === 0 ? '' : ` (${notes.join('; ')})`;
}

/**
 * The unified diff of one object (3 lines of context), `--- live <object>`
 * and `+++ merged <object>` first; empty when nothing differs. Removed lines
 * red, added green, when `style` colours.
 */
export function unifiedDiff(change: ObjectChange, style: Style): string {
  const { before, after } = sidesOf(change);
  if (before === after && change.action === 'configured') return '';
  const patch = structuredPatch('live', 'merged', before, after, undefined, undefined, { context: 3 });
  const lines = [style.bold(`--- live ${change.object}`), style.bold(`+++ merged ${change.object}${headerNotes(change)}`)];
  for (const hunk of patch.hunks) {
    lines.push(style.dim(`@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@`));
    for (const line of hunk.lines) lines.push(colourLine(line, style));
  }
  return `${lines.join('\n')}\n`;
}

/** `start,count` as diff -u writes it (`start` alone for one line; an empty side starts at 0). */
function range(start: number, count: number): string {
  if (count === 1) return String(start);
  return `${count === 0 ? Math.max(0, start - 1) : start},${count}`;
}

function colourLine(line: string, style: Style): string {
  if (line.startsWith('-')) return style.red(line);
  if (line.startsWith('+')) return style.green(line);
  return line;
}
