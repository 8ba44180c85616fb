/**
 * A client (or a scanner) sends a Host header that names no host: with a space, a port past 65535,
 * an unclosed IPv6 bracket, a lone `%`, or nothing. HTTP/1.1 has it refused (RFC 9112 §3.2), and the
 * gateway and the subgraphs make Apollo's request URL from it, so every server answers such a
 * request 400 MALFORMED_HOST as problem+json before any route sees it: never a 500 of its own
 * (`ERR_INVALID_URL`), which would also count against the servers' error ratio. A well-formed Host,
 * an IPv6 literal among them, is served, and changes nothing the platform writes: every absolute
 * URL names where the service is served (lib/config/public-urls.ts; test/first-contact/host-names.test.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { rawGet } from '../support/raw-http.js';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';

const MALFORMED = ['a b', 'x:99999', '[::1', '%', '', 'x/y', 'user@x'];

let platform: SharedTestStack;
beforeAll(async () => {
  platform = await sharedTestStack();
});

/** What each server answers, by what it is: a refusal it writes itself, a route, a resolver, a page. */
function targets(): Record<string, string> {
  const issuer = platform.base('issuer');
  const facade = new URL(issuer).origin;
  return {
    'the facade: a service discovery document': `${issuer}/`,
    'the facade: 401, a route that needs a token': `${issuer}/admin/log`,
    'the facade: 404 in a service': `${issuer}/no-such-path`,
    'the facade: 404 outside every service': `${facade}/no-such-service`,
    'the facade: 405': `${issuer}/passports`,
    'the facade: the Digital Link resolver': `${issuer}/01/09520123456788/21/SN-1`,
    'the facade: an OpenAPI document': `${facade}/docs/issuer/openapi.json`,
    'the facade: the verification page': `${facade}/verify/`,
    'the gateway: a query over GET': `${platform.stack.gateway.graphqlUrl}?query=%7B__typename%7D`,
    'the gateway: GraphiQL': platform.stack.gateway.graphiqlUrl,
    'a subgraph: a query over GET': `${platform.stack.subgraphUrls.trust}graphql?query=%7B__typename%7D`,
  };
}

describe('a malformed Host header', () => {
  for (const host of MALFORMED) {
    it(`${JSON.stringify(host)} is refused 400 MALFORMED_HOST as problem+json by every server`, async () => {
      for (const [what, url] of Object.entries(targets())) {
        const answer = await rawGet(url, { host });
        expect([answer.status, answer.headers['content-type']], `${what}: ${answer.body}`).toEqual([400, 'application/problem+json']);
        expect(JSON.parse(answer.body), what).toMatchObject({ status: 400, code: 'MALFORMED_HOST', title: 'Bad Request', type: '/docs/problems#malformed-host' });
      }
    });
  }
});

describe('a well-formed Host header', () => {
  it('is served, an IPv6 literal with a port too, and changes nothing written: what is written names where the service is served', async () => {
    const issuer = platform.base('issuer');
    for (const host of ['[::1]:8443', 'dpp.example.com', 'DPP.Example.com:80']) {
      const discovery = await rawGet(`${issuer}/`, { host });
      expect(discovery.status, discovery.body).toBe(200);
      expect(JSON.parse(discovery.body).base_url).toBe(issuer);
      const missing = await rawGet(`${issuer}/no-such-path`, { host });
      expect([missing.status, JSON.parse(missing.body).type]).toEqual([404, `${new URL(issuer).origin}/docs/problems#not-found`]);
    }
  });
});
