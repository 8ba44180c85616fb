/**
 * A partner's browser app on another origin calls the REST facade and the gateway, as Chromium
 * (Debian's, driven by playwright-core) does it: a JSON POST with a bearer token (a preflight first),
 * a read whose ETag and Location the page needs, a refusal it must be able to read, a GraphQL query
 * with credentials. The operator allows the partner's origin (CORS_ALLOWED_ORIGINS); the same page
 * served from an origin not listed is refused by the browser, and no CORS header tells it otherwise.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_TABLES } from '../../rest-facade/routes/index.js';
import { closeContexts, sharedBrowser } from '../support/browser.js';
import { startTestStack, TOKENS, type TestStack } from '../support/stack.js';

let platform: TestStack;
let browser: Browser;
/** The partner's app: one blank page, served on one port as two origins (127.0.0.1 is allowed, localhost is not). */
let partner: Server;
let allowedOrigin: string;
let otherOrigin: string;

beforeAll(async () => {
  partner = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>partner app</title>'));
  await new Promise<void>((listening) => partner.listen(0, '127.0.0.1', listening));
  const { port } = partner.address() as AddressInfo;
  allowedOrigin = `http://127.0.0.1:${port}`;
  otherOrigin = `http://localhost:${port}`;
  platform = await startTestStack({ env: { CORS_ALLOWED_ORIGINS: `https://app.example.com, ${allowedOrigin}` } });
  browser = await sharedBrowser();
}, 120_000);
afterAll(async () => {
  await closeContexts(browser);
  await platform?.stop();
  await new Promise((closed) => partner?.close(closed));
});

/** What the partner's page does, run in the page (so from its origin): each call's outcome as the page sees it. */
async function partnerCalls(origin: string, id: string) {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${origin}/app`);
  return page.evaluate(
    async ({ registry, graphql, token, id }) => {
      const call = async (url: string, init: RequestInit = {}) => {
        try {
          const response = await fetch(url, init);
          const body = await response.json();
          return { status: response.status, etag: response.headers.get('etag'), location: response.headers.get('location'), authenticate: response.headers.get('www-authenticate'), body };
        } catch (error) {
          return { failed: String(error) };
        }
      };
      const json = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const created = await call(`${registry}/`, { method: 'POST', headers: json, body: JSON.stringify({ kind: 'item', id, body: { label: 'from a partner' } }) });
      const read = await call(`${registry}/items/${id}`);
      const refused = await call(`${registry}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      const queried = await call(graphql, { method: 'POST', credentials: 'include', headers: json, body: JSON.stringify({ query: `{ registryRecord(kind: "item", id: "${id}") { id } }` }) });
      return { created, read, refused, queried };
    },
    { registry: platform.base('registry'), graphql: platform.stack.gateway.graphqlUrl, token: TOKENS.writer, id },
  );
}

/** An OPTIONS request as a browser's preflight sends it (or a plain one, without `origin`). */
function options(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    request(url, { method: 'OPTIONS', headers }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers }));
    })
      .on('error', reject)
      .end();
  });
}

const corsHeaders = (headers: Record<string, unknown>) => Object.keys(headers).filter((name) => name.startsWith('access-control-'));

describe('a page of an allowed origin', () => {
  it('creates, reads and queries through the facade and the gateway, and reads their headers and refusals', async () => {
    const { created, read, refused, queried } = await partnerCalls(allowedOrigin, 'partner-item');
    expect(created).toMatchObject({ status: 201, location: `${platform.base('registry')}/items/partner-item`, body: { id: 'partner-item' } });
    expect(read).toMatchObject({ status: 200, body: { id: 'partner-item' } });
    expect(read.etag).toMatch(/^"/);
    expect(refused).toMatchObject({ status: 401, body: { code: 'MISSING_TOKEN' } });
    expect(refused.authenticate).toMatch(/^Bearer/);
    expect(queried).toMatchObject({ status: 200, body: { data: { registryRecord: { id: 'partner-item' } } } });
  });

  it("is answered a facade path's preflight with exactly that path's methods, and the gateway's with GET and POST", async () => {
    const preflight = { origin: allowedOrigin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' };
    const registryRoot = ROUTE_TABLES.registry.routes.filter((route) => route.path === '/').map((route) => route.method);
    const facade = await options(`${platform.base('registry')}/`, preflight);
    expect(facade.status).toBe(204);
    expect(facade.headers).toMatchObject({ 'access-control-allow-origin': allowedOrigin, 'access-control-allow-credentials': 'true', vary: expect.stringMatching(/origin/i) });
    expect(String(facade.headers['access-control-allow-methods']).split(', ').sort()).toEqual([...registryRoot, ...(registryRoot.includes('GET') ? ['HEAD'] : [])].sort());
    expect(String(facade.headers['access-control-allow-headers']).split(', ')).toEqual(expect.arrayContaining(['authorization', 'content-type']));
    const gateway = await options(platform.stack.gateway.graphqlUrl, preflight);
    expect([gateway.status, gateway.headers['access-control-allow-origin'], gateway.headers['access-control-allow-methods']]).toEqual([204, allowedOrigin, 'GET, POST']);
  });
});

describe('a page of an origin not allowed', () => {
  it('is refused by the browser at the facade and the gateway, and its POST never reaches the facade', async () => {
    const outcome = await partnerCalls(otherOrigin, 'stranger-item');
    for (const call of Object.values(outcome)) expect(call).toEqual({ failed: expect.stringContaining('Failed to fetch') });
    expect((await platform.rest('registry', '/items/stranger-item')).status).toBe(404);
  });

  it('gets no CORS header on a preflight, while a plain OPTIONS names the methods in Allow', async () => {
    const preflight = { origin: otherOrigin, 'access-control-request-method': 'POST' };
    for (const url of [`${platform.base('registry')}/`, platform.stack.gateway.graphqlUrl]) {
      const refused = await options(url, preflight);
      expect({ url, status: refused.status, cors: corsHeaders(refused.headers) }).toEqual({ url, status: 204, cors: [] });
    }
    const plain = await options(platform.stack.gateway.graphqlUrl, {});
    expect([plain.status, plain.headers.allow, corsHeaders(plain.headers)]).toEqual([204, 'GET, POST', []]);
  });
});
