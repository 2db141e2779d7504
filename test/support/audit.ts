import { auditLogText } from './audit-files.js';
import { LOCAL } from './controlplane.js';

export interface AuditEvent {
  verb: string;
  userAgent?: string;
  requestURI: string;
  requestReceivedTimestamp: string;
  user: { username: string };
  /** Set when the request was made as someone else (impersonation). */
  impersonatedUser?: { username: string };
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
  return (await requestsSince(cluster, since, userAgentPrefix)).filter(
    (e) => WRITE_VERBS.has(e.verb) && e.objectRef?.resource !== 'leases' && !e.requestURI.includes('dryRun='),
  );
}

/** Every request in a cluster's audit log since `since` from clients whose User-Agent starts with `userAgentPrefix`. */
export async function requestsSince(cluster: string, since: Date, userAgentPrefix: string): Promise<AuditEvent[]> {
  const text = auditLogText(`${LOCAL}/${cluster}.audit.log`, since.getTime());
  return text
    .split('\n')
    .filter((l) => l !== '' && !olderThan(l, since))
    .map((l) => JSON.parse(l) as AuditEvent)
    .filter((e) => new Date(e.requestReceivedTimestamp) >= since && (e.userAgent ?? '').startsWith(userAgentPrefix));
}

const TIMESTAMP_FIELD = '"requestReceivedTimestamp":"';

/** Whether an audit line is older than `since`, without parsing it (a long-lived log is large). */
function olderThan(line: string, since: Date): boolean {
  const at = line.indexOf(TIMESTAMP_FIELD);
  if (at < 0) return false;
  const start = at + TIMESTAMP_FIELD.length;
  const received = new Date(line.slice(start, line.indexOf('"', start)));
  return received < since;
}

/** The instance id at the end of a request's User-Agent (`... instance/<id>`): which operator process sent it. */
export const instanceIn = (w: AuditEvent): string => /instance\/(\S+)$/.exec(w.userAgent ?? '')?.[1] ?? '?';

/** When the API server was done with a request (the audit event's stage is ResponseComplete). */
export const completedAt = (w: AuditEvent): number => Date.parse((w as AuditEvent & { stageTimestamp: string }).stageTimestamp);
