import { describe, expect, test } from '@jest/globals';
import { boundHeapGrowth, HEAP_GROWING_PERCENT } from '../../src/runtime/heap.js';

describe('boundHeapGrowth', () => {
  test('sets the growing percent unless node was given one', () => {
    expect(boundHeapGrowth([])).toBe(HEAP_GROWING_PERCENT);
    expect(boundHeapGrowth(['--heap-growing-percent=80'])).toBe(80);
    expect(boundHeapGrowth(['--max-old-space-size=512', '--heap_growing_percent=15'])).toBe(15);
  });
});
