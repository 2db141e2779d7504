// The debug endpoints' listener (src/runtime/http-endpoints.ts): loopback
// unless its address names another host; the default names loopback.
import { afterEach, describe, expect, test } from '@jest/globals';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { boundAddress, closeServer, DEFAULT_DEBUG_ADDR, loopbackByDefault, serveDebug } from '../../src/runtime/http-endpoints.js';

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(closeServer));
});

describe('serveDebug', () => {
  test.each([':0', '0', '127.0.0.1:0'])('%s listens on 127.0.0.1 only, and serves its routes', async (addr) => {
    const { server, port } = await serveDebug(addr, { '/debug/x': async () => ({ ok: true }) });
    servers.push(server);
    expect((server.address() as AddressInfo).address).toBe('127.0.0.1');
    expect(boundAddress(server)).toBe(`127.0.0.1:${port}`);
    const res = await fetch(`http://127.0.0.1:${port}/debug/x`);
    expect(await res.json()).toEqual({ ok: true });
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(404);
  });

  test('the default address is loopback; a named host is taken as given', () => {
    expect(loopbackByDefault(DEFAULT_DEBUG_ADDR)).toEqual({ host: '127.0.0.1', port: 8083 });
    expect(loopbackByDefault(':8083')).toEqual({ host: '127.0.0.1', port: 8083 });
    expect(loopbackByDefault('0.0.0.0:8083')).toEqual({ host: '0.0.0.0', port: 8083 });
  });
});
