// kubectl decodes a kubeconfig into typed fields: a value YAML 1.1 reads as
// a boolean or a number where a string belongs (`namespace: no`, `user: 1`)
// makes it refuse the file. client-node's checks let such a value through or
// drop it, so the file would mean something else here than to kubectl: it is
// refused here too, naming the field (and the value, unless it is a credential:
// the message can reach a RemoteSync's status and Events).

const STRINGS = {
  clusters: { entry: 'cluster', fields: ['server', 'tls-server-name', 'certificate-authority', 'certificate-authority-data', 'proxy-url'] },
  users: {
    entry: 'user',
    fields: ['client-certificate', 'client-certificate-data', 'client-key', 'client-key-data', 'token', 'tokenFile', 'as', 'as-uid', 'username', 'password'],
  },
  contexts: { entry: 'context', fields: ['cluster', 'user', 'namespace'] },
} as const;

/** Fields whose value is never quoted in a message. */
const CREDENTIALS = new Set<string>(['token', 'password', 'client-key-data', 'client-certificate-data']);

/** The first field of `raw` (a parsed kubeconfig) that kubectl wants a string in and that holds another scalar. */
export function nonStringField(raw: Record<string, unknown>): string | undefined {
  const problem = (where: string, value: unknown, secret = false): string | undefined => {
    if (value === undefined || value === null || typeof value === 'string') return undefined;
    if (typeof value === 'boolean') {
      return `${where} is ${secret ? 'a boolean' : `the boolean ${value}`}, not a string (YAML reads an unquoted yes, no, on, off, y or n as a boolean; kubectl refuses it too): quote the value`;
    }
    if (typeof value === 'number') return `${where} is ${secret ? 'a number' : `the number ${value}`}, not a string (kubectl refuses it too): quote the value`;
    return `${where} must be a string`;
  };
  const found = problem('current-context', raw['current-context']);
  if (found) return found;
  for (const [list, { entry, fields }] of Object.entries(STRINGS)) {
    const items = raw[list];
    if (!Array.isArray(items)) continue;
    for (const [i, item] of items.entries()) {
      if (typeof item !== 'object' || item === null) continue;
      const named = problem(`${list}[${i}].name`, (item as Record<string, unknown>).name);
      if (named) return named;
      const body = (item as Record<string, unknown>)[entry];
      if (typeof body !== 'object' || body === null) continue;
      for (const field of fields) {
        const bad = problem(`${list}[${i}].${entry}.${field}`, (body as Record<string, unknown>)[field], CREDENTIALS.has(field));
        if (bad) return bad;
      }
    }
  }
  return undefined;
}
