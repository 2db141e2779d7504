// The address policy of outbound connections (--source-deny-cidrs): which
// addresses a CIDR list denies, its parsing, and the socket lookup that hands
// a connection only allowed addresses (resolving loopback names only).
// Addresses outside loopback here (169.254.x, 10.x) are strings that are only
// parsed and matched: nothing in this file opens a connection.
import { describe, expect, test } from '@jest/globals';
import type { LookupAddress } from 'node:dns';
import { AddressDeniedError, AddressPolicy, DEFAULT_DENY_CIDRS, type Resolver } from '../../src/kube/address-policy.js';

describe('AddressPolicy.deniedBy', () => {
  const policy = new AddressPolicy(DEFAULT_DENY_CIDRS);

  test.each([
    ['169.254.169.254', '169.254.0.0/16'],
    ['169.254.0.1', '169.254.0.0/16'],
    ['::ffff:169.254.1.1', '169.254.0.0/16'],
    ['::ffff:a9fe:101', '169.254.0.0/16'],
    ['[::ffff:169.254.1.1]', '169.254.0.0/16'],
    ['fe80::1', 'fe80::/10'],
    ['FEBF::1', 'fe80::/10'],
    ['[fe80::1]', 'fe80::/10'],
    ['fe80::1%eth0', 'fe80::/10'],
    ['fd00:ec2::254', 'fd00:ec2::254/128'],
  ])('the default list denies %s (%s)', (address, cidr) => {
    expect(policy.deniedBy(address)).toBe(cidr);
  });

  test.each(['169.255.0.1', '169.253.255.255', '127.0.0.1', '::1', 'fec0::1', 'fd00:ec2::253', '::ffff:127.0.0.1', 'example.com', ''])(
    'the default list allows %s',
    (address) => {
      expect(policy.deniedBy(address)).toBeUndefined();
    },
  );

  test('prefixes bound the match on either side; the first matching CIDR is named', () => {
    const p = AddressPolicy.parse(' 127.0.0.2/32 , 10.0.0.0/8,::1/128,10.1.0.0/16');
    expect(p.cidrs).toEqual(['127.0.0.2/32', '10.0.0.0/8', '::1/128', '10.1.0.0/16']);
    expect(p.deniedBy('127.0.0.2')).toBe('127.0.0.2/32');
    expect(p.deniedBy('127.0.0.3')).toBeUndefined();
    expect(p.deniedBy('10.1.2.3')).toBe('10.0.0.0/8');
    expect(p.deniedBy('11.0.0.0')).toBeUndefined();
    expect(p.deniedBy('::1')).toBe('::1/128');
    expect(p.deniedBy('::2')).toBeUndefined();
    expect(p.deniedBy('::ffff:127.0.0.2')).toBe('127.0.0.2/32');
  });

  test('an empty list denies nothing', () => {
    expect(AddressPolicy.parse('').deniedBy('169.254.169.254')).toBeUndefined();
  });
});

describe('unspecified addresses, checked as what they reach (this host)', () => {
  // 0.0.0.0 and :: are only parsed and matched here: a connection to either would reach loopback.
  const urlHost = (url: string): string => new URL(url).hostname;

  test.each([
    ['0.0.0.0', '127.0.0.0/8'],
    [urlHost('https://0:6443/'), '127.0.0.0/8'],
    [urlHost('https://0x0:6443/'), '127.0.0.0/8'],
    [urlHost('https://0.0:6443/'), '127.0.0.0/8'],
    ['::', '127.0.0.0/8'],
    [urlHost('https://[::]:6443/'), '127.0.0.0/8'],
    [urlHost('https://[0:0:0:0:0:0:0:0]/'), '127.0.0.0/8'],
    [urlHost('https://[::ffff:0.0.0.0]/'), '127.0.0.0/8'],
  ])('%s is denied when loopback is (%s)', (address, cidr) => {
    expect(AddressPolicy.parse('127.0.0.0/8').deniedBy(address)).toBe(cidr);
  });

  test('either loopback denied denies both unspecified addresses; other addresses of 0.0.0.0/8 are only themselves', () => {
    const v6 = AddressPolicy.parse('::1/128');
    expect(v6.deniedBy('0.0.0.0')).toBe('::1/128');
    expect(v6.deniedBy('::')).toBe('::1/128');
    expect(AddressPolicy.parse('127.0.0.0/8').deniedBy('0.0.0.1')).toBeUndefined();
    expect(AddressPolicy.parse('0.0.0.0/8').deniedBy('0.0.0.1')).toBe('0.0.0.0/8');
    // Their own CIDR comes first.
    expect(AddressPolicy.parse('0.0.0.0/32,127.0.0.0/8').deniedBy('0.0.0.0')).toBe('0.0.0.0/32');
    // The default list denies no loopback: nor these.
    expect(new AddressPolicy(DEFAULT_DENY_CIDRS).deniedBy('0.0.0.0')).toBeUndefined();
    expect(new AddressPolicy(DEFAULT_DENY_CIDRS).deniedBy('::')).toBeUndefined();
  });

  test('the refusal says what the address reaches', () => {
    const policy = AddressPolicy.parse('127.0.0.0/8,::1/128');
    expect(() => policy.checkHost(urlHost('https://0x0/'))).toThrow(
      new AddressDeniedError(
        'connection to 0.0.0.0 refused: the address is unspecified, so a connection to it reaches this host (127.0.0.1), which is in 127.0.0.0/8, which --source-deny-cidrs denies; nothing was sent',
      ),
    );
    expect(() => policy.checkHost('[::]')).toThrow('connection to [::] refused: the address is unspecified, so a connection to it reaches this host (127.0.0.1)');
  });

  test('a name that resolves to an unspecified address is refused by lookup too', async () => {
    const zero: Resolver = (_hostname, _options, callback) => callback(null, [{ address: '0.0.0.0', family: 4 }, { address: '::', family: 6 }]);
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => AddressPolicy.parse('127.0.0.0/8', zero).lookup('zero.test', { all: true }, (e) => resolve(e)));
    expect(err).toBeInstanceOf(AddressDeniedError);
    expect(err?.message).toBe(
      'connection to zero.test refused: it resolves to 0.0.0.0, an unspecified address, which connects to this host (127.0.0.1, in 127.0.0.0/8) and ::, an unspecified address, which connects to this host (127.0.0.1, in 127.0.0.0/8), which --source-deny-cidrs denies; nothing was sent',
    );
  });
});

describe('AddressPolicy.parse', () => {
  test.each(['169.254.0.0', '169.254.0.0/33', 'fe80::/129', 'example.com/8', '1.2.3/8', '10.0.0.0/-1', '10.0.0.0/8/8', '10.0.0.0/x'])(
    'refuses %s, naming it and the flag',
    (entry) => {
      expect(() => AddressPolicy.parse(`127.0.0.2/32,${entry}`)).toThrow(
        `--source-deny-cidrs: ${JSON.stringify(entry)} is not a CIDR: want address/prefix, as 169.254.0.0/16 or fe80::/10`,
      );
    },
  );
});

describe('AddressPolicy.checkHost', () => {
  const policy = AddressPolicy.parse('127.0.0.2/32,::1/128');

  test('an IP literal in a denied CIDR is refused, naming the address, the CIDR and the flag', () => {
    expect(() => policy.checkHost('127.0.0.2')).toThrow(
      new AddressDeniedError('connection to 127.0.0.2 refused: the address is in 127.0.0.2/32, which --source-deny-cidrs denies; nothing was sent'),
    );
    expect(() => policy.checkHost('[::1]')).toThrow('connection to [::1] refused: the address is in ::1/128, which --source-deny-cidrs denies');
  });

  test('allowed literals and names pass (names are checked by lookup)', () => {
    expect(() => policy.checkHost('127.0.0.1')).not.toThrow();
    expect(() => policy.checkHost('localhost')).not.toThrow();
  });
});

describe('AddressPolicy.lookup', () => {
  type Result = { err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number };
  const lookup = (policy: AddressPolicy, host: string, all: boolean): Promise<Result> =>
    new Promise((resolve) => policy.lookup(host, { all }, (err, address, family) => resolve({ err, address, family })));
  /** A resolver that knows one name, `two.test`, with two loopback addresses; counts its calls. */
  const calls: string[] = [];
  const resolver: Resolver = (hostname, _options, callback) => {
    calls.push(hostname);
    if (hostname !== 'two.test') return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    callback(null, [{ address: '127.0.0.2', family: 4 }, { address: '::1', family: 6 }]);
  };

  test('a name whose addresses are all denied fails, naming each address and its CIDR, after one resolution', async () => {
    const policy = AddressPolicy.parse('127.0.0.2/32,::1/128', resolver);
    calls.length = 0;
    for (const all of [false, true]) {
      const { err } = await lookup(policy, 'two.test', all);
      expect(err).toBeInstanceOf(AddressDeniedError);
      expect(err?.message).toBe(
        'connection to two.test refused: it resolves to 127.0.0.2 (in 127.0.0.2/32) and ::1 (in ::1/128), which --source-deny-cidrs denies; nothing was sent',
      );
    }
    expect(calls).toEqual(['two.test', 'two.test']);
  });

  test('the socket gets only the allowed addresses, in both of its forms', async () => {
    const policy = AddressPolicy.parse('127.0.0.2/32', resolver);
    expect(await lookup(policy, 'two.test', true)).toEqual({ err: null, address: [{ address: '::1', family: 6 }], family: undefined });
    expect(await lookup(policy, 'two.test', false)).toEqual({ err: null, address: '::1', family: 6 });
    const none = AddressPolicy.parse('', resolver);
    expect((await lookup(none, 'two.test', true)).address).toHaveLength(2);
  });

  test("the resolver's own failure is passed on as it is", async () => {
    const { err } = await lookup(AddressPolicy.parse('127.0.0.2/32', resolver), 'nowhere.test', false);
    expect(err?.code).toBe('ENOTFOUND');
  });

  test('by default names are resolved by the system (localhost: loopback)', async () => {
    const { err } = await lookup(AddressPolicy.parse('127.0.0.0/8,::1/128'), 'localhost', false);
    expect(err).toBeInstanceOf(AddressDeniedError);
    expect(await lookup(AddressPolicy.parse('::1/128'), 'localhost', false)).toEqual({ err: null, address: '127.0.0.1', family: 4 });
  });
});
