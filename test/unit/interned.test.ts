import { describe, expect, test } from '@jest/globals';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Interned } from '../../src/runtime/interned.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('Interned', () => {
  test('equal values share the first copy; different ones do not', () => {
    const pool = new Interned<object>();
    const first = { 'f:data': { 'f:a': {} } };
    expect(pool.of(first)).toBe(first);
    expect(pool.of({ 'f:data': { 'f:a': {} } })).toBe(first);
    const other = { 'f:data': { 'f:b': {} } };
    expect(pool.of(other)).toBe(other);
    expect(pool.size).toBe(2);
  });

  test('a value nobody holds any more leaves the pool', async () => {
    const pool = new Interned<object>();
    const kept = pool.of({ keep: {} });
    (() => pool.of({ drop: {} }))();
    expect(pool.size).toBe(2);
    for (let i = 0; i < 50 && pool.size > 1; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(pool.size).toBe(1);
    expect(pool.of({ keep: {} })).toBe(kept);
  });
});
