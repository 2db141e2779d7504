// Who the web view answers while bound to loopback (src/ui/host-check.ts):
// a loopback name or address literal as Host, never a name that merely
// starts like one (DNS rebinding); and its stream only from its own origin.
// The non-loopback addresses here are Host header values, only parsed: no connection is made.
import { describe, expect, test } from '@jest/globals';
import { isLoopbackHost, loopbackHostAllowed, splitHostHeader, streamOriginAllowed } from '../../src/ui/host-check.js';

describe('the Host a loopback view answers', () => {
  test.each(['localhost:8082', 'LOCALHOST:8082', '127.0.0.1:8082', '127.1.2.3:9000', '[::1]:8082', '[0:0:0:0:0:0:0:1]:8082', 'localhost', '127.0.0.1'])('%s is answered', (host) => {
    expect(loopbackHostAllowed(host)).toBe(true);
  });

  test.each([
    ['a name that starts like an address', '127.evil.example:8082'],
    ['a name under 127', '127.0.0.1.evil.example:8082'],
    ['another site', 'evil.example:8082'],
    ['a subdomain of localhost', 'localhost.evil.example:8082'],
    ['localhost with a trailing dot', 'localhost.:8082'],
    ['an address outside loopback', '10.0.0.1:8082'],
    ['the unspecified address', '0.0.0.0:8082'],
    ['IPv6 not in brackets', '::1'],
    ['IPv4 in brackets', '[127.0.0.1]:8082'],
    ['another IPv6 address', '[::2]:8082'],
    ['user info', 'evil@127.0.0.1:8082'],
    ['a bad port', '127.0.0.1:99999'],
    ['port zero', '127.0.0.1:0'],
    ['an empty port', '127.0.0.1:'],
    ['empty', ''],
  ])('%s (%s) is refused', (_what, host) => {
    expect(loopbackHostAllowed(host)).toBe(false);
  });

  test('no Host at all is refused', () => {
    expect(loopbackHostAllowed(undefined)).toBe(false);
  });

  test('the listen address decides whether the check applies: loopback names and literals only', () => {
    expect(['127.0.0.1', '127.0.0.2', 'localhost', '::1'].map(isLoopbackHost)).toEqual([true, true, true, true]);
    expect(['0.0.0.0', '::', '127.evil.example', '10.1.2.3'].map(isLoopbackHost)).toEqual([false, false, false, false]);
  });

  test('a Host header is split into host and port as written', () => {
    expect(splitHostHeader('[::1]:8082')).toEqual({ host: '::1', port: '8082', bracketed: true });
    expect(splitHostHeader('localhost')).toEqual({ host: 'localhost', bracketed: false });
    expect(splitHostHeader('a b:1')).toBeUndefined();
  });
});

describe('the Origin the event stream answers', () => {
  test('none (a browser on its own origin sends none), or exactly the page’s own origin', () => {
    expect(streamOriginAllowed(undefined, '127.0.0.1:8082')).toBe(true);
    expect(streamOriginAllowed('http://127.0.0.1:8082', '127.0.0.1:8082')).toBe(true);
    expect(streamOriginAllowed('https://view.example.com', 'view.example.com')).toBe(true);
  });

  test.each([
    ['another site', 'http://evil.example', '127.0.0.1:8082'],
    ['another port', 'http://127.0.0.1:9999', '127.0.0.1:8082'],
    ['another loopback name', 'http://localhost:8082', '127.0.0.1:8082'],
    ['an opaque origin', 'null', '127.0.0.1:8082'],
    ['a prefix of the host', 'http://127.0.0.1:8082.evil.example', '127.0.0.1:8082'],
    ['no Host to compare with', 'http://127.0.0.1:8082', undefined],
  ])('%s is refused', (_what, origin, host) => {
    expect(streamOriginAllowed(origin, host)).toBe(false);
  });
});
