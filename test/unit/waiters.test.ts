import { describe, expect, test } from '@jest/globals';
import { Waiters } from '../../src/apply/waiters.js';

const owner = (name: string) => ({ kind: 'Sync', namespace: 'ns', name });

describe('Waiters', () => {
  test('a key that comes is taken once; the owners keep waiting for their other keys', () => {
    const w = new Waiters();
    w.set(owner('a'), ['x', 'y']);
    w.set(owner('b'), ['x']);
    expect(w.take('x').map((o) => o.name).sort()).toEqual(['a', 'b']);
    expect(w.take('x')).toEqual([]);
    expect(w.keys()).toEqual(['y']);
    expect(w.take('y').map((o) => o.name)).toEqual(['a']);
    expect(w.size).toBe(0);
  });

  test('setting replaces what an owner waited for; none clears it', () => {
    const w = new Waiters();
    w.set(owner('a'), ['x']);
    w.set(owner('a'), ['y', 'y']);
    expect(w.keys()).toEqual(['y']);
    w.set(owner('a'), []);
    expect(w.size).toBe(0);
    expect(w.take('y')).toEqual([]);
  });
});
