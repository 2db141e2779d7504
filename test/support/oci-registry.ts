// An OCI registry on loopback for tests (issue 48): the in-memory registry of
// syncprims-testservers (fetch/cmd/testservers: go-containerregistry's, with
// optional basic auth), behind a front in this process that counts every
// request by repository and kind, can serve other bytes for a blob (a tampered
// layer: the registry itself verifies uploads, so it cannot hold one), can
// redirect a blob elsewhere (a denied address), and can serve HTTPS. Pushes go
// straight to the registry (uncounted) over the distribution API: blobs by
// POST + PUT ?digest=, manifests by PUT.
//
// What is pushed: a Flux artifact as `flux push artifact` makes it (fluxcd/pkg
// oci/client Push: go-containerregistry's empty image with the Flux config and
// content media types; the config and manifest byte for byte the same layout,
// 233 and 640 bytes for Flux's own flux-manifests artifacts), a plain tarball
// layer (as `oras push` makes one), a tar bomb, and cosign signatures (simple
// signing payloads, ECDSA P-256 keys of node:crypto). The tarball differs from
// Flux's only in what no consumer reads: gzip's bytes (zlib, not Go's
// compress/gzip) and the entries' mtime (the Unix epoch, not Go's zero time).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { gzipBomb } from './hostile-archives.js';
import { tarGz, type TarEntry } from './tarball.js';
import { selfSignedCertificate } from './tls-server.js';

export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
export const OCI_EMPTY = 'application/vnd.oci.empty.v1+json';
export const OCI_LAYER_TAR_GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';
export const FLUX_CONFIG = 'application/vnd.cncf.flux.config.v1+json';
export const FLUX_CONTENT = 'application/vnd.cncf.flux.content.v1.tar+gzip';
export const COSIGN_SIMPLE_SIGNING = 'application/vnd.dev.cosign.simplesigning.v1+json';
export const COSIGN_SIGNATURE_ANNOTATION = 'dev.cosignproject.cosign/signature';
export const ANNOTATION_CREATED = 'org.opencontainers.image.created';
export const ANNOTATION_SOURCE = 'org.opencontainers.image.source';
export const ANNOTATION_REVISION = 'org.opencontainers.image.revision';
export const ANNOTATION_TITLE = 'org.opencontainers.image.title';

// ---------------------------------------------------------------- testservers

/** syncprims-testservers: SYNCPRIMS_TESTSERVERS, else .local/bin/ of this checkout (`make` builds it from fetch/cmd/testservers). */
export function testServersPath(): string {
  const given = process.env.SYNCPRIMS_TESTSERVERS;
  if (given) return given;
  return fileURLToPath(new URL('../../.local/bin/syncprims-testservers', import.meta.url));
}

/** A running syncprims-testservers: its addresses (first stdout line) and its counts (GET /_counts on `control`). */
export interface TestServers {
  addresses: { oci?: string; ssh?: string; control: string };
  /** Its own counts ("GET manifests", "ssh sessions", ...) since the start or the last `resetCounts`. */
  counts(): Promise<Record<string, number>>;
  resetCounts(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts syncprims-testservers with `args` (e.g. `['-oci']`); it stops when its stdin closes. */
export async function startTestServers(args: string[]): Promise<TestServers> {
  const bin = testServersPath();
  if (!existsSync(bin)) throw new Error(`${bin} is missing: build it (cd fetch && go build -o ${bin} ./cmd/testservers), or set SYNCPRIMS_TESTSERVERS`);
  const child: ChildProcessWithoutNullStreams = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr.on('data', (b: Buffer) => stderr.push(b.toString()));
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.on('error', reject);
    void exited.then(() => reject(new Error(`syncprims-testservers ${args.join(' ')} exited: ${stderr.join('').trim()}`)));
  });
  const addresses = JSON.parse(line) as TestServers['addresses'];
  const control = `http://${addresses.control}`;
  return {
    addresses,
    counts: async () => (await (await fetch(`${control}/_counts`)).json()) as Record<string, number>,
    resetCounts: async () => void (await fetch(`${control}/_reset`, { method: 'POST' })),
    stop: async () => {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------- the registry and its front

export type OciRequestKind = 'ping' | 'manifests' | 'blobs' | 'uploads' | 'tags' | 'referrers' | 'other';

/** One request the front answered. */
export interface OciRequest {
  /** `org/app` of `/v2/org/app/manifests/v1`; '' for the ping and others. */
  repo: string;
  kind: OciRequestKind;
  method: string;
  /** The tag or digest of manifests and blobs requests. */
  reference?: string;
  url: string;
  status: number;
  authorization?: string;
}

export interface OciRegistryOptions {
  /** The registry requires these (basic auth; 401 with `WWW-Authenticate: Basic` otherwise). */
  basicAuth?: { username: string; password: string };
  /** The front serves HTTPS with a self-signed certificate for 127.0.0.1 (`caPem`). */
  tls?: boolean;
}

export interface OciRegistry {
  /** `127.0.0.1:<port>` of the front: what sources name (`oci://<host>/<repo>`). */
  host: string;
  /** `oci://<host>/<repo>` */
  url(repo: string): string;
  /** With `tls`: the certificate to trust. */
  caPem?: string;
  /** The testservers registry itself (`http://127.0.0.1:<port>`): pushes go there, uncounted by the front. */
  upstream: string;
  /** The client that pushes to it (with the credentials, if any). */
  client: OciClient;
  servers: TestServers;
  /** Every request the front answered since the start or the last `reset`. */
  requests: OciRequest[];
  count(repo?: string, kind?: OciRequestKind, method?: string): number;
  counts(repo: string): Record<OciRequestKind, number>;
  reset(): void;
  /** From now on, the front answers GET/HEAD of blob `digest` of `repo` with `bytes` instead (other repositories holding the same blob are left alone). */
  tamper(repo: string, digest: string, bytes: Buffer): void;
  /** From now on, the front answers GET/HEAD of blob `digest` of `repo` with a 307 to `location` (as registries send blobs to storage). */
  redirectBlob(repo: string, digest: string, location: string): void;
  pushFluxArtifact(files: Record<string, string | Buffer>, opts: FluxArtifactOptions): Promise<PushedArtifact>;
  pushTarballLayer(layer: Buffer, opts: TarballLayerOptions): Promise<PushedArtifact>;
  /** A Flux artifact whose layer the front serves tampered (`content`: other bytes, same length) or whose manifest gives the layer a wrong size (`size`). */
  pushTampered(files: Record<string, string | Buffer>, opts: FluxArtifactOptions & { how?: 'content' | 'size' }): Promise<PushedArtifact>;
  /** A Flux artifact whose layer is a gzip bomb (hostile-archives.ts): `inflatedMiB` of zeros in one file claiming 5 GiB. */
  pushTarBomb(opts: FluxArtifactOptions & { inflatedMiB?: number }): Promise<PushedArtifact>;
  /** Signs the manifest `digest` of `repo` with each key (cosign's simple signing, tag `sha256-<hex>.sig`). */
  cosignSign(digest: string, keys: KeyObject | KeyObject[], opts: CosignOptions): Promise<PushedArtifact>;
  close(): Promise<void>;
}

const KINDS: OciRequestKind[] = ['ping', 'manifests', 'blobs', 'uploads', 'tags', 'referrers', 'other'];

/** Starts testservers' registry and the front (127.0.0.1, free ports). */
export async function startOciRegistry(opts: OciRegistryOptions = {}): Promise<OciRegistry> {
  const auth = opts.basicAuth;
  const servers = await startTestServers(['-oci', ...(auth ? ['-oci-basic-auth', `${auth.username}:${auth.password}`] : [])]);
  const upstream = `http://${servers.addresses.oci}`;
  const front: FrontState = { upstream, requests: [], tampered: new Map(), redirects: new Map() };
  const handler = (req: IncomingMessage, res: ServerResponse): void => relay(front, req, res);
  const cert = opts.tls ? selfSignedCertificate() : undefined;
  const server = cert ? https.createServer({ key: cert.key, cert: cert.caPem }, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new OciClient(upstream, auth);
  const of = (repo?: string, kind?: OciRequestKind, method?: string): OciRequest[] =>
    front.requests.filter((r) => (repo === undefined || r.repo === repo) && (kind === undefined || r.kind === kind) && (method === undefined || r.method === method));
  const registry: OciRegistry = {
    host,
    url: (repo) => `oci://${host}/${repo}`,
    ...(cert ? { caPem: cert.caPem } : {}),
    upstream,
    client,
    servers,
    get requests() {
      return front.requests;
    },
    count: (repo, kind, method) => of(repo, kind, method).length,
    counts: (repo) => Object.fromEntries(KINDS.map((k) => [k, of(repo, k).length])) as Record<OciRequestKind, number>,
    reset: () => void (front.requests = []),
    tamper: (repo, digest, bytes) => void front.tampered.set(`${repo}@${digest}`, bytes),
    redirectBlob: (repo, digest, location) => void front.redirects.set(`${repo}@${digest}`, location),
    pushFluxArtifact: (files, o) => client.pushFluxArtifact(files, o),
    pushTarballLayer: (layer, o) => client.pushTarballLayer(layer, o),
    pushTampered: async (files, o) => {
      if (o.how === 'size') return client.pushFluxArtifact(files, { ...o, layerSize: (n) => n - 1 });
      const pushed = await client.pushFluxArtifact(files, o);
      const other = Buffer.from(pushed.layer);
      other.writeUInt8((other.readUInt8(other.length - 1) ^ 0xff) & 0xff, other.length - 1); // gzip's trailer (its size): the same length, another digest
      registry.tamper(o.repo, pushed.layerDigest, other);
      return pushed;
    },
    pushTarBomb: (o) => client.pushTarballLayer(gzipBomb(o.inflatedMiB ?? 64), { ...o, flux: true }),
    cosignSign: (digest, keys, o) => client.cosignSign(digest, Array.isArray(keys) ? keys : [keys], { dockerReference: `${host}/${o.repo}`, ...o }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await servers.stop();
    },
  };
  return registry;
}

interface FrontState {
  upstream: string;
  requests: OciRequest[];
  /** By `<repo>@<digest>`. */
  tampered: Map<string, Buffer>;
  redirects: Map<string, string>;
}

/** `org/app`, `manifests`, `v1` of `/v2/org/app/manifests/v1`. */
export function registryPath(pathname: string): { repo: string; kind: OciRequestKind; reference?: string } {
  if (pathname === '/v2/' || pathname === '/v2') return { repo: '', kind: 'ping' };
  const m = /^\/v2\/(.+?)\/(manifests|blobs\/uploads|blobs|tags|referrers)(?:\/(.*))?$/.exec(pathname);
  if (!m) return { repo: '', kind: 'other' };
  const kinds: Record<string, OciRequestKind> = { manifests: 'manifests', 'blobs/uploads': 'uploads', blobs: 'blobs', tags: 'tags', referrers: 'referrers' };
  const kind = kinds[m[2] ?? ''] ?? 'other';
  return { repo: m[1] ?? '', kind, ...(m[3] && kind !== 'uploads' && kind !== 'tags' ? { reference: m[3] } : {}) };
}

function relay(front: FrontState, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const where = registryPath(url.pathname);
  const record = (status: number): void => {
    front.requests.push({
      ...where,
      method: req.method ?? '',
      url: req.url ?? '/',
      status,
      ...(req.headers.authorization !== undefined ? { authorization: req.headers.authorization } : {}),
    });
  };
  const digest = where.kind === 'blobs' ? where.reference : undefined;
  const blob = `${where.repo}@${digest}`;
  const location = digest && front.redirects.get(blob);
  if (location) {
    record(307);
    return void res.writeHead(307, { location }).end();
  }
  const tampered = digest && (req.method === 'GET' || req.method === 'HEAD') ? front.tampered.get(blob) : undefined;
  if (tampered) {
    record(200);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': tampered.length, 'docker-content-digest': digest });
    return void res.end(req.method === 'HEAD' ? undefined : tampered);
  }
  const headers = { ...req.headers, host: new URL(front.upstream).host };
  const up = http.request(`${front.upstream}${req.url ?? '/'}`, { method: req.method, headers }, (upRes) => {
    record(upRes.statusCode ?? 502);
    res.writeHead(upRes.statusCode ?? 502, upRes.headers);
    upRes.pipe(res);
  });
  up.on('error', (err) => {
    record(502);
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`upstream: ${err.message}`);
  });
  req.pipe(up);
}

// ---------------------------------------------------------------- the client

export interface Descriptor {
  mediaType: string;
  size: number;
  digest: string;
  annotations?: Record<string, string>;
}

export interface Manifest {
  schemaVersion: 2;
  mediaType: string;
  artifactType?: string;
  config: Descriptor;
  layers: Descriptor[];
  annotations?: Record<string, string>;
}

/** What a push wrote: the manifest (its digest, bytes, and parsed), the config, the (first) layer. */
export interface PushedArtifact {
  repo: string;
  tag: string;
  /** `sha256:<hex>` of the manifest. */
  digest: string;
  manifest: Manifest;
  manifestBytes: Buffer;
  config: Buffer;
  layer: Buffer;
  layerDigest: string;
}

export interface FluxArtifactOptions {
  repo: string;
  tag: string;
  /** org.opencontainers.image.source (default `https://example.invalid/<repo>.git`). */
  source?: string;
  /** org.opencontainers.image.revision (default `main@sha1:` and 40 zeros). */
  revision?: string;
  /** org.opencontainers.image.created (default 2026-01-01T00:00:00Z). */
  created?: string;
  /** More annotations (`flux push artifact --annotations`). */
  annotations?: Record<string, string>;
  /** The layer size the manifest gives, from the real one (a tampered manifest). */
  layerSize?: (size: number) => number;
}

export interface TarballLayerOptions {
  repo: string;
  tag: string;
  /** Default application/vnd.oci.image.layer.v1.tar+gzip (Flux's content type with `flux`). */
  mediaType?: string;
  /** Push as a Flux artifact (Flux's config and content media type, its annotations) around this layer. */
  flux?: boolean;
  /** The layer's org.opencontainers.image.title (as `oras push file.tgz` gives it); default `layer.tar.gz` (none with `flux`). */
  title?: string;
  source?: string;
  revision?: string;
  created?: string;
}

export interface CosignOptions {
  repo: string;
  /** The payload's critical.identity.docker-reference (default `<front host>/<repo>`). */
  dockerReference?: string;
  /** The digest the payload names (default the one signed: another one makes a signature for the wrong artifact). */
  payloadDigest?: string;
}

/** A P-256 key pair as cosign makes them: the public key as PEM (SubjectPublicKeyInfo, cosign.pub's format). */
export function cosignKeyPair(): { privateKey: KeyObject; publicKey: KeyObject; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, publicKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** The simple signing payload cosign signs for `digest` of `dockerReference` (`host/repo`), byte for byte. */
export function cosignPayload(dockerReference: string, digest: string): Buffer {
  return Buffer.from(
    `{"critical":{"identity":{"docker-reference":"${dockerReference}"},"image":{"docker-manifest-digest":"${digest}"},"type":"cosign container image signature"},"optional":null}`,
  );
}

/** The `.dockerconfigjson` of a kubernetes.io/dockerconfigjson Secret for `host`. */
export function dockerConfigJson(host: string, username: string, password: string): string {
  const auth = Buffer.from(`${username}:${password}`).toString('base64');
  return JSON.stringify({ auths: { [host]: { username, password, auth } } });
}

export const sha256 = (data: Buffer | string): string => `sha256:${createHash('sha256').update(data).digest('hex')}`;

/** The files as `flux push artifact --path=<dir>` archives them: the root `.`, every folder, every file, in walk order, uid/gid 0. */
export async function fluxTarball(files: Record<string, string | Buffer>): Promise<Buffer> {
  const dirs = new Set<string>(['.']);
  for (const p of Object.keys(files)) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  const entries: TarEntry[] = [
    ...[...dirs].map((name) => ({ name, type: 'directory' as const })),
    ...Object.entries(files).map(([name, data]) => ({ name, data })),
  ];
  // filepath.Walk's order: lexical, a folder before what it holds.
  const key = (e: TarEntry): string => (e.name === '.' ? '' : e.name);
  entries.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return tarGz(entries);
}

/** A client of the distribution API, for pushing test content and reading it back. */
export class OciClient {
  constructor(
    readonly base: string,
    private readonly auth?: { username: string; password: string },
  ) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const a = this.auth;
    return a ? { authorization: `Basic ${Buffer.from(`${a.username}:${a.password}`).toString('base64')}`, ...extra } : extra;
  }

  /** POST /v2/<repo>/blobs/uploads/, then PUT <location>?digest=: the blob's digest. */
  async pushBlob(repo: string, data: Buffer): Promise<string> {
    const digest = sha256(data);
    const start = await fetch(`${this.base}/v2/${repo}/blobs/uploads/`, { method: 'POST', headers: this.headers() });
    await start.arrayBuffer();
    const location = start.headers.get('location');
    if (start.status !== 202 || !location) throw new Error(`POST blobs/uploads of ${repo}: ${start.status}`);
    const put = new URL(location, this.base);
    put.searchParams.set('digest', digest);
    const res = await fetch(put, { method: 'PUT', headers: this.headers({ 'content-type': 'application/octet-stream' }), body: data });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`PUT blob ${digest} of ${repo}: ${res.status} ${text}`);
    return digest;
  }

  /** PUT /v2/<repo>/manifests/<reference>: the manifest's digest. */
  async pushManifest(repo: string, reference: string, manifest: Buffer, mediaType = OCI_MANIFEST): Promise<string> {
    const res = await fetch(`${this.base}/v2/${repo}/manifests/${reference}`, { method: 'PUT', headers: this.headers({ 'content-type': mediaType }), body: manifest });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`PUT manifest ${repo}:${reference}: ${res.status} ${text}`);
    return sha256(manifest);
  }

  /** GET a manifest (by tag or digest): its bytes and the digest the registry gives. */
  async getManifest(repo: string, reference: string): Promise<{ bytes: Buffer; digest: string | null; mediaType: string | null }> {
    const res = await fetch(`${this.base}/v2/${repo}/manifests/${reference}`, { headers: this.headers({ accept: `${OCI_MANIFEST}, application/vnd.oci.image.index.v1+json` }) });
    const bytes = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`GET manifest ${repo}:${reference}: ${res.status} ${bytes.toString()}`);
    return { bytes, digest: res.headers.get('docker-content-digest'), mediaType: res.headers.get('content-type') };
  }

  async getBlob(repo: string, digest: string): Promise<Buffer> {
    const res = await fetch(`${this.base}/v2/${repo}/blobs/${digest}`, { headers: this.headers() });
    const bytes = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`GET blob ${repo}@${digest}: ${res.status}`);
    return bytes;
  }

  async tags(repo: string): Promise<string[]> {
    const res = await fetch(`${this.base}/v2/${repo}/tags/list`, { headers: this.headers() });
    return ((await res.json()) as { tags?: string[] }).tags ?? [];
  }

  /** Pushes config and layers, then the manifest under `tag`. */
  async pushImage(repo: string, tag: string, config: { mediaType: string; data: Buffer }, layers: { data: Buffer; descriptor: Omit<Descriptor, 'digest' | 'size'> & { size?: number } }[], annotations?: Record<string, string>): Promise<PushedArtifact> {
    const configDigest = await this.pushBlob(repo, config.data);
    const descriptors: Descriptor[] = [];
    for (const l of layers) {
      const digest = await this.pushBlob(repo, l.data);
      const { mediaType, size, annotations: a } = l.descriptor;
      descriptors.push({ mediaType, size: size ?? l.data.length, digest, ...(a ? { annotations: a } : {}) });
    }
    const manifest: Manifest = {
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: config.mediaType, size: config.data.length, digest: configDigest },
      layers: descriptors,
      ...(annotations ? { annotations } : {}),
    };
    const manifestBytes = Buffer.from(JSON.stringify(manifest));
    const digest = await this.pushManifest(repo, tag, manifestBytes);
    const layer = layers[0]?.data ?? Buffer.alloc(0);
    return { repo, tag, digest, manifest, manifestBytes, config: config.data, layer, layerDigest: descriptors[0]?.digest ?? '' };
  }

  /** A Flux artifact of `files`, as `flux push artifact oci://…/<repo>:<tag> --path=<dir> --source --revision` pushes it. */
  async pushFluxArtifact(files: Record<string, string | Buffer>, opts: FluxArtifactOptions): Promise<PushedArtifact> {
    return this.pushFluxLayer(await fluxTarball(files), opts);
  }

  private async pushFluxLayer(layer: Buffer, opts: FluxArtifactOptions, mediaType = FLUX_CONTENT): Promise<PushedArtifact> {
    const annotations = {
      [ANNOTATION_CREATED]: opts.created ?? '2026-01-01T00:00:00Z',
      [ANNOTATION_REVISION]: opts.revision ?? `main@sha1:${'0'.repeat(40)}`,
      [ANNOTATION_SOURCE]: opts.source ?? `https://example.invalid/${opts.repo}.git`,
      ...opts.annotations,
    };
    const sorted = Object.fromEntries(Object.entries(annotations).sort(([a], [b]) => (a < b ? -1 : 1)));
    const config = Buffer.from(imageConfig(sha256(gunzipped(layer))));
    const size = opts.layerSize ? opts.layerSize(layer.length) : layer.length;
    return this.pushImage(opts.repo, opts.tag, { mediaType: FLUX_CONFIG, data: config }, [{ data: layer, descriptor: { mediaType, size } }], sorted);
  }

  /** One tarball layer: a Flux artifact around it (`flux`), else as `oras push <ref> layer.tar.gz:<mediaType>` makes it (empty config, the title annotation). */
  async pushTarballLayer(layer: Buffer, opts: TarballLayerOptions): Promise<PushedArtifact> {
    if (opts.flux) return this.pushFluxLayer(layer, opts, opts.mediaType ?? FLUX_CONTENT);
    const title = opts.title ?? 'layer.tar.gz';
    return this.pushImage(opts.repo, opts.tag, { mediaType: OCI_EMPTY, data: Buffer.from('{}') }, [
      { data: layer, descriptor: { mediaType: opts.mediaType ?? OCI_LAYER_TAR_GZIP, annotations: { [ANNOTATION_TITLE]: title } } },
    ], { [ANNOTATION_CREATED]: opts.created ?? '2026-01-01T00:00:00Z' });
  }

  /** cosign's signature of `digest`: one simple signing layer per key, pushed as `sha256-<hex>.sig`. */
  async cosignSign(digest: string, keys: KeyObject[], opts: CosignOptions & { dockerReference: string }): Promise<PushedArtifact> {
    const payload = cosignPayload(opts.dockerReference, opts.payloadDigest ?? digest);
    const layers = keys.map((key) => ({
      data: payload,
      descriptor: { mediaType: COSIGN_SIMPLE_SIGNING, annotations: { [COSIGN_SIGNATURE_ANNOTATION]: sign('sha256', payload, key).toString('base64') } },
    }));
    const config = Buffer.from(imageConfig(sha256(payload)));
    return this.pushImage(opts.repo, `${digest.replace(':', '-')}.sig`, { mediaType: OCI_CONFIG, data: config }, layers);
  }
}

/** go-containerregistry's config of an empty image with one layer appended (Flux's and cosign's config blob). */
function imageConfig(diffId: string): string {
  return `{"architecture":"","created":"0001-01-01T00:00:00Z","history":[{"created":"0001-01-01T00:00:00Z"}],"os":"","rootfs":{"type":"layers","diff_ids":["${diffId}"]},"config":{}}`;
}

/** The layer uncompressed (its diff_id), or, for a layer that is no gzip or a bomb, its bytes as they are. */
function gunzipped(layer: Buffer): Buffer {
  try {
    return gunzipSync(layer, { maxOutputLength: 256 * 1024 * 1024 });
  } catch {
    return layer;
  }
}
