import { describe, expect, it } from '@jest/globals';
import { setCondition } from '../../src/runtime/conditions.js';
import { fitMessage, listProblems, MAX_CONDITION_MESSAGE } from '../../src/runtime/messages.js';

describe('listProblems', () => {
  it('names every problem when there are few', () => {
    expect(listProblems(['a: bad', 'b: bad'])).toBe('a: bad; b: bad');
    expect(listProblems([])).toBe('');
  });

  it('names the first five and counts the rest', () => {
    const problems = Array.from({ length: 1000 }, (_, i) => `ConfigMap/cm-${i}: names no namespace`);
    expect(listProblems(problems)).toBe(
      'ConfigMap/cm-0: names no namespace; ConfigMap/cm-1: names no namespace; ConfigMap/cm-2: names no namespace; ' +
        'ConfigMap/cm-3: names no namespace; ConfigMap/cm-4: names no namespace; and 995 more',
    );
  });
});

describe('fitMessage', () => {
  it('leaves a message that fits as it is', () => {
    const fits = 'x'.repeat(MAX_CONDITION_MESSAGE);
    expect(fitMessage(fits)).toBe(fits);
  });

  it('cuts a longer one to the limit and says how long it was', () => {
    const long = 'y'.repeat(100_000);
    const cut = fitMessage(long);
    expect(cut.length).toBe(MAX_CONDITION_MESSAGE);
    expect(cut.startsWith('yyyy')).toBe(true);
    expect(cut.endsWith(' ... (cut: 100,000 characters in all)')).toBe(true);
  });

  it('does not split a character made of two UTF-16 units', () => {
    const tail = ' ... (cut: 87 characters in all)';
    // 40 - tail.length falls between the halves of the first emoji after the a's.
    const message = 'a'.repeat(40 - tail.length - 1) + '😀'.repeat(40);
    const cut = fitMessage(message, 40);
    expect(cut).toBe('a'.repeat(40 - tail.length - 1) + tail);
    expect(cut.length).toBeLessThanOrEqual(40);
  });
});

describe('setCondition', () => {
  it('keeps a message within what a condition may carry', () => {
    const conditions = setCondition([], { type: 'Ready', status: 'False', reason: 'SourceError', message: 'z'.repeat(40_000) });
    expect(conditions[0]!.message.length).toBe(MAX_CONDITION_MESSAGE);
  });
});
