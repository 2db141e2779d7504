// A Helm chart repository on loopback for tests: index.yaml listing the
// charts given (packaged here as .tgz, as `helm package` lays them out),
// the archives under /charts/, optional credentials, and a count of the
// requests it received by path and of the Authorization headers it saw.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { stringify } from 'yaml';
import { tarGz } from './tarball.js';

export interface RepositoryChartFixture {
  name: string;
  version: string;
  /** Files of the chart folder (`templates/cm.yaml` → `<name>/templates/cm.yaml` in the archive); Chart.yaml is written from name and version unless given. */
  files: Record<string, string>;
  /** The URL the index gives for it (default `charts/<name>-<version>.tgz`, relative). */
  url?: string;
  /** The digest the index gives (default the archive's own); `null`: none. */
  digest?: string | null;
}

export interface ChartRepository {
  url: string;
  /** Requests by path. */
  received: Map<string, number>;
  /** The Authorization header of each request, by path (undefined: none). */
  authorization: Map<string, (string | undefined)[]>;
  /** Archives by file name, to check against. */
  archives: Map<string, Buffer>;
  /** Replaces the index's body (a huge one, a broken one). */
  setIndex(body: string | Buffer | undefined): void;
  close(): Promise<void>;
}

/** The packaged chart as `helm package` writes it: every file under `<name>/`. */
export async function packageChart(chart: Pick<RepositoryChartFixture, 'name' | 'version' | 'files'>): Promise<Buffer> {
  const files: Record<string, string> = { 'Chart.yaml': `apiVersion: v2\nname: ${chart.name}\nversion: ${chart.version}\n`, ...chart.files };
  return tarGz(Object.entries(files).map(([path, data]) => ({ name: `${chart.name}/${path}`, data })));
}

/** Starts the repository; with `auth`, every request must carry it (401 otherwise). */
export async function startChartRepository(charts: RepositoryChartFixture[], auth?: string): Promise<ChartRepository> {
  const archives = new Map<string, Buffer>();
  const entries: Record<string, unknown[]> = {};
  for (const c of charts) {
    const data = await packageChart(c);
    const file = `${c.name}-${c.version}.tgz`;
    archives.set(file, data);
    const digest = c.digest === undefined ? createHash('sha256').update(data).digest('hex') : c.digest;
    (entries[c.name] ??= []).push({ apiVersion: 'v2', name: c.name, version: c.version, urls: [c.url ?? `charts/${file}`], ...(digest === null ? {} : { digest }) });
  }
  let index: string | Buffer | undefined = stringify({ apiVersion: 'v1', entries, generated: '2026-12-02T00:00:00Z' });
  const received = new Map<string, number>();
  const authorization = new Map<string, (string | undefined)[]>();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    received.set(path, (received.get(path) ?? 0) + 1);
    authorization.set(path, [...(authorization.get(path) ?? []), req.headers.authorization]);
    if (auth !== undefined && req.headers.authorization !== auth) return void res.writeHead(401).end('unauthorized');
    const body = path === '/index.yaml' ? index : archives.get(path.replace(/^\/charts\//, ''));
    if (body === undefined) return void res.writeHead(404).end('not found');
    res.writeHead(200).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    authorization,
    archives,
    setIndex: (body) => {
      index = body;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
