import { GROUP, KIND_NAMES, KINDS, type Kind } from '../api/kinds.js';
import { UsageError } from './errors.js';

/** How a sync is named on the command line: `kind/name`, kinds as kubectl spells them. */

export interface KindName<K extends Kind = Kind> {
  kind: K;
  name?: string;
}

/** `sync`, `syncs`, `sy`, `Sync` (any case), also with `.syncprims.dev`, to the kind. */
const ALIASES: ReadonlyMap<string, Kind> = new Map(
  KINDS.flatMap((kind) => {
    const n = KIND_NAMES[kind];
    return [n.kind.toLowerCase(), n.singular, n.plural, n.shortName].map((alias) => [alias, kind] as [string, Kind]);
  }),
);

/** `sync (sy), remotesync (rsy), ...` for the kinds a command takes. */
export function kindHelp(kinds: readonly Kind[] = KINDS): string {
  return kinds.map((k) => `${KIND_NAMES[k].singular} (${KIND_NAMES[k].shortName})`).join(', ');
}

export const KIND_HELP = kindHelp();

/** The kind an alias names, or undefined. */
export function kindOf(alias: string): Kind | undefined {
  const key = alias.toLowerCase();
  const bare = key.endsWith(`.${GROUP}`) ? key.slice(0, -GROUP.length - 1) : key;
  return ALIASES.get(bare);
}

/**
 * Parses `kind` or `kind/name`, of one of `kinds` (every kind by default); a
 * name alone is refused (it would be ambiguous across the kinds).
 */
export function parseKindName<K extends Kind = Kind>(text: string, kinds: readonly K[] = KINDS as readonly Kind[] as readonly K[]): KindName<K> {
  const parts = text.split('/');
  const found = kindOf(parts[0] ?? '');
  if (parts.length > 2) throw new UsageError(`${JSON.stringify(text)}: name a sync as kind/name (one slash)`);
  if (!found) {
    const hint = parts.length === 1 ? `: name a sync as kind/name, e.g. sync/${text}` : '';
    throw new UsageError(`${JSON.stringify(parts[0])} is not a kind (kinds: ${kindHelp(kinds)})${hint}`);
  }
  if (!(kinds as readonly Kind[]).includes(found)) throw new UsageError(`${JSON.stringify(text)}: a ${found} cannot be used here (kinds: ${kindHelp(kinds)})`);
  const kind = found as K;
  if (parts.length === 1) return { kind };
  const name = parts[1] ?? '';
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name)) {
    throw new UsageError(`${JSON.stringify(text)}: ${JSON.stringify(name)} is not a valid object name`);
  }
  return { kind, name };
}

/** Parses `kind/name`, which must name an object (of one of `kinds`, every kind by default). */
export function parseSyncRef<K extends Kind = Kind>(text: string, kinds?: readonly K[]): Required<KindName<K>> {
  const ref = parseKindName<K>(text, kinds);
  if (ref.name === undefined) throw new UsageError(`${JSON.stringify(text)}: name the sync as kind/name, e.g. ${KIND_NAMES[ref.kind].singular}/my-app`);
  return { kind: ref.kind, name: ref.name };
}
