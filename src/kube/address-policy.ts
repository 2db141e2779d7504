// Where outbound connections may go: the addresses of `--source-deny-cidrs`
// (http sources, and the servers of kubeconfigs read from Secrets) are never
// connected to. The check is on the address connected to: a hostname is
// resolved once, by the socket's own `lookup`, which hands the socket only
// addresses it allowed (no second lookup between check and connect); an IP
// literal, which Node connects to without a lookup, is checked as it is.
import dns from 'node:dns';
import net from 'node:net';

/** What `--source-deny-cidrs` denies unless told otherwise: link-local (cloud metadata services) and AWS's IPv6 metadata address. */
export const DEFAULT_DENY_CIDRS: readonly string[] = Object.freeze(['169.254.0.0/16', 'fe80::/10', 'fd00:ec2::254/128']);

/** The flag that sets the policy: a refusal names it. */
export const DENY_CIDRS_FLAG = '--source-deny-cidrs';

/** A connection refused by the policy before anything was sent. */
export class AddressDeniedError extends Error {
  readonly code = 'EADDRDENIED';
  constructor(message: string) {
    super(message);
    this.name = 'AddressDeniedError';
  }
}

/** dns.lookup as the policy calls it: every address of a name. */
export type Resolver = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

interface Rule {
  cidr: string;
  list: net.BlockList;
}

/** An address and the CIDR of the policy that denies it. */
interface Denial {
  address: string;
  cidr: string;
}

export class AddressPolicy {
  // Private (#): a policy logged or serialized shows its CIDRs only.
  readonly #rules: Rule[];
  readonly #resolve: Resolver;

  /**
   * `cidrs` as `address/prefix` (IPv4 or IPv6); throws, naming the entry, on
   * one that is not. `resolve` finds a name's addresses (dns.lookup; tests give their own).
   */
  constructor(
    readonly cidrs: readonly string[],
    resolve: Resolver = dns.lookup,
  ) {
    this.#rules = cidrs.map((cidr) => ({ cidr, list: blockListOf(cidr) }));
    this.#resolve = resolve;
  }

  /** A comma-separated list (`--source-deny-cidrs`); empty denies nothing. */
  static parse(text: string, resolve?: Resolver): AddressPolicy {
    const cidrs = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
    return new AddressPolicy(cidrs, resolve);
  }

  /** The CIDR that denies `address` (an IPv4-mapped IPv6 address counts as its IPv4 one); undefined when allowed. */
  deniedBy(address: string): string | undefined {
    const ip = unbracketed(address).replace(/%.*$/, '');
    const family = net.isIP(ip);
    if (family === 0) return undefined;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    return this.#rules.find((r) => r.list.check(ip, type))?.cidr;
  }

  /** Throws AddressDeniedError when `host` (a URL's hostname) is an IP literal the policy denies; names are left to `lookup`. */
  checkHost(host: string): void {
    const cidr = this.deniedBy(host);
    if (cidr !== undefined) throw refusal(host, [{ address: unbracketed(host), cidr }]);
  }

  /**
   * A socket's `lookup` (net.connect, http.Agent, tls.connect): resolves
   * `hostname` once and gives the socket only the addresses the policy
   * allows; when it allows none, fails with AddressDeniedError and the socket
   * connects nowhere.
   */
  readonly lookup: net.LookupFunction = (hostname, options, callback) => {
    this.#resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err || addresses.length === 0) return callback(err ?? Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
      const denials: Denial[] = [];
      const allowed = addresses.filter(({ address }) => {
        const cidr = this.deniedBy(address);
        if (cidr !== undefined) denials.push({ address, cidr });
        return cidr === undefined;
      });
      const first = allowed[0];
      if (!first) return callback(refusal(hostname, denials), '');
      if (options.all) callback(null, allowed);
      else callback(null, first.address, first.family);
    });
  };
}

/** A URL's hostname gives an IPv6 address in brackets. */
function unbracketed(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1');
}

function blockListOf(cidr: string): net.BlockList {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(cidr);
  const family = m ? net.isIP(m[1]!) : 0;
  const prefix = Number(m?.[2]);
  if (!m || family === 0 || prefix > (family === 4 ? 32 : 128)) {
    throw new Error(`${DENY_CIDRS_FLAG}: ${JSON.stringify(cidr)} is not a CIDR: want address/prefix, as 169.254.0.0/16 or fe80::/10`);
  }
  const list = new net.BlockList();
  list.addSubnet(m[1]!, prefix, family === 4 ? 'ipv4' : 'ipv6');
  return list;
}

function refusal(host: string, denials: Denial[]): AddressDeniedError {
  const literal = denials.length === 1 && denials[0]!.address === unbracketed(host);
  const where = literal
    ? `the address is in ${denials[0]!.cidr}`
    : `it resolves to ${denials.map((d) => `${d.address} (in ${d.cidr})`).join(' and ')}`;
  return new AddressDeniedError(`connection to ${host} refused: ${where}, which ${DENY_CIDRS_FLAG} denies; nothing was sent`);
}

let processPolicy = new AddressPolicy(DEFAULT_DENY_CIDRS);

/** The policy of this process (`--source-deny-cidrs`; the default unless set). */
export function outboundAddressPolicy(): AddressPolicy {
  return processPolicy;
}

/** Sets the policy of this process (syncprims run, build and diff, from their flag). */
export function setOutboundAddressPolicy(policy: AddressPolicy): void {
  processPolicy = policy;
}
