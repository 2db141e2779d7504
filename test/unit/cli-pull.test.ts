// The pure parts of pull clusters in the CLI (docs/pull.md): the identity's
// Role rules, the join bundle built from the managing cluster's address, CA
// and a token, the flags of `cluster add --pull`, the bundle's file, and
// `get clusters`' MODE and LAST-SEEN.
import { describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { parseLabels } from '../../src/cli/cluster/cluster-add.js';
import { lastSeenCell, render, type ClusterRow } from '../../src/cli/cluster/cluster-list.js';
import { addMode, DEFAULT_TOKEN_TTL, joinBundle, pullAgentRules, tokenSeconds, writePrivate } from '../../src/cli/cluster/cluster-pull.js';
import { CliError, UsageError } from '../../src/cli/errors.js';
import { secretCluster } from '../../src/clusters/inventory-sources.js';
import { revokedAtValue } from '../../src/clusters/pull-target.js';
import { parseKubeconfigYaml } from '../../src/kube/kubeconfig.js';
import { loadKubeConfigFile } from '../../src/kube/config.js';
import { tableCells } from '../support/cli.js';

const dir = mkdtempSync(path.join(tmpdir(), 'syncprims-cli-pull-'));

describe("the identity's Role", () => {
  test('exactly these rules: its assignments and their status, the copies, its Lease, its own token, events; nothing else', () => {
    expect(pullAgentRules()).toEqual([
      { apiGroups: ['syncprims.dev'], resources: ['syncs'], verbs: ['get', 'list', 'watch', 'patch', 'update'] },
      { apiGroups: ['syncprims.dev'], resources: ['syncs/status'], verbs: ['get', 'patch', 'update'] },
      { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch', 'create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['update', 'patch'], resourceNames: ['syncprims-pull-agent'] },
      { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'], resourceNames: ['syncprims-pull-agent'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    ]);
  });

  test("docs/fleet.md's table of the Role is the Role", () => {
    const doc = readFileSync(fileURLToPath(new URL('../../docs/fleet.md', import.meta.url)), 'utf8');
    const section = doc.slice(doc.indexOf('## Pull clusters (CLI)'));
    const rows = [...section.matchAll(/^\| (`[^|]+) \| [^|]+ \|$/gm)].map((m) => {
      const r = /^`([^`]*)` ((?:`[^`]+`(?:, )?)+)(?: named `([^`]+)`)?: ([a-z, ]+)$/.exec(m[1]!);
      if (!r) throw new Error(`docs/fleet.md: a Role row not in the form "\`group\` \`resources\` [named \`name\`]: verbs": ${m[1]}`);
      return {
        apiGroups: [r[1] === '""' ? '' : r[1]!],
        resources: [...r[2]!.matchAll(/`([^`]+)`/g)].map((x) => x[1]!),
        verbs: r[4]!.split(', '),
        ...(r[3] && { resourceNames: [r[3]] }),
      };
    });
    expect(rows).toEqual(pullAgentRules());
  });

  test('no wildcard, no delete, nothing that writes a ConfigMap or a Secret', () => {
    const rules = pullAgentRules();
    expect(rules.flatMap((r) => [...r.apiGroups, ...r.resources, ...r.verbs])).not.toContain('*');
    expect(rules.flatMap((r) => r.verbs)).not.toEqual(expect.arrayContaining(['delete']));
    expect(rules.filter((r) => r.resources.some((x) => x === 'configmaps' || x === 'secrets')).flatMap((r) => r.verbs)).toEqual(['get', 'list', 'watch']);
  });
});

describe('the join bundle', () => {
  const managing = { server: 'https://mgmt.example.com:6443', caData: Buffer.from('-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n').toString('base64') };
  const bundle = (extra: Record<string, unknown> = {}) => joinBundle({ cluster: 'edge-7', inventoryNamespace: 'fleet', token: 'tok.en.value', ...managing, ...extra });

  test('one cluster (the server, its CA inline), one user with the token, one context in the assignments namespace, current', () => {
    expect(parseKubeconfigYaml(bundle())).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'managing-cluster', cluster: { server: 'https://mgmt.example.com:6443', 'certificate-authority-data': managing.caData } }],
      users: [{ name: 'syncprims-pull/edge-7', user: { token: 'tok.en.value' } }],
      contexts: [{ name: 'syncprims-pull/fleet/edge-7', context: { cluster: 'managing-cluster', user: 'syncprims-pull/edge-7', namespace: 'syncprims-pull-fleet-edge-7' } }],
      'current-context': 'syncprims-pull/fleet/edge-7',
    });
  });

  test('is read as a kubeconfig: its current context, server, CA and token', () => {
    const file = path.join(dir, 'edge-7.join.yaml');
    writeFileSync(file, bundle());
    const kc = loadKubeConfigFile(file);
    expect(kc.getCurrentContext()).toBe('syncprims-pull/fleet/edge-7');
    expect(kc.getCurrentCluster()).toMatchObject({ server: 'https://mgmt.example.com:6443', caData: managing.caData });
    expect(kc.getCurrentUser()).toMatchObject({ name: 'syncprims-pull/edge-7', token: 'tok.en.value' });
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('syncprims-pull-fleet-edge-7');
  });

  test('keeps how the CLI checks the server: tls-server-name, insecure-skip-tls-verify; no CA key without a CA', () => {
    const cluster = (text: string) => (parseKubeconfigYaml(text) as { clusters: { cluster: Record<string, unknown> }[] }).clusters[0]!.cluster;
    expect(cluster(bundle({ tlsServerName: 'kubernetes.default' }))).toEqual({ server: managing.server, 'certificate-authority-data': managing.caData, 'tls-server-name': 'kubernetes.default' });
    expect(cluster(bundle({ caData: undefined, skipTLSVerify: true }))).toEqual({ server: managing.server, 'insecure-skip-tls-verify': true });
  });

  test('a long inventory namespace and name: the context names them, the namespace is bounded to 63', () => {
    const long = 'n'.repeat(60);
    const parsed = parseKubeconfigYaml(joinBundle({ cluster: 'c'.repeat(63), inventoryNamespace: long, token: 't', server: managing.server })) as {
      contexts: { name: string; context: { namespace: string } }[];
    };
    expect(parsed.contexts[0]!.name).toBe(`syncprims-pull/${long}/${'c'.repeat(63)}`);
    expect(parsed.contexts[0]!.context.namespace.length).toBeLessThanOrEqual(63);
    expect(parsed.contexts[0]!.context.namespace).toMatch(/^syncprims-pull-n+-[a-z0-9]+$/);
  });
});

describe('the join file', () => {
  test('is written 0600, also over a file of mode 0644; nothing is left beside it', () => {
    const sub = mkdtempSync(path.join(dir, 'w-'));
    const file = path.join(sub, 'a.join.yaml');
    writeFileSync(file, 'old', { mode: 0o644 });
    expect(statSync(file).mode & 0o777).toBe(0o644);
    writePrivate(file, 'token: secret\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe('token: secret\n');
    expect(readdirSync(sub)).toEqual(['a.join.yaml']);
  });

  test('one that cannot be written: a CliError saying so, no temporary file left', () => {
    const file = path.join(dir, 'no-such-dir', 'a.join.yaml');
    expect(() => writePrivate(file, 'x')).toThrow(new CliError(`the join bundle ${file} cannot be written: ENOENT (the identity is made; run this again to issue another token)`));
    // A directory of that name (not empty): the rename over it fails, after the temporary file was written.
    const sub = mkdtempSync(path.join(dir, 'd-'));
    const taken = path.join(sub, 'b.join.yaml');
    mkdirSync(path.join(taken, 'inside'), { recursive: true });
    expect(() => writePrivate(taken, 'x')).toThrow(CliError);
    expect(readdirSync(sub)).toEqual(['b.join.yaml']);
  });
});

describe('the flags of cluster add', () => {
  test('exactly one of --kubeconfig (push) and --pull', () => {
    expect(addMode({ kubeconfig: 'edge.kubeconfig' })).toBe('push');
    expect(addMode({ kubeconfig: 'edge.kubeconfig', context: 'edge' })).toBe('push');
    expect(addMode({ pull: true })).toBe('pull');
    expect(addMode({ pull: true, joinFile: 'x.join.yaml', tokenTtl: '1h' })).toBe('pull');
    expect(() => addMode({ pull: true, kubeconfig: 'edge.kubeconfig' })).toThrow(new UsageError('--pull and --kubeconfig: a pull cluster keeps no kubeconfig here; give one of them'));
    expect(() => addMode({})).toThrow(new UsageError("want --kubeconfig (the cluster's kubeconfig), or --pull (a cluster that connects upward)"));
  });

  test('a flag of the other mode is refused, not ignored', () => {
    expect(() => addMode({ pull: true, context: 'edge' })).toThrow(UsageError);
    expect(() => addMode({ pull: true, context: 'edge' })).toThrow('--context names a context of --kubeconfig');
    expect(() => addMode({ kubeconfig: 'k', joinFile: 'x' })).toThrow('--join-file: only with --pull');
    expect(() => addMode({ kubeconfig: 'k', tokenTtl: '1h' })).toThrow('--token-ttl: only with --pull');
    expect(() => addMode({ kubeconfig: 'k', joinFile: 'x', tokenTtl: '1h' })).toThrow('--join-file and --token-ttl: only with --pull');
  });

  test('--token-ttl: a duration of at least 10m, in seconds; 24h by default', () => {
    expect(DEFAULT_TOKEN_TTL).toBe('24h');
    expect(tokenSeconds(DEFAULT_TOKEN_TTL)).toBe(86_400);
    expect(tokenSeconds('10m')).toBe(600);
    expect(tokenSeconds('1h30m')).toBe(5_400);
    expect(() => tokenSeconds('9m59s')).toThrow(new UsageError('--token-ttl 9m59s: want at least 10m (the API server issues no shorter token)'));
    expect(() => tokenSeconds('a day')).toThrow(new UsageError('--token-ttl a day: want a duration such as 24h'));
    expect(() => tokenSeconds('86400')).toThrow(UsageError);
  });

  test('--label may not set the mode or the revoke (the CLI sets them); other labels pass', () => {
    expect(parseLabels(['env=prod', 'syncprims.dev/tier=edge'])).toEqual({ env: 'prod', 'syncprims.dev/tier': 'edge' });
    expect(() => parseLabels(['syncprims.dev/cluster-mode=pull'])).toThrow(new UsageError('--label syncprims.dev/cluster-mode=pull: syncprims.dev/cluster-mode is set by the mode (--pull, or --kubeconfig: push)'));
    expect(() => parseLabels(['syncprims.dev/revoked-at=1'])).toThrow(new UsageError('--label syncprims.dev/revoked-at=1: syncprims.dev/revoked-at is set by syncprims cluster revoke'));
    expect(() => parseLabels(['syncprims.dev/cluster=x'])).toThrow(UsageError);
  });
});

describe('get clusters: MODE and LAST-SEEN', () => {
  const secret = (name: string, labels: Record<string, string> = {}) =>
    secretCluster({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-kubeconfig`, namespace: 'fleet', labels: { 'syncprims.dev/cluster': name, ...labels } } });
  const pullLabels = { 'syncprims.dev/cluster-mode': 'pull' };

  test('the inventory: a Secret labelled cluster-mode pull is a pull cluster, its ref still its Secret; any other is push', () => {
    expect(secret('edge-7', pullLabels)).toMatchObject({ name: 'edge-7', mode: 'pull', ref: { kubeConfig: { secretRef: { name: 'edge-7-kubeconfig', key: 'value' } } } });
    expect(secret('edge-1').mode).toBeUndefined();
    expect(secret('edge-2', { 'syncprims.dev/cluster-mode': 'push' }).mode).toBeUndefined();
  });

  const now = Date.parse('2026-12-02T10:00:00Z');
  test('a cell: - for push; revoked; never; else the age of the last renewal, as kubectl prints ages', () => {
    expect(lastSeenCell({ mode: 'push', lastSeen: null }, now)).toBe('-');
    expect(lastSeenCell({ mode: 'pull', lastSeen: null }, now)).toBe('never');
    expect(lastSeenCell({ mode: 'pull', lastSeen: '2026-12-02T09:59:48.000Z' }, now)).toBe('12s');
    expect(lastSeenCell({ mode: 'pull', lastSeen: '2026-12-02T09:56:40.000Z' }, now)).toBe('3m20s');
    expect(lastSeenCell({ mode: 'pull', lastSeen: '2026-12-01T10:00:00.000Z' }, now)).toBe('24h');
    expect(lastSeenCell({ mode: 'pull', lastSeen: '2026-12-02T10:00:03.000Z' }, now)).toBe('0s');
    expect(lastSeenCell({ mode: 'pull', lastSeen: '2026-12-02T09:59:48.000Z', revokedAt: '2026-12-02T09:59:50Z' }, now)).toBe('revoked');
  });

  const row = (name: string, mode: 'push' | 'pull', lastSeen: string | null, revokedAt?: string): ClusterRow => ({
    ...secret(name, mode === 'pull' ? { ...pullLabels, env: 'prod', ...(revokedAt && { 'syncprims.dev/revoked-at': revokedAtValue(new Date(revokedAt)) }) } : { env: 'prod' }),
    mode,
    lastSeen,
    ...(revokedAt && { revokedAt }),
    reach: mode === 'pull' ? { reachable: '-' } : { reachable: 'yes', server: 'https://127.0.0.1:6442' },
    selectedBy: [],
    shard: { state: 'unsharded' },
    unmade: [],
  });
  const rows = [row('edge-1', 'push', null), row('edge-7', 'pull', null), row('edge-8', 'pull', new Date(Date.now() - 5_000).toISOString()), row('edge-9', 'pull', null, '2026-12-02T09:59:50Z')];

  test('the table: MODE and LAST-SEEN after SOURCE and REACHABLE; the mode and revoke labels are not shown as labels', () => {
    const [header, ...cells] = tableCells(render(rows, 'fleet', 'table'));
    expect(header).toEqual(['NAME', 'SOURCE', 'MODE', 'REACHABLE', 'LAST-SEEN', 'SHARD', 'SELECTED-BY', 'LABELS', 'PROBLEM']);
    expect(cells[0]).toEqual(['edge-1', 'Secret', 'push', 'yes', '-', '-', '-', 'env=prod', '-']);
    expect(cells[1]).toEqual(['edge-7', 'Secret', 'pull', '-', 'never', '-', '-', 'env=prod', '-']);
    expect(cells[2]?.slice(0, 4)).toEqual(['edge-8', 'Secret', 'pull', '-']);
    expect(cells[2]?.[4]).toMatch(/^[5-9]s$/);
    expect(cells[3]).toEqual(['edge-9', 'Secret', 'pull', '-', 'revoked', '-', '-', 'env=prod', '-']);
    const wide = tableCells(render(rows, 'fleet', 'wide'));
    expect(wide[0]).toEqual(['NAME', 'SOURCE', 'MODE', 'REACHABLE', 'LAST-SEEN', 'SHARD', 'SELECTED-BY', 'LABELS', 'VALUES', 'OBJECT', 'SERVER', 'PROBLEM']);
    expect(wide[2]?.slice(8, 11)).toEqual(['-', 'Secret fleet/edge-7-kubeconfig', '-']);
  });

  test('json and yaml: mode, lastSeen (RFC 3339 or null) and revokedAt', () => {
    const json = JSON.parse(render(rows, 'fleet', 'json')) as { clusters: Record<string, unknown>[] };
    expect(json.clusters.map((c) => [c.name, c.mode, c.lastSeen, c.revokedAt])).toEqual([
      ['edge-1', 'push', null, undefined],
      ['edge-7', 'pull', null, undefined],
      ['edge-8', 'pull', rows[2]!.lastSeen, undefined],
      ['edge-9', 'pull', null, '2026-12-02T09:59:50Z'],
    ]);
    const yaml = parse(render(rows, 'fleet', 'yaml')) as { clusters: Record<string, unknown>[] };
    expect(yaml.clusters[1]).toMatchObject({ name: 'edge-7', mode: 'pull', lastSeen: null });
  });
});
