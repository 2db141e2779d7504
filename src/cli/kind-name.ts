import { GROUP, KIND_NAMES, SYNC_KINDS, type SyncKind } from '../api/kinds.js';
import { UsageError } from './errors.js';

/** How a sync is named on the command line: `kind/name`, kinds as kubectl spells them. */

export interface KindName {
  kind: SyncKind;
  name?: string;
}

/** `sync`, `syncs`, `sy`, `Sync` (any case), also with `.syncprims.dev`, to the kind. */
const ALIASES: ReadonlyMap<string, SyncKind> = new Map(
  SYNC_KINDS.flatMap((kind) => {
    const n = KIND_NAMES[kind];
    return [n.kind.toLowerCase(), n.singular, n.plural, n.shortName].map((alias) => [alias, kind] as [string, SyncKind]);
  }),
);

export const KIND_HELP = SYNC_KINDS.map((k) => `${KIND_NAMES[k].singular} (${KIND_NAMES[k].shortName})`).join(', ');

/** The kind an alias names, or undefined. */
export function kindOf(alias: string): SyncKind | undefined {
  const key = alias.toLowerCase();
  const bare = key.endsWith(`.${GROUP}`) ? key.slice(0, -GROUP.length - 1) : key;
  return ALIASES.get(bare);
}

/** Parses `kind` or `kind/name`; a name alone is refused (it would be ambiguous across the kinds). */
export function parseKindName(text: string): KindName {
  const parts = text.split('/');
  const kind = kindOf(parts[0] ?? '');
  if (parts.length > 2) throw new UsageError(`${JSON.stringify(text)}: name a sync as kind/name (one slash)`);
  if (!kind) {
    const hint = parts.length === 1 ? `: name a sync as kind/name, e.g. sync/${text}` : '';
    throw new UsageError(`${JSON.stringify(parts[0])} is not a kind (kinds: ${KIND_HELP})${hint}`);
  }
  if (parts.length === 1) return { kind };
  const name = parts[1] ?? '';
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name)) {
    throw new UsageError(`${JSON.stringify(text)}: ${JSON.stringify(name)} is not a valid object name`);
  }
  return { kind, name };
}

/** Parses `kind/name`, which must name an object. */
export function parseSyncRef(text: string): Required<KindName> {
  const ref = parseKindName(text);
  if (ref.name === undefined) throw new UsageError(`${JSON.stringify(text)}: name the sync as kind/name, e.g. ${KIND_NAMES[ref.kind].singular}/my-app`);
  return { kind: ref.kind, name: ref.name };
}
