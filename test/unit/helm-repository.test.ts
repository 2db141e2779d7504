// The pure rules of a Helm repository source: which version an index gives
// for a wanted version or range, what of an index is read, where its index is.
import { describe, expect, test } from '@jest/globals';
import { SourceError } from '../../src/source/errors.js';
import { chooseVersion, indexUrl, versionsIn, type IndexVersion } from '../../src/source/helm-repository.js';

const v = (...versions: string[]): IndexVersion[] => versions.map((version) => ({ version, urls: [`web-${version}.tgz`] }));
const chosen = (versions: IndexVersion[], wanted?: string): string => chooseVersion(versions, wanted, 'repo chart web').version;

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SourceError);
    return (err as Error).message;
  }
  throw new Error('not refused');
}

describe('chooseVersion', () => {
  const all = v('1.0.0', '1.2.0', '1.10.1', '2.0.0-rc.1', '0.9.0', 'v1.4.2', 'not-a-version');

  test('the newest stable version when none is asked for: semantic order, pre-releases left out', () => {
    expect(chosen(all)).toBe('1.10.1');
  });

  test('an exact version, with or without v', () => {
    expect(chosen(all, '1.2.0')).toBe('1.2.0');
    expect(chosen(all, 'v1.2.0')).toBe('1.2.0');
    expect(chosen(all, '1.4.2')).toBe('v1.4.2');
    expect(chosen(all, '2.0.0-rc.1')).toBe('2.0.0-rc.1');
  });

  test('ranges as Helm writes them: spaces or commas for AND, ~, ^, x, ||', () => {
    expect(chosen(all, '>=1.0.0 <1.5.0')).toBe('v1.4.2');
    expect(chosen(all, '>=1.0.0, <1.5.0')).toBe('v1.4.2');
    expect(chosen(all, '~1.2')).toBe('1.2.0');
    expect(chosen(all, '^1.0.0')).toBe('1.10.1');
    expect(chosen(all, '0.x || 1.2.x')).toBe('1.2.0');
  });

  test('a range takes a pre-release only when it names one', () => {
    expect(refusal(() => chosen(all, '>=2.0.0'))).toMatch(/no version matches ">=2.0.0" \(newest: 2.0.0-rc.1, 1.10.1, 1.4.2, 1.2.0, 1.0.0\)/);
    expect(chosen(all, '>=2.0.0-rc.0')).toBe('2.0.0-rc.1');
  });

  test('what cannot be chosen says what there is', () => {
    expect(refusal(() => chosen(all, '3.0.0'))).toMatch(/^repo chart web: no version matches "3.0.0" \(newest: .*\): fix spec.source.helmRepository.version$/);
    expect(refusal(() => chosen(all, '>>1'))).toMatch(/is neither a version nor a semver range/);
    expect(refusal(() => chosen(v('1.0.0-beta.1')))).toMatch(/no stable version \(newest: 1.0.0-beta.1\): name one/);
    expect(refusal(() => chosen(v('latest')))).toMatch(/no stable version \(none with a semantic version\)/);
  });
});

describe('versionsIn', () => {
  const index = `apiVersion: v1
entries:
  web:
    - version: 1.0.0
      urls: [charts/web-1.0.0.tgz, https://mirror.example/web-1.0.0.tgz]
      digest: ${'A'.repeat(64)}
    - version: 1.1.0
      urls: [charts/web-1.1.0.tgz]
      digest: not-hex
    - version: 1.2.0
    - urls: [x.tgz]
  db:
    - version: 3.0.0
      urls: [db.tgz]
`;

  test('the chart\'s versions with their URLs, a well-formed digest kept (lowercased), entries without version or URL left out', () => {
    expect(versionsIn(index, 'web', 'idx')).toEqual([
      { version: '1.0.0', urls: ['charts/web-1.0.0.tgz', 'https://mirror.example/web-1.0.0.tgz'], digest: 'a'.repeat(64) },
      { version: '1.1.0', urls: ['charts/web-1.1.0.tgz'], digest: undefined },
    ]);
  });

  test('a chart the index does not list names the charts it does', () => {
    expect(refusal(() => versionsIn(index, 'api', 'idx'))).toBe('idx has no chart "api" (charts: db, web): fix spec.source.helmRepository.chart');
  });

  test('not an index', () => {
    expect(refusal(() => versionsIn('a: [', 'web', 'idx'))).toMatch(/^idx: not a Helm repository index \(/);
    expect(refusal(() => versionsIn('apiVersion: v1\n', 'web', 'idx'))).toBe('idx: not a Helm repository index (no entries)');
  });

  test('an alias bomb is refused, not expanded', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`), 'entries: {}'].join('\n');
    expect(refusal(() => versionsIn(bomb, 'web', 'idx'))).toMatch(/not a Helm repository index .*alias/i);
  });
});

test('indexUrl: <url>/index.yaml, or the .yaml the URL names', () => {
  expect(indexUrl('https://charts.example')).toBe('https://charts.example/index.yaml');
  expect(indexUrl('https://charts.example/stable/')).toBe('https://charts.example/stable/index.yaml');
  expect(indexUrl('https://charts.example/stable/index.yaml')).toBe('https://charts.example/stable/index.yaml');
});
