// A malformed kubeconfig prints nothing (issue 32, item 6): the YAML
// library's warnings quote the text they warn about, and a kubeconfig's text
// is credentials. Neither loader (the operator's own, src/kube/kubeconfig.ts,
// nor the checked one for kubeconfigs in Secrets, src/clusters/kubeconfig.ts)
// lets one reach stderr, as a warning or otherwise, nor quotes the content in
// what it throws.
import { afterEach, beforeEach, describe, expect, jest, test } from '@jest/globals';
import { setImmediate as tick } from 'node:timers/promises';
import { checkedKubeconfig } from '../../src/clusters/kubeconfig.js';
import { KubeConfig } from '../../src/kube/kubeconfig.js';

const SECRET = 's3cr3t-token-value';

/** Kubeconfigs the YAML library warns about (each warning quotes SECRET), or cannot read at all. */
const MALFORMED: [string, string][] = [
  ['a collection as a key', `apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n? [${SECRET}, b]\n: v\n`],
  ['an unknown tag', `apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: !!secret ${SECRET}\n`],
  ['a duplicate key', `apiVersion: v1\nkind: Config\n${SECRET}: 1\n${SECRET}: 2\n`],
  ['bad indentation', `apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n   token: ${SECRET}\n  - x: [\n`],
];

let printed: string[] = [];
const spies: { mockRestore(): void }[] = [];

beforeEach(() => {
  printed = [];
  const record = (...args: unknown[]): void => {
    const text = args.map(String).join(' ');
    // Jest's own, on its first ESM import.
    if (!text.includes('ExperimentalWarning: VM Modules')) printed.push(text);
  };
  spies.push(
    jest.spyOn(process, 'emitWarning').mockImplementation(record),
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => (record(chunk), true)),
    jest.spyOn(console, 'warn').mockImplementation(record),
    jest.spyOn(console, 'error').mockImplementation(record),
    jest.spyOn(console, 'log').mockImplementation(record),
  );
});

afterEach(() => {
  for (const s of spies.splice(0)) s.mockRestore();
});

/** What loading `text` threw, if anything; then whatever was printed meanwhile (a warning is emitted on a later tick). */
async function load(fn: () => unknown): Promise<string> {
  let thrown = '';
  try {
    fn();
  } catch (err) {
    thrown = String((err as Error).message);
  }
  await tick();
  return thrown;
}

describe('a malformed kubeconfig prints nothing', () => {
  test.each(MALFORMED)('the operator’s own loader: %s', async (_what, text) => {
    const thrown = await load(() => new KubeConfig().loadFromString(text));
    expect(printed).toEqual([]);
    expect(thrown).not.toContain(SECRET);
  });

  test.each(MALFORMED)('a kubeconfig from a Secret: %s', async (_what, text) => {
    const thrown = await load(() => checkedKubeconfig(text, 'Secret ns/kc'));
    expect(printed).toEqual([]);
    expect(thrown).not.toContain(SECRET);
  });
});
