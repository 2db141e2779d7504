// What a reconcile holds until it ends: let go together, each once, and kept even when the work it went alongside failed.
import { describe, expect, test } from '@jest/globals';
import { Holds } from '../../src/controllers/holds.js';

describe('Holds', () => {
  test('everything held is let go at the end, each once', () => {
    const held = new Holds();
    const letGo: string[] = [];
    held.add(() => letGo.push('a'));
    held.add(() => letGo.push('b'));
    expect(letGo).toEqual([]);
    held.releaseAll();
    held.releaseAll();
    expect(letGo).toEqual(['a', 'b']);
  });

  test('a pending hold is let go once it settles', async () => {
    const held = new Holds();
    let release: (fn: () => void) => void = () => undefined;
    let released = 0;
    held.addPending(new Promise((r) => (release = r)));
    held.releaseAll();
    expect(released).toBe(0);
    release(() => released++);
    await new Promise((r) => setImmediate(r));
    expect(released).toBe(1);
  });

  test('alongside: the work\'s value; what the hold holds is kept even when the work fails first', async () => {
    const held = new Holds();
    let released = 0;
    await expect(held.alongside(Promise.resolve(7), Promise.resolve(() => released++))).resolves.toBe(7);
    const slowHold = new Promise<() => void>((r) => setTimeout(() => r(() => released++), 10));
    await expect(held.alongside(Promise.reject(new Error('work failed')), slowHold)).rejects.toThrow('work failed');
    held.releaseAll();
    expect(released).toBe(2);
  });

  test('alongside: a hold that fails fails it, once the work is done', async () => {
    const held = new Holds();
    let worked = false;
    const work = new Promise<void>((r) => setTimeout(() => ((worked = true), r()), 10));
    await expect(held.alongside(work, Promise.reject(new Error('no watch')))).rejects.toThrow('no watch');
    expect(worked).toBe(true);
  });
});
