import { describe, expect, test } from '@jest/globals';
import { describeSelector, matchesSelector, selectorProblem } from '../../src/clusters/label-selector.js';

const labels = { env: 'prod', region: 'eu', tier: '' };

describe('matchesSelector', () => {
  test('an empty selector matches everything', () => {
    expect(matchesSelector(labels, {})).toBe(true);
    expect(matchesSelector({}, { matchLabels: {}, matchExpressions: [] })).toBe(true);
  });

  test('matchLabels: every pair must hold', () => {
    expect(matchesSelector(labels, { matchLabels: { env: 'prod' } })).toBe(true);
    expect(matchesSelector(labels, { matchLabels: { env: 'prod', region: 'us' } })).toBe(false);
    expect(matchesSelector(labels, { matchLabels: { missing: '' } })).toBe(false);
    expect(matchesSelector(labels, { matchLabels: { tier: '' } })).toBe(true);
  });

  test('In: the key with one of the values', () => {
    expect(matchesSelector(labels, { matchExpressions: [{ key: 'region', operator: 'In', values: ['us', 'eu'] }] })).toBe(true);
    expect(matchesSelector(labels, { matchExpressions: [{ key: 'region', operator: 'In', values: ['us'] }] })).toBe(false);
    expect(matchesSelector(labels, { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] })).toBe(false);
  });

  test('NotIn: the key absent, or with none of the values', () => {
    expect(matchesSelector(labels, { matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['us'] }] })).toBe(true);
    expect(matchesSelector(labels, { matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['eu'] }] })).toBe(false);
    expect(matchesSelector(labels, { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] })).toBe(true);
  });

  test('Exists and DoesNotExist look at the key only (an empty value exists)', () => {
    expect(matchesSelector(labels, { matchExpressions: [{ key: 'tier', operator: 'Exists' }] })).toBe(true);
    expect(matchesSelector(labels, { matchExpressions: [{ key: 'zone', operator: 'Exists' }] })).toBe(false);
    expect(matchesSelector(labels, { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] })).toBe(true);
    expect(matchesSelector(labels, { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] })).toBe(false);
  });

  test('a key inherited from Object.prototype is no label', () => {
    expect(matchesSelector(labels, { matchExpressions: [{ key: 'toString', operator: 'Exists' }] })).toBe(false);
  });

  test('matchLabels and every expression must all hold', () => {
    const sel = { matchLabels: { env: 'prod' }, matchExpressions: [{ key: 'region', operator: 'In' as const, values: ['eu'] }, { key: 'zone', operator: 'DoesNotExist' as const }] };
    expect(matchesSelector(labels, sel)).toBe(true);
    expect(matchesSelector({ ...labels, zone: 'a' }, sel)).toBe(false);
  });

  test('an unknown operator selects nothing', () => {
    expect(matchesSelector(labels, { matchExpressions: [{ key: 'env', operator: 'Like' as never, values: ['prod'] }] })).toBe(false);
  });
});

describe('selectorProblem and describeSelector', () => {
  test('values where the operator needs or refuses them', () => {
    expect(selectorProblem({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] })).toMatch(/In needs at least one value/);
    expect(selectorProblem({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] })).toMatch(/Exists takes no values/);
    expect(selectorProblem({ matchExpressions: [{ key: 'a', operator: 'Near' as never }] })).toMatch(/not one of/);
    expect(selectorProblem({ matchLabels: { a: 'b' }, matchExpressions: [{ key: 'c', operator: 'NotIn', values: ['d'] }] })).toBeUndefined();
  });

  test('written as kubectl writes it', () => {
    expect(
      describeSelector({
        matchLabels: { env: 'prod' },
        matchExpressions: [
          { key: 'r', operator: 'In', values: ['a', 'b'] },
          { key: 's', operator: 'NotIn', values: ['c'] },
          { key: 't', operator: 'Exists' },
          { key: 'u', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('env=prod,r in (a,b),s notin (c),t,!u');
    expect(describeSelector({})).toBe('(everything)');
  });
});
