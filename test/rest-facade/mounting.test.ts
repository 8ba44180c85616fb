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
