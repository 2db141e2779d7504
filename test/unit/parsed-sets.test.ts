import { describe, expect, test } from '@jest/globals';
import type { KubeObject } from '../../src/kube/resources.js';
import { ParsedSets } from '../../src/source/parsed-sets.js';

const cm = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });
const set = (...objects: KubeObject[]) => ({ objects, digest: 'sha256:00' });

describe('ParsedSets', () => {
  test('a kept set comes back as a copy of its own, each time', () => {
    const sets = new ParsedSets();
    const original = set(cm('a'));
    sets.put('k', original, 100);
    original.objects[0]!.metadata.name = 'changed by the first caller';
    const first = sets.get('k')!;
    expect(first).toEqual(set(cm('a')));
    first.objects[0]!.metadata.labels = { rendered: 'yes' };
    expect(sets.get('k')).toEqual(set(cm('a')));
    expect(sets.get('other')).toBeUndefined();
  });

  test('never keeps a set with a Secret in it, nor one larger than the budget', () => {
    const sets = new ParsedSets({ maxBytes: 1000, maxEntries: 10, ttlMs: 60_000 });
    sets.put('secret', set(cm('a'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: 'dg==' } }), 10);
    sets.put('large', set(cm('a')), 1001);
    expect(sets.size).toBe(0);
  });

  test('drops the least recently used past its bytes or entries, and what was not asked for within the TTL', () => {
    let now = 0;
    const sets = new ParsedSets({ maxBytes: 300, maxEntries: 2, ttlMs: 1_000 }, () => now);
    sets.put('a', set(cm('a')), 100);
    sets.put('b', set(cm('b')), 100);
    sets.get('a'); // b is now the least recently used
    sets.put('c', set(cm('c')), 100);
    expect([sets.get('a') !== undefined, sets.get('b') !== undefined, sets.get('c') !== undefined]).toEqual([true, false, true]);
    sets.put('d', set(cm('d')), 250); // 100 + 100 + 250 > 300: the oldest go
    expect(sets.get('d')).toBeDefined();
    expect(sets.size).toBe(1);
    now = 1_001;
    expect(sets.get('d')).toBeUndefined();
  });

  test('callers that come while a fetch is in flight wait for its set, each with a copy of its own', async () => {
    const sets = new ParsedSets();
    let fetches = 0;
    let answer: (v: { set: ReturnType<typeof set>; bytes: number }) => void = () => {};
    const fetch = () => {
      fetches++;
      return new Promise<{ set: ReturnType<typeof set>; bytes: number }>((resolve) => (answer = resolve));
    };
    const loads = [sets.load('k', fetch), sets.load('k', fetch), sets.load('k', fetch)];
    answer({ set: set(cm('a')), bytes: 100 });
    const got = await Promise.all(loads);
    expect(fetches).toBe(1);
    expect(got).toEqual([set(cm('a')), set(cm('a')), set(cm('a'))]);
    got[1]!.objects[0]!.metadata.name = 'rendered by the second caller';
    expect(got[2]).toEqual(set(cm('a')));
    expect(await sets.load('k', fetch)).toEqual(set(cm('a')));
    expect(fetches).toBe(1);
  });

  test('a failed fetch, or a set that cannot be kept, is not shared: the waiting callers fetch on their own', async () => {
    const sets = new ParsedSets();
    let fetches = 0;
    const failing = async () => {
      fetches++;
      await Promise.resolve();
      throw new Error(`fetch ${fetches} failed`);
    };
    const failed = await Promise.allSettled([sets.load('k', failing), sets.load('k', failing)]);
    expect(failed.map((r) => (r.status === 'rejected' ? String(r.reason) : 'fulfilled'))).toEqual(['Error: fetch 1 failed', 'Error: fetch 2 failed']);
    const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: 'dg==' } };
    let secretFetches = 0;
    const withSecret = async () => {
      secretFetches++;
      await Promise.resolve();
      return { set: set(secret), bytes: 10 };
    };
    await Promise.all([sets.load('s', withSecret), sets.load('s', withSecret)]);
    expect(secretFetches).toBe(2);
    expect(sets.size).toBe(0);
  });
});
