// Who the web view answers (docs/ui.md, Security). Bound to loopback, it
// answers only a Host that is a loopback name or address literal: a page of
// another site that rebinds its own name to 127.0.0.1 (DNS rebinding) sends
// its own name as Host, and is refused. Its event stream also refuses an
// Origin other than the page's own, whatever the Host.
import { BlockList, isIPv4, isIPv6 } from 'node:net';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** `localhost`, or an address literal in 127.0.0.0/8 or ::1 (a name such as `127.evil.example` is not one). */
export function isLoopbackHost(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  if (isIPv4(host)) return LOOPBACK.check(host, 'ipv4');
  return isIPv6(host) && LOOPBACK.check(host, 'ipv6');
}

/**
 * A Host header (`name`, `name:port`, `[v6]` or `[v6]:port`) split into host
 * and port; undefined when it is not of that form. The port is kept as
 * written (any port: `kubectl port-forward 9000:8082` sends the local one).
 */
export function splitHostHeader(header: string): { host: string; port?: string; bracketed: boolean } | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]/@\s]+))(?::(\d{1,5}))?$/.exec(header);
  if (!m) return undefined;
  if (m[3] !== undefined && (Number(m[3]) < 1 || Number(m[3]) > 65535)) return undefined;
  return { host: m[1] ?? m[2]!, ...(m[3] !== undefined && { port: m[3] }), bracketed: m[1] !== undefined };
}

/** Whether a request with this Host header is answered by a view bound to loopback. */
export function loopbackHostAllowed(header: string | undefined): boolean {
  const parts = header === undefined ? undefined : splitHostHeader(header);
  if (!parts) return false;
  // An IPv6 literal only in brackets, as in a URL; a bare name or IPv4 literal never in them.
  if (parts.bracketed !== isIPv6(parts.host)) return false;
  return isLoopbackHost(parts.host);
}

/**
 * Whether an event-stream request may be answered: without an Origin header
 * (not sent by a browser to its own origin), or with the page's own origin:
 * `http(s)://` and exactly the Host the request was sent to.
 */
export function streamOriginAllowed(origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined) return true;
  if (host === undefined) return false;
  const own = host.toLowerCase();
  const o = origin.toLowerCase();
  return o === `http://${own}` || o === `https://${own}`;
}
