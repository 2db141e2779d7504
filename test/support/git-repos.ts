// Git repositories for tests (issue 48), made with the git CLI in a bare
// repository (git-server.ts serves `<root>/<name>.git`): commits written with
// git fast-import (thousands of files in one process; symlinks, executables,
// submodule links, deletions, and blobs of zeros streamed without holding them),
// branches made and moved, tags light and annotated. Deterministic: no system or
// user git config (GIT_CONFIG_NOSYSTEM, HOME = the root), a fixed author and
// committer, and each commit's time one minute after the repository's previous
// one, so the same steps give the same commit ids on every machine.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

/** A file of a commit: text or bytes (mode 100644), or one of the other kinds; null deletes the path. */
export type GitFile =
  | string
  | Buffer
  | { executable: string | Buffer }
  | { symlink: string }
  /** A blob of `zeros` zero bytes, streamed (a huge blob without a huge Buffer). */
  | { zeros: number }
  /** A submodule entry (mode 160000) naming a commit of another repository. */
  | { gitlink: string }
  | null;

export type GitTree = Record<string, GitFile>;

export interface CommitOptions {
  /** The branch to commit on (default the repository's default branch); created when missing. */
  branch?: string;
  /** Another ref to write instead (`refs/heads/x`, `refs/pull/1/head`, `refs/keep/x`). */
  ref?: string;
  /** The parent (default the ref's tip; `null`: a root commit). */
  parent?: string | null;
  /** Start from an empty tree instead of the parent's (only the files given). */
  replace?: boolean;
  message?: string;
}

export interface GitRepo {
  name: string;
  /** The bare repository's directory. */
  dir: string;
  defaultBranch: string;
  /** Runs `git <args>` in the repository with the fixed environment; its stdout, trimmed. */
  git(args: string[], input?: string | Buffer): string;
  /** Writes one commit of `files` (changes on the parent's tree) and points the branch at it: its id. */
  commit(files: GitTree, opts?: CommitOptions): Promise<string>;
  /** Creates or moves `refs/heads/<name>` to `commit` (any move: force). */
  branch(name: string, commit: string): void;
  /** A light tag, or an annotated one with `message`; `force` moves an existing one. */
  tag(name: string, commit: string, message?: string, force?: boolean): void;
  /** Deletes a ref (`refs/heads/x`, `refs/tags/v1`). */
  deleteRef(ref: string): void;
  /** Points HEAD at `refs/heads/<branch>`. */
  setHead(branch: string): void;
  /** `git rev-parse <rev>`: the commit (or the tag object's id for an annotated tag name with `^{tag}`). */
  rev(rev: string): string;
}

export const AUTHOR = { name: 'Sync Prims Test', email: 'test@syncprims.invalid' };
/** 2026-01-01T00:00:00Z: the first commit's time; each next one is a minute later. */
export const EPOCH = 1_767_225_600;

/** The environment every git command here runs with (no system or user config, fixed identities). */
export function gitEnv(home: string, time = EPOCH): NodeJS.ProcessEnv {
  const date = `${time} +0000`;
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: AUTHOR.name,
    GIT_AUTHOR_EMAIL: AUTHOR.email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: AUTHOR.name,
    GIT_COMMITTER_EMAIL: AUTHOR.email,
    GIT_COMMITTER_DATE: date,
  };
}

/** `git <args>` in `cwd` with gitEnv(home): stdout, trimmed. Throws with git's stderr. */
export function git(cwd: string, args: string[], opts: { home?: string; input?: string | Buffer; env?: NodeJS.ProcessEnv } = {}): string {
  try {
    return execFileSync('git', args, {
      cwd,
      env: { ...gitEnv(opts.home ?? cwd), ...opts.env },
      input: opts.input,
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 256 * 1024 * 1024,
    })
      .toString()
      .trim();
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`git ${args.join(' ')}: ${stderr || (err as Error).message}`);
  }
}

export interface BareRepoOptions {
  /** Default `main`. */
  defaultBranch?: string;
  /**
   * uploadpack.allowAnySHA1InWant (default false). The repository always has
   * uploadpack.allowReachableSHA1InWant=true (as GitHub and GitLab serve): a
   * protocol v0/v1 client (go-git) may then ask for a commit that no ref points at
   * but one reaches, shallow (`depth 1`) included; protocol v2 (the git CLI)
   * allows that anyway. With this, also a commit no ref reaches (a force-pushed-away one).
   */
  allowAnySha1InWant?: boolean;
}

/** `git init --bare <root>/<name>.git`, configured for serving (see BareRepoOptions). */
export function createBareRepo(root: string, name: string, opts: BareRepoOptions = {}): GitRepo {
  const defaultBranch = opts.defaultBranch ?? 'main';
  const dir = path.join(root, `${name}.git`);
  mkdirSync(path.dirname(dir), { recursive: true });
  git(root, ['init', '--quiet', '--bare', `--initial-branch=${defaultBranch}`, dir], { home: root });
  const run = (args: string[], input?: string | Buffer, time?: number): string => git(dir, args, { home: root, input, env: gitEnv(root, time) });
  run(['config', 'uploadpack.allowReachableSHA1InWant', 'true']);
  // Only when true: `false` would clear allowReachableSHA1InWant too (upload-pack's ALLOW_ANY holds both bits).
  if (opts.allowAnySha1InWant) run(['config', 'uploadpack.allowAnySHA1InWant', 'true']);
  run(['config', 'uploadpack.allowFilter', 'true']);
  run(['config', 'http.receivepack', 'false']);
  let commits = 0;
  const nextTime = (): number => EPOCH + 60 * commits++;
  const rev = (r: string): string => run(['rev-parse', '--verify', '--quiet', r]);
  const exists = (r: string): boolean => {
    try {
      return rev(`${r}^{commit}`) !== '';
    } catch {
      return false;
    }
  };
  return {
    name,
    dir,
    defaultBranch,
    git: (args, input) => run(args, input),
    commit: async (files, o = {}) => {
      const ref = o.ref ?? `refs/heads/${o.branch ?? defaultBranch}`;
      const parent = o.parent === undefined ? (exists(ref) ? rev(`${ref}^{commit}`) : null) : o.parent;
      await fastImport(dir, root, ref, files, { parent, replace: o.replace ?? false, message: o.message ?? `commit ${commits}`, time: nextTime() });
      return rev(`${ref}^{commit}`);
    },
    branch: (b, commit) => void run(['update-ref', `refs/heads/${b}`, commit]),
    tag: (t, commit, message, force) => {
      const f = force ? ['-f'] : [];
      if (message === undefined) run(['tag', ...f, t, commit]);
      else run(['tag', ...f, '-a', '-m', message, t, commit], undefined, nextTime());
    },
    deleteRef: (r) => void run(['update-ref', '-d', r]),
    setHead: (b) => void run(['symbolic-ref', 'HEAD', `refs/heads/${b}`]),
    rev,
  };
}

interface ImportCommit {
  parent: string | null;
  replace: boolean;
  message: string;
  time: number;
}

/** One commit through `git fast-import --force` (the ref may move anywhere), files streamed to its stdin. */
async function fastImport(dir: string, home: string, ref: string, files: GitTree, c: ImportCommit): Promise<void> {
  const child = spawn('git', ['fast-import', '--quiet', '--force', '--done'], { cwd: dir, env: gitEnv(home, c.time), stdio: ['pipe', 'ignore', 'pipe'] });
  const stderr: Buffer[] = [];
  child.stderr.on('data', (b: Buffer) => stderr.push(b));
  const closed = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  const write = (chunk: string | Buffer): Promise<void> =>
    child.stdin.write(chunk) ? Promise.resolve() : new Promise((resolve) => child.stdin.once('drain', () => resolve()));
  const data = async (body: Buffer): Promise<void> => write(Buffer.concat([Buffer.from(`data ${body.length}\n`), body, Buffer.from('\n')]));
  const who = `${AUTHOR.name} <${AUTHOR.email}> ${c.time} +0000`;
  const message = Buffer.from(c.message);
  child.stdin.on('error', () => undefined); // fast-import that failed early: its stderr says why
  await write(`commit ${ref}\nauthor ${who}\ncommitter ${who}\ndata ${message.length}\n`);
  await write(Buffer.concat([message, Buffer.from('\n')]));
  if (c.parent !== null) await write(`from ${c.parent}\n`);
  if (c.replace) await write('deleteall\n');
  for (const [p, file] of Object.entries(files)) await writeFile(quotePath(p), file, write, data);
  await write('\ndone\n');
  child.stdin.end();
  const code = await closed;
  if (code !== 0) throw new Error(`git fast-import for ${ref}: exit ${code}: ${Buffer.concat(stderr).toString().trim()}`);
}

type Write = (chunk: string | Buffer) => Promise<void>;

async function writeFile(p: string, file: GitFile, write: Write, data: (body: Buffer) => Promise<void>): Promise<void> {
  if (file === null) return write(`D ${p}\n`);
  if (typeof file === 'string' || Buffer.isBuffer(file)) {
    await write(`M 100644 inline ${p}\n`);
    return data(Buffer.from(file));
  }
  if ('executable' in file) {
    await write(`M 100755 inline ${p}\n`);
    return data(Buffer.from(file.executable));
  }
  if ('symlink' in file) {
    await write(`M 120000 inline ${p}\n`);
    return data(Buffer.from(file.symlink));
  }
  if ('gitlink' in file) return write(`M 160000 ${file.gitlink} ${p}\n`);
  await write(`M 100644 inline ${p}\ndata ${file.zeros}\n`);
  const chunk = Buffer.alloc(Math.min(file.zeros, 4 * 1024 * 1024));
  for (let left = file.zeros; left > 0; left -= chunk.length) await write(left >= chunk.length ? chunk : chunk.subarray(0, left));
  await write('\n');
}

/** A path as fast-import reads it: C-quoted when it starts with a quote or holds a newline. */
function quotePath(p: string): string {
  if (!p.startsWith('"') && !p.includes('\n')) return p;
  return `"${p.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/**
 * `n` small YAML files spread over folders of `perDir` (default 100), each of
 * about `bytes` bytes (default 400): a repository of a few thousand files for the
 * benchmark and the limits tests. The contents differ by `seed`.
 */
export function manyFiles(n: number, opts: { perDir?: number; bytes?: number; seed?: string } = {}): GitTree {
  const perDir = opts.perDir ?? 100;
  const bytes = opts.bytes ?? 400;
  const files: GitTree = {};
  for (let i = 0; i < n; i++) {
    const head = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\ndata:\n  seed: "${opts.seed ?? ''}"\n  value: "`;
    const filler = `${i}-`.repeat(Math.max(1, Math.ceil((bytes - head.length) / (String(i).length + 1)))).slice(0, Math.max(1, bytes - head.length - 2));
    files[`dir-${Math.floor(i / perDir)}/cm-${i}.yaml`] = `${head}${filler}"\n`;
  }
  return files;
}
