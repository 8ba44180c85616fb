import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/global-setup.js';
import { startTestStack, type TestStack } from '../support/stack.js';

let platform: TestStack;
let trustPort: number;
beforeAll(async () => {
  trustPort = await freePort();
  platform = await startTestStack({ env: { TRUST_REST_PORT: String(trustPort), ARCHIVE_REST_PREFIX: '/aip' } });
});
afterAll(() => platform?.stop());

describe('base addresses', () => {
  it('serve a service on a port of its own and another under a configured prefix', async () => {
    expect(platform.base('trust')).toBe(`http://127.0.0.1:${trustPort}`);
    const health = await fetch(`http://127.0.0.1:${trustPort}/healthz`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { service: string }).service).toBe('trust');
    expect(platform.base('archive')).toMatch(/\/aip$/);
    expect((await platform.rest('archive', '/healthz')).body.service).toBe('archive');
    expect((await platform.rest('issuer', '/healthz')).body.service).toBe('issuer');
    const openapi = await fetch(`http://127.0.0.1:${trustPort}/docs/trust/openapi.json`);
    expect(((await openapi.json()) as { servers: { url: string }[] }).servers[0]!.url).toBe(`http://127.0.0.1:${trustPort}`);
  });
});

describe('request targets', () => {
  it('are read as paths, never as authority, and malformed ones are 400s', async () => {
    const { request } = await import('node:http');
    const raw = (target: string) =>
      new Promise<number>((resolve, reject) => {
        const url = new URL(platform.base('issuer'));
        const req = request({ host: url.hostname, port: url.port, path: target, method: 'GET' }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await raw('//issuer/healthz')).toBe(404);
    expect(await raw('/issuer/healthz?')).toBe(200);
    expect(await raw('/issuer/%zz')).toBe(400);
  });
});
