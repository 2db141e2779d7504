import type { KubeObject } from '../kube/resources.js';

/** `namespace/name`, or `name` for cluster-scoped objects: the key of a cache and a queue. */
export function objectKey(obj: { metadata: { name?: string; namespace?: string } }): string {
  const { name = '', namespace } = obj.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export type IndexFunc<T> = (obj: T) => string[];

/**
 * The objects of one informer, by key, with secondary indexes (by label, by a
 * referenced name...) so lookups are not scans. Not a copy: callers must not
 * mutate what they get (clone first, e.g. with structuredClone).
 */
export class ObjectStore<T extends KubeObject = KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexFuncs = new Map<string, IndexFunc<T>>();
  /** index name -> index value -> keys */
  private readonly indexes = new Map<string, Map<string, Set<string>>>();

  get size(): number {
    return this.items.size;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  /** Adds an index; existing objects are indexed at once. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indexFuncs.has(name)) throw new Error(`index ${name} exists already`);
    this.indexFuncs.set(name, fn);
    this.indexes.set(name, new Map());
    for (const [key, obj] of this.items) this.indexInto(name, fn, key, obj);
  }

  hasIndex(name: string): boolean {
    return this.indexFuncs.has(name);
  }

  byIndex(name: string, value: string): T[] {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no index named ${name}`);
    return [...(index.get(value) ?? [])].map((k) => this.items.get(k)).filter((o): o is T => o !== undefined);
  }

  /** How many objects have `value` in the index (without building the list). */
  countByIndex(name: string, value: string): number {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no index named ${name}`);
    return index.get(value)?.size ?? 0;
  }

  /** Inserts or replaces; returns the previous object. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    for (const [name, fn] of this.indexFuncs) this.indexInto(name, fn, key, obj);
    return old;
  }

  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  private indexInto(name: string, fn: IndexFunc<T>, key: string, obj: T): void {
    const index = this.indexes.get(name);
    if (!index) return;
    for (const value of fn(obj)) {
      let keys = index.get(value);
      if (!keys) index.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexFuncs) {
      const index = this.indexes.get(name);
      if (!index) continue;
      for (const value of fn(obj)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
  }
}

/** An index of objects by each `label=value` they carry. */
export function labelIndex(label: string): IndexFunc<KubeObject> {
  return (obj) => {
    const v = obj.metadata.labels?.[label];
    return v === undefined ? [] : [v];
  };
}
