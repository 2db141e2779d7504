// An HTTPS server on 127.0.0.1 with a certificate made for it (openssl), whose
// PEM serves as the CA a client must trust: for http sources over TLS, and for
// kubeconfigs that point at a server that is not a Kubernetes API server.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface TlsServer {
  /** `https://127.0.0.1:<port>` */
  base: string;
  /** The server's self-signed certificate: the CA to trust. */
  caPem: string;
  close(): Promise<void>;
}

/** A key and a self-signed certificate for 127.0.0.1 (openssl): the certificate is also the CA to trust. */
export function selfSignedCertificate(): { key: Buffer; caPem: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'syncprims-tls-'));
  try {
    const [keyFile, certFile] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=syncprims-test', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile,
    ], { stdio: 'pipe' });
    return { key: readFileSync(keyFile), caPem: readFileSync(certFile, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startTlsServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<TlsServer> {
  const { key, caPem } = selfSignedCertificate();
  const server = https.createServer({ key, cert: caPem }, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    caPem,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
