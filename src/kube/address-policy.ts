// Where outbound connections may go: the addresses of `--source-deny-cidrs`
// (http sources, and the servers of kubeconfigs read from Secrets) are never
// connected to. The check is on the address connected to: a hostname is
// resolved once, by the socket's own `lookup`, which hands the socket only
// addresses it allowed (no second lookup between check and connect); an IP
// literal, which Node connects to without a lookup, is checked as it is. An
// unspecified address (0.0.0.0, ::, ::ffff:0.0.0.0; a URL's `0` or `0x0` is
// 0.0.0.0) is checked as what a connection to it reaches: this host, as
// loopback (Linux connects 0.0.0.0 to 127.0.0.1 and :: to ::1; a listener on
// [::] answers both), so denying 127.0.0.0/8 or ::1 denies them too.
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
  /** The loopback address an unspecified `address` was checked as (what a connection to it reaches). */
  via?: string;
}

/** The addresses a connection to an unspecified address reaches: this host's loopback, in both families. */
const THIS_HOST: readonly [string, 'ipv4' | 'ipv6'][] = [
  ['127.0.0.1', 'ipv4'],
  ['::1', 'ipv6'],
];

/** 0.0.0.0 and :: (also as ::ffff:0.0.0.0), which connect to this host. */
const UNSPECIFIED = new net.BlockList();
UNSPECIFIED.addAddress('0.0.0.0', 'ipv4');
UNSPECIFIED.addAddress('::', 'ipv6');

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

  /**
   * The CIDR that denies `address` (an IPv4-mapped IPv6 address counts as its
   * IPv4 one; an unspecified one as this host's loopback, which it reaches); undefined when allowed.
   */
  deniedBy(address: string): string | undefined {
    return this.denial(address)?.cidr;
  }

  /** Throws AddressDeniedError when `host` (a URL's hostname) is an IP literal the policy denies; names are left to `lookup`. */
  checkHost(host: string): void {
    const denial = this.denial(host);
    if (denial) throw refusal(host, [denial]);
  }

  /** Why `address` is denied, if it is: the CIDR, and the loopback address it was checked as when it is unspecified. */
  private denial(address: string): Denial | undefined {
    const ip = unbracketed(address).replace(/%.*$/, '');
    const family = net.isIP(ip);
    if (family === 0) return undefined;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    const own = this.#rules.find((r) => r.list.check(ip, type))?.cidr;
    if (own !== undefined) return { address: ip, cidr: own };
    if (!UNSPECIFIED.check(ip, type)) return undefined;
    for (const [via, viaType] of THIS_HOST) {
      const cidr = this.#rules.find((r) => r.list.check(via, viaType))?.cidr;
      if (cidr !== undefined) return { address: ip, cidr, via };
    }
    return undefined;
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
        const denial = this.denial(address);
        if (denial) denials.push({ ...denial, address });
        return denial === undefined;
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
  const literal = denials.length === 1 && denials[0]!.address === unbracketed(host).replace(/%.*$/, '');
  const reach = (d: Denial): string => (d.via ? `, an unspecified address, which connects to this host (${d.via}, in ${d.cidr})` : ` (in ${d.cidr})`);
  const where = literal
    ? denials[0]!.via
      ? `the address is unspecified, so a connection to it reaches this host (${denials[0]!.via}), which is in ${denials[0]!.cidr}`
      : `the address is in ${denials[0]!.cidr}`
    : `it resolves to ${denials.map((d) => `${d.address}${reach(d)}`).join(' and ')}`;
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
