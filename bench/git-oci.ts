// Git and OCI sources (issue 48, docs/adr/0014): a repository of 3,000 files
// served by the test Git server (test/support/git-server.ts: git-http-backend,
// in this process) fetched by the sandboxed fetch helper the operator runs
// (dist/fetch/syncprims-fetch, op fetch, one process per fetch, walls up) and by
// `git clone --depth 1` (the machine's git, a checkout to disk), same server,
// same run; the same tree as an OCI artifact (one tar+gzip layer with a title,
// as `oras push` makes it) on the test registry (syncprims-testservers behind
// the counting front of test/support/oci-registry.ts) fetched by the helper and
// by `oras pull` (v1.3.6, bench/oras); and the Flux artifact of the same tree
// by the helper. First run and warm (median of the next RUNS), requests per
// fetch, and whether the warm ratio is within issue 48's 1.3x. Writes
// docs/benchmarks/git-oci.md; asserts nothing.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createBareRepo, gitEnv, manyFiles } from '../test/support/git-repos.js';
import { startGitServer, type GitServer } from '../test/support/git-server.js';
import { fluxTarball, startOciRegistry, type OciRegistry } from '../test/support/oci-registry.js';
import { firstAndWarm, ROOT } from './support.js';

const OUT = path.join(ROOT, 'docs/benchmarks/git-oci.md');
const ORAS = path.join(ROOT, '.local', 'bin', 'oras');
const RUNS = Number(process.env.RUNS ?? 10);
const FILES = 3000;
const BOUND = 1.3;
// What `make build` and `make bench` built (this script runs from .local/bench-dist).
const HELPER = process.env.SYNCPRIMS_FETCH_HELPER ?? path.join(ROOT, 'dist', 'fetch', 'syncprims-fetch');
process.env.SYNCPRIMS_TESTSERVERS ??= path.join(ROOT, '.local', 'bin', 'syncprims-testservers');

const run = promisify(execFile);

interface HelperOutput {
  revision: string;
  files?: number;
  bytes?: number;
  requests?: number;
  data?: string;
}

/** One run of the helper as the operator runs it (env {}, cwd /, the request on stdin): its output, or its failure. */
function fetchHelper(input: Record<string, unknown>): Promise<HelperOutput> {
  const child = spawn(HELPER, ['-memory', String(512 << 20), '-timeout', '60000ms'], { env: {}, cwd: '/', stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => err.push(b));
  child.stdin.end(JSON.stringify({ op: 'fetch', maxFiles: 10_000, denyCidrs: [], ...input }));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`syncprims-fetch exited ${code}: ${Buffer.concat(err).toString().trim()}`));
      resolve(JSON.parse(Buffer.concat(out).toString()) as HelperOutput);
    });
  });
}

interface Row {
  how: string;
  first: number;
  warm: number;
  requests: string;
}

/** The Git half: ours and `git clone --depth 1`, the server's requests per fetch for each. */
async function gitRows(server: GitServer, tmp: string): Promise<{ rows: Row[]; files: number; tarBytes: number }> {
  const repo = createBareRepo(server.root, 'bench/app');
  await repo.commit(manyFiles(FILES));
  const url = server.repoUrl('bench/app');
  let files = 0;
  let tarBytes = 0;
  const ours = async (): Promise<void> => {
    const got = await fetchHelper({ kind: 'git', url, ref: { branch: 'main' } });
    files = got.files ?? 0;
    tarBytes = Buffer.from(got.data ?? '', 'base64').length;
  };
  let clones = 0;
  const clone = async (): Promise<void> => {
    const dir = path.join(tmp, `clone-${clones++}`);
    await run('git', ['clone', '--quiet', '--depth', '1', '--branch', 'main', url, dir], { env: gitEnv(tmp) });
    rmSync(dir, { recursive: true, force: true });
  };
  // The same fetch without writing 3,000 files: the baseline the helper (which writes none) is held to.
  const bare = async (): Promise<void> => {
    const dir = path.join(tmp, `clone-${clones++}`);
    await run('git', ['clone', '--quiet', '--depth', '1', '--branch', 'main', '--no-checkout', url, dir], { env: gitEnv(tmp) });
    rmSync(dir, { recursive: true, force: true });
  };
  const perFetch = async (f: () => Promise<void>): Promise<string> => {
    server.reset();
    await f();
    const c = server.counts('bench/app');
    return Object.entries(c).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k}`).join(', ');
  };
  const rows: Row[] = [];
  rows.push({ how: `the fetch helper (op fetch, branch main: a gzip'd tar of the tree on stdout)`, ...(await firstAndWarm(ours, RUNS)), requests: await perFetch(ours) });
  rows.push({ how: '`git clone --depth 1 --branch main --no-checkout` (git 2.39, protocol v2, the pack only)', ...(await firstAndWarm(bare, RUNS)), requests: await perFetch(bare) });
  rows.push({ how: '`git clone --depth 1 --branch main` (git 2.39, protocol v2, a checkout to disk)', ...(await firstAndWarm(clone, RUNS)), requests: await perFetch(clone) });
  return { rows, files, tarBytes };
}

/** The OCI half: ours and `oras pull` on one titled tar+gzip layer, and ours on the Flux artifact of the same tree. */
async function ociRows(registry: OciRegistry, tmp: string): Promise<{ rows: Row[]; layerBytes: number }> {
  const tree = manyFiles(FILES) as Record<string, string>;
  const plain = await registry.pushTarballLayer(await fluxTarball(tree), { repo: 'bench/plain', tag: 'v1', title: 'tree.tar.gz' });
  await registry.pushFluxArtifact(tree, { repo: 'bench/flux', tag: 'v1' });
  const ours = (repo: string) => async (): Promise<void> => void (await fetchHelper({ kind: 'oci', url: registry.url(repo), ref: { tag: 'v1' }, insecure: true }));
  let pulls = 0;
  const oras = async (): Promise<void> => {
    const dir = path.join(tmp, `pull-${pulls++}`);
    await run(ORAS, ['pull', '--plain-http', '--no-tty', '-o', dir, `${registry.host}/bench/plain:v1`], { env: { HOME: tmp, PATH: process.env.PATH ?? '' } });
    rmSync(dir, { recursive: true, force: true });
  };
  const perFetch = async (repo: string, f: () => Promise<void>): Promise<string> => {
    registry.reset();
    await f();
    const c = registry.counts(repo);
    const ping = registry.count('', 'ping');
    return [...(ping ? [`${ping} ping`] : []), ...Object.entries(c).filter(([k, n]) => n > 0 && k !== 'ping').map(([k, n]) => `${n} ${k}`)].join(', ');
  };
  const rows: Row[] = [];
  rows.push({ how: 'the fetch helper (op fetch, tag v1: the layer on stdout, its digest checked)', ...(await firstAndWarm(ours('bench/plain'), RUNS)), requests: await perFetch('bench/plain', ours('bench/plain')) });
  rows.push({ how: '`oras pull --plain-http` v1.3.6 (the layer written to disk as tree.tar.gz)', ...(await firstAndWarm(oras, RUNS)), requests: await perFetch('bench/plain', oras) });
  rows.push({ how: 'the fetch helper on the Flux artifact of the same tree (`flux push artifact` layout)', ...(await firstAndWarm(ours('bench/flux'), RUNS)), requests: await perFetch('bench/flux', ours('bench/flux')) });
  return { rows, layerBytes: plain.layer.length };
}

const ms = (n: number): string => `${n.toFixed(0)} ms`;
const table = (rows: Row[]): string[] => ['| how | first | warm | requests per fetch |', '|---|---|---|---|', ...rows.map((r) => `| ${r.how} | ${ms(r.first)} | ${ms(r.warm)} | ${r.requests} |`)];
const ratio = (ours: Row | undefined, theirs: Row | undefined): string => {
  const r = (ours?.warm ?? NaN) / (theirs?.warm ?? NaN);
  return `${r.toFixed(2)}x (${r <= BOUND ? 'within' : 'over'} ${BOUND}x)`;
};

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bench-git-oci-'));
  const server = await startGitServer();
  const registry = await startOciRegistry();
  try {
    const git = await gitRows(server, tmp);
    const oci = await ociRows(registry, tmp);
    const report = [
      '## Git and OCI sources (bench/git-oci.ts)',
      '',
      `A repository of ${git.files || FILES} files (${FILES / 100} folders of 100 small YAML files, one commit; the helper's tree.tar.gz is ${(git.tarBytes / 1024).toFixed(0)} KiB) served by`,
      'test/support/git-server.ts (git-http-backend as a CGI, in the benchmark\'s process, on loopback), and the same tree as an OCI artifact',
      `(${(oci.layerBytes / 1024).toFixed(0)} KiB layer) on syncprims-testservers' registry behind test/support/oci-registry.ts's front. Each way ${RUNS + 1} times:`,
      `"first" is the first of the run, "warm" the median of the next ${RUNS}; requests as the servers counted them for one more fetch.`,
      `${os.availableParallelism()} CPUs, load ${os.loadavg()[0]?.toFixed(1)}, ${new Date().toISOString().slice(0, 10)}.`,
      '',
      ...table(git.rows),
      `| ratio (ours / git clone --no-checkout, warm) | | ${ratio(git.rows[0], git.rows[1])} | |`,
      `| ratio (ours / git clone, warm) | | ${ratio(git.rows[0], git.rows[2])} | |`,
      '',
      ...table(oci.rows),
      `| ratio (ours / oras pull, warm) | | ${ratio(oci.rows[0], oci.rows[1])} | |`,
      '',
      'The helper clones into memory (go-git, depth 1) and answers with the tree as a gzip\'d tar in JSON; `git clone` writes a',
      'checkout (3,000 files to this machine\'s disk: most of its time), so the baseline the helper is held to is `--no-checkout`, which',
      'fetches the same pack and writes only `.git`. The helper\'s figures include its process start, its walls (seccomp, Landlock) and',
      'the JSON round trip, as the operator pays them; a plain-http fetch no longer reads the system\'s CA certificates (read before the',
      'first https request only), which halved its fixed cost.',
      '',
    ].join('\n');
    console.log(report);
    mkdirSync(path.dirname(OUT), { recursive: true });
    writeFileSync(OUT, report);
  } finally {
    await registry.close();
    await server.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
