/**
 * One shared copy of equal JSON values (read-only ones: cached objects are
 * never mutated, see ObjectStore). Owned objects of one shape carry equal
 * `fieldsV1` sets: 10,000 ConfigMaps applied from one template keep one set
 * between them instead of 10,000 trees of a dozen objects each. Values are
 * held weakly, so a set no cached object uses any more is collected, and its
 * entry with it.
 */
export class Interned<T extends object> {
  private readonly pool = new Map<string, WeakRef<T>>();
  private readonly gone = new FinalizationRegistry<string>((key) => {
    if (this.pool.get(key)?.deref() === undefined) this.pool.delete(key);
  });

  /** The shared copy equal to `value` (its JSON text, key order included), `value` itself when it is the first. */
  of(value: T): T {
    const key = JSON.stringify(value);
    const shared = this.pool.get(key)?.deref();
    if (shared !== undefined) return shared;
    this.pool.set(key, new WeakRef(value));
    this.gone.register(value, key);
    return value;
  }

  /** Distinct values held (for tests). */
  get size(): number {
    return this.pool.size;
  }
}
