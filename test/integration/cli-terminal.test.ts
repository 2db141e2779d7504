// The CLI on a real terminal: tmux runs it in a pane (a pseudo-terminal), and
// `capture-pane -e` shows what a person sees, colours included. Colour and a
// progress line rewritten in place on a terminal; no colour with NO_COLOR;
// not one escape code when the output is piped.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { stripEscapes } from '../../src/cli/terminal.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { assertCliBuilt, CLI, runCli } from '../support/cli.js';
import { kubeconfigPath } from '../support/controlplane.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { deploymentOf, markDeploymentAvailable } from '../support/workloads.js';
import { eventually } from '../support/eventually.js';
import { applySync, getSync, readyOf, waitForReady } from '../support/syncs.js';

const run = promisify(execFile);
const CLUSTER = 'mgmt';
const KUBECONFIG = kubeconfigPath(CLUSTER);
/** A tmux server of this file's own. */
const SOCKET = `syncprims-cli-terminal-${process.pid}`;
const ESC = '\x1b';
// eslint-disable-next-line no-control-regex
const SGR = /\x1b\[[0-9;]*m/;
// eslint-disable-next-line no-control-regex
const ESCAPE_OR_CR = /[\x1b\r]/;
let client: KubeClient;
const ns = useOperatedNamespace(CLUSTER, 'cli-tty', (o) => ({ client } = o));

const tmux = async (...args: string[]): Promise<string> => (await run('tmux', ['-L', SOCKET, ...args])).stdout;
const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
const syncprims = (...args: string[]): string => ['node', CLI, ...args, '--kubeconfig', KUBECONFIG, '-n', ns()].map(quote).join(' ');

/**
 * Runs shell command lines one after the other in a new 160x40 pane, as a
 * person would type them (TERM as tmux sets it; NO_COLOR and NODE_OPTIONS
 * not inherited), each followed by its exit code; the pane then stays, so
 * that the screen can be read.
 */
async function inPane(session: string, ...commandLines: string[]): Promise<void> {
  const script = `env -u NO_COLOR -u NODE_OPTIONS -u FORCE_COLOR sh -c ${quote(commandLines.map((c) => `${c}; echo "[exit $?]"`).join('; '))}; sleep 600`;
  await tmux('new-session', '-d', '-s', session, '-x', '160', '-y', '40', script);
}

/** The screen of a pane: its lines (escape codes for colours kept), without the empty ones below the text. */
async function screen(session: string): Promise<string[]> {
  const lines = (await tmux('capture-pane', '-p', '-e', '-t', session)).split('\n');
  while (lines.length > 0 && stripEscapes(lines.at(-1)!).trim() === '') lines.pop();
  return lines;
}

const plain = (lines: string[]): string[] => lines.map(stripEscapes);

/** Waits until the pane's screen satisfies `check`; returns that screen. */
function screenWhen(session: string, what: string, check: (text: string) => boolean, timeoutMs = 30_000): Promise<string[]> {
  return eventually(what, async () => {
    const lines = await screen(session);
    return check(plain(lines).join('\n')) ? lines : undefined;
  }, timeoutMs, 50);
}

const deployment = (name: string): KubeObject => deploymentOf(name, ns());

/** Plays the Deployment controller and the kubelet: the Deployment is available. */
const makeAvailable = (name: string): Promise<void> => markDeploymentAvailable(client, ns(), name);

beforeAll(async () => {
  assertCliBuilt();
  // `app` waits for `base`, which waits for its Deployment; then `app` waits for its own.
  await Promise.all([
    applySync(client, ns(), 'shown', { source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shown', namespace: ns() } }] } }),
    applySync(client, ns(), 'base', { source: { inline: [deployment('base-web')] } }),
    applySync(client, ns(), 'app', { dependsOn: [{ name: 'base' }], source: { inline: [deployment('app-web')] } }),
  ]);
  await Promise.all([
    waitForReady(client, ns(), 'shown', 'True', 'Succeeded'),
    waitForReady(client, ns(), 'app', 'False', 'DependencyNotReady'),
    eventually('base to wait for its Deployment', async () => (readyOf(await getSync(client, ns(), 'base'))?.message.startsWith('waiting for') ? true : undefined)),
  ]);
});

afterAll(async () => {
  // The server goes, and its socket file with it (tmux leaves that behind).
  const socket = (await tmux('display-message', '-p', '#{socket_path}').catch(() => '')).trim();
  await tmux('kill-server').catch(() => undefined);
  if (socket) rmSync(socket, { force: true });
});

describe('on a terminal', () => {
  test('get is coloured; with NO_COLOR=1 it is not', async () => {
    await Promise.all([inPane('get', syncprims('get')), inPane('nocolor', `NO_COLOR=1 ${syncprims('get')}`, `NO_COLOR=1 ${syncprims('reconcile', 'sync/shown')}`)]);
    const coloured = await screenWhen('get', 'get to end', (t) => t.includes('[exit 0]'));
    const row = coloured.find((l) => l.startsWith('Sync') && l.includes('shown'))!;
    expect(row).toContain(`${ESC}[32mTrue${ESC}[39m`);
    expect(row).toContain(`${ESC}[32mSucceeded${ESC}[39m`);

    const bare = await screenWhen('nocolor', 'both commands to end', (t) => t.split('[exit ').length === 3);
    expect(bare.join('\n')).not.toMatch(SGR);
    expect(plain(bare).filter((l) => l === '[exit 0]')).toHaveLength(2);
    expect(bare.some((l) => /^Sync\s+shown\s+True\s+Succeeded/.test(l))).toBe(true);
    expect(bare.some((l) => l.startsWith(`✔ Sync ${ns()}/shown is Ready: applied revision sha256:`))).toBe(true);
  });

  test('reconcile --wait shows what it waits for on one line, rewritten in place, then the outcome', async () => {
    await inPane('reconcile', syncprims('reconcile', 'sync/app'));
    const request = `► reconcile of Sync ${ns()}/app requested`;
    const first = await screenWhen('reconcile', 'the wait for base', (t) => /^◎ dependencies pending: Sync\/base \(Progressing\) \(\d+s\)$/m.test(t));
    expect(plain(first)[0]).toMatch(new RegExp(`^${request}`));
    expect(plain(first)[1]).toMatch(/^◎ dependencies pending: Sync\/base \(Progressing\) \(\d+s\)$/);
    expect(first).toHaveLength(2);
    expect(first[1]).toContain(`${ESC}[33m◎`);

    // The dependency ends its wait: the same line now says what `app` waits for itself.
    await makeAvailable('base-web');
    const second = await screenWhen('reconcile', 'the wait for app-web', (t) => new RegExp(`^◎ waiting for 1 of 1 objects: Deployment ${ns()}/app-web.* \\(\\d+s\\)$`, 'm').test(t));
    expect(second).toHaveLength(2);
    expect(plain(second)[0]).toBe(plain(first)[0]);
    expect(plain(second)[1]).toMatch(new RegExp(`^◎ waiting for 1 of 1 objects: Deployment ${ns()}/app-web.* \\(\\d+s\\)$`));
    expect(plain(second).join('\n')).not.toContain('dependencies pending');

    await makeAvailable('app-web');
    const last = plain(await screenWhen('reconcile', 'reconcile to end', (t) => t.includes('[exit ')));
    expect(last).toEqual([plain(first)[0], expect.stringMatching(new RegExp(`^✔ Sync ${ns()}/app is Ready: applied revision sha256:[0-9a-f]{12}$`)), '[exit 0]']);
  });
});

describe('piped', () => {
  test('the same commands have no escape codes at all (nor carriage returns)', async () => {
    const [get, reconcile] = await Promise.all([runCli(['get', '--kubeconfig', KUBECONFIG, '-n', ns()]), runCli(['reconcile', 'sync/shown', '--kubeconfig', KUBECONFIG, '-n', ns()])]);
    for (const res of [get, reconcile]) {
      expect(res.code).toBe(0);
      expect(res.stdout + res.stderr).not.toMatch(ESCAPE_OR_CR);
    }
    expect(get.stdout).toMatch(/^Sync\s+shown\s+True\s+Succeeded/m);
    expect(reconcile.stdout).toMatch(new RegExp(`^► reconcile of Sync ${ns()}/shown requested .*\n(◎ .*\n)*✔ Sync ${ns()}/shown is Ready: applied revision sha256:[0-9a-f]{12}\n$`));
  });
});
