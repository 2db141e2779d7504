// The lean load of client-node (src/kube/lean-client-node.ts): the shim must
// export every name that client-node's KubeConfig module imports from its
// generated API, or `syncprims run` would fail to start after an upgrade.
import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as shim from '../../src/kube/client-node-gen-shim.js';
import { resolve } from '../../src/kube/lean-client-node-hooks.js';

const require = createRequire(import.meta.url);
const CONFIG_JS = path.join(path.dirname(require.resolve('@kubernetes/client-node')), 'config.js');

describe('client-node without its generated API', () => {
  test("the shim exports exactly what client-node's config.js imports from ./gen/index.js", () => {
    const imports = [...readFileSync(CONFIG_JS, 'utf8').matchAll(/import\s*{([^}]*)}\s*from\s*['"]\.\/gen\/index\.js['"]/g)];
    expect(imports).toHaveLength(1);
    const names = imports[0]![1]!.split(',').map((n) => n.trim().split(/\s+as\s+/)[0]!).filter(Boolean).sort();
    expect(names.length).toBeGreaterThan(0);
    expect(Object.keys(shim).sort()).toEqual(names);
    for (const name of names) expect(typeof (shim as Record<string, unknown>)[name]).toBe('function');
  });

  test('the hook sends that one import to the shim and every other one on', async () => {
    const parentURL = `file://${CONFIG_JS}`;
    const next = async (specifier: string) => ({ url: `next:${specifier}` });
    const hooked = await resolve('./gen/index.js', { parentURL }, next);
    expect(hooked.url).toMatch(/\/client-node-gen-shim\.js$/);
    expect(hooked.shortCircuit).toBe(true);
    await expect(resolve('./gen/index.js', { parentURL: 'file:///elsewhere/dist/api.js' }, next)).resolves.toEqual({ url: 'next:./gen/index.js' });
    await expect(resolve('./exec_auth.js', { parentURL }, next)).resolves.toEqual({ url: 'next:./exec_auth.js' });
  });
});
