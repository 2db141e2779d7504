import { readFile } from 'node:fs/promises';
import { LOCAL } from './controlplane.js';

export interface AuditEvent {
  verb: string;
  userAgent?: string;
  requestURI: string;
  requestReceivedTimestamp: string;
  user: { username: string };
  objectRef?: { resource?: string; namespace?: string; name?: string; subresource?: string };
  responseStatus?: { code?: number };
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/**
 * Write requests in a cluster's audit log since `since`, from clients whose
 * User-Agent starts with `userAgentPrefix`: what API.md calls "writes"
 * (dry runs and Lease renewals are not).
 */
export async function writesSince(cluster: string, since: Date, userAgentPrefix: string): Promise<AuditEvent[]> {
  const text = await readFile(`${LOCAL}/${cluster}.audit.log`, 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent)
    .filter(
      (e) =>
        WRITE_VERBS.has(e.verb) &&
        new Date(e.requestReceivedTimestamp) >= since &&
        (e.userAgent ?? '').startsWith(userAgentPrefix) &&
        e.objectRef?.resource !== 'leases' &&
        !e.requestURI.includes('dryRun='),
    );
}
