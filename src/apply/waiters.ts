import type { Owner } from './engine.js';
import { ownerKey } from './owner.js';

/**
 * Owners waiting for keys (objects released, kinds served, namespaces
 * created): each owner's keys are replaced as a whole, and a key that comes
 * is taken once, waking the owners that waited for it.
 */
export class Waiters {
  /** Key -> the owners (by owner key) waiting for it. */
  private readonly byKey = new Map<string, Map<string, Owner>>();
  /** The other side: owner key -> the keys it waits for. */
  private readonly byOwner = new Map<string, string[]>();

  /** Keys someone waits for. */
  get size(): number {
    return this.byKey.size;
  }

  keys(): string[] {
    return [...this.byKey.keys()].sort();
  }

  /** `owner` waits for `keys` now, and for nothing it waited for before. */
  set(owner: Owner, keys: readonly string[]): void {
    const key = ownerKey(owner);
    for (const k of this.byOwner.get(key) ?? []) this.leave(k, key);
    const wanted = [...new Set(keys)];
    if (wanted.length === 0) return void this.byOwner.delete(key);
    this.byOwner.set(key, wanted);
    for (const k of wanted) {
      let owners = this.byKey.get(k);
      if (!owners) this.byKey.set(k, (owners = new Map()));
      owners.set(key, owner);
    }
  }

  /** `k` came: the owners that waited for it, who wait for it no more (their other keys stay). */
  take(k: string): Owner[] {
    const owners = this.byKey.get(k);
    if (!owners) return [];
    this.byKey.delete(k);
    for (const key of owners.keys()) {
      const rest = (this.byOwner.get(key) ?? []).filter((w) => w !== k);
      if (rest.length > 0) this.byOwner.set(key, rest);
      else this.byOwner.delete(key);
    }
    return [...owners.values()];
  }

  private leave(k: string, key: string): void {
    const owners = this.byKey.get(k);
    owners?.delete(key);
    if (owners?.size === 0) this.byKey.delete(k);
  }
}
