/**
 * Authentication comes before anything else (DESIGN: size limits, then authentication and role,
 * then parsing and validation): every route of every route table that needs a role refuses a caller
 * without a valid token (401, with the Bearer challenge of RFC 6750) or of the wrong role (403)
 * whatever it sent, and the refusal is the same words on every route, so the caller learns nothing
 * about the operation's body, parameters or fields. Refused admin requests still reach the admin log.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { refusalReportKey, signRefusalReport } from '../../lib/audit/refusal-report.js';
import { AccessTokens, hashToken } from '../../lib/auth/tokens.js';
import type { ServiceName } from '../../lib/config/services.js';
import { ROUTE_TABLES } from '../../rest-facade/routes/index.js';
import type { Route } from '../../rest-facade/route-table.js';
import { sharedTestStack, testAccessTokens, TOKENS, type SharedTestStack } from '../support/stack.js';

let platform: SharedTestStack;
beforeAll(async () => {
  platform = await sharedTestStack();
});

const guarded = Object.values(ROUTE_TABLES).flatMap((table) => table.routes.filter((route) => route.role).map((route) => ({ service: table.service, route })));

/** What a caller sends that the route would refuse as malformed, had it the right to ask. */
const MISTAKES = [
  { name: 'a malformed body', query: '', contentType: 'application/json', body: '{"model_id": ' },
  { name: 'an unknown query parameter', query: '?access_token=x&colour=red', contentType: undefined, body: undefined },
  { name: 'a body of the wrong content type', query: '', contentType: 'text/plain', body: 'model_id=x' },
] as const;

const CALLERS = [
  {
    name: 'no token',
    authorization: undefined,
    status: 401,
    code: 'MISSING_TOKEN',
    detail: 'This operation needs a bearer token.',
    challenge: 'Bearer realm="passport"',
  },
  {
    name: 'a token the platform does not know',
    authorization: 'Bearer not-a-token-of-this-platform',
    status: 401,
    code: 'INVALID_TOKEN',
    detail: 'The bearer token is not valid.',
    challenge: 'Bearer realm="passport", error="invalid_token"',
  },
  {
    name: 'a malformed Authorization header',
    authorization: 'Basic dXNlcjpwYXNz',
    status: 401,
    code: 'INVALID_TOKEN',
    detail: 'The bearer token is not valid.',
    challenge: 'Bearer realm="passport", error="invalid_token"',
  },
  {
    name: 'the wrong role',
    authorization: `Bearer ${TOKENS.writer}`,
    status: 403,
    code: 'INSUFFICIENT_ROLE',
    detail: 'This operation needs the role admin; the token has the role writer.',
    challenge: null,
    adminOnly: true,
  },
] as const;

const pathOf = (route: Route) => route.path.replace(/\{\w+\}/g, 'x');

async function send(service: ServiceName, route: Route, mistake: (typeof MISTAKES)[number], authorization: string | undefined) {
  const headers: Record<string, string> = {};
  if (authorization) headers.authorization = authorization;
  // A GET carries no body; it still says it sends one of a media type.
  if (mistake.contentType) headers['content-type'] = mistake.contentType;
  const response = await fetch(`${platform.base(service)}${pathOf(route)}${mistake.query}`, {
    method: route.method,
    headers,
    ...(route.method === 'POST' && mistake.body !== undefined ? { body: mistake.body } : {}),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

describe('every route that needs a role', () => {
  it('is some route of each table', () => {
    expect(new Set(guarded.map(({ service }) => service))).toEqual(new Set(['trust', 'registry', 'issuer', 'archive']));
    expect(guarded.filter(({ route }) => route.role === 'admin').length).toBeGreaterThanOrEqual(6);
  });

  for (const { service, route } of guarded) {
    describe(`${service} ${route.method} ${route.path}`, () => {
      for (const caller of CALLERS.filter((candidate) => !('adminOnly' in candidate) || route.role === 'admin')) {
        for (const mistake of MISTAKES) {
          it(`refuses ${caller.name} with ${mistake.name}, saying nothing of the operation`, async () => {
            const answer = await send(service, route, mistake, caller.authorization);
            expect(answer.status, answer.text).toBe(caller.status);
            expect(answer.headers.get('content-type')).toBe('application/problem+json');
            expect(answer.headers.get('www-authenticate')).toBe(caller.challenge);
            // The whole problem, word for word the same on every route but for the path asked: nothing of the operation's members, parameters or fields.
            expect(JSON.parse(answer.text)).toEqual({
              type: expect.stringMatching(/\/docs\/problems#/),
              title: caller.status === 401 ? 'Unauthorized' : 'Forbidden',
              status: caller.status,
              code: caller.code,
              detail: caller.detail,
              instance: new URL(`${platform.base(service)}${pathOf(route)}`).pathname,
            });
          });
        }
      }

      if (route.method === 'GET') {
        it('refuses a HEAD without a token the same way, before its query is read', async () => {
          const response = await fetch(`${platform.base(service)}${pathOf(route)}${MISTAKES[1].query}`, { method: 'HEAD' });
          expect([response.status, response.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="passport"']);
        });
      }

      // The mistakes are real ones: with the right token each is refused for what it is, after authentication.
      it('refuses the same mistakes of a caller with the right role as malformed', async () => {
        const authorization = `Bearer ${TOKENS[route.role as keyof typeof TOKENS]}`;
        const query = await send(service, route, MISTAKES[1], authorization);
        expect([query.status, JSON.parse(query.text).code], query.text).toEqual([400, 'INVALID_QUERY']);
        if (route.method !== 'POST') return;
        const body = await send(service, route, MISTAKES[0], authorization);
        expect(body.status, body.text).toBe(400);
        if (!route.body) return;
        const mediaType = await send(service, route, MISTAKES[2], authorization);
        expect([mediaType.status, JSON.parse(mediaType.text).code], mediaType.text).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
      });
    });
  }
});

describe('refused write and admin requests', () => {
  const logOf = async (service: ServiceName) =>
    (await platform.rest(service, '/admin/log?limit=500', { as: 'admin' })).body.entries as { id: string; actor: string; action: string; outcome: string }[];
  /** What a few requests added to a service's admin log (the entries newer than its newest before them), as `actor action outcome` lines. */
  async function logged(requests: () => Promise<unknown>, service: ServiceName = 'issuer'): Promise<string[]> {
    const newest = (await logOf(service))[0]?.id;
    await requests();
    const entries = await logOf(service);
    const added = entries.findIndex((entry) => entry.id === newest);
    return entries
      .slice(0, added === -1 ? entries.length : added)
      .map(({ actor, action, outcome }) => `${actor} ${action} ${outcome}`)
      .sort();
  }

  it('refused at the facade before their body is read are in the admin log, under the operation they asked for', async () => {
    const lines = await logged(async () => {
      await platform.rest('issuer', '/admin/applicability', { body: {} });
      await platform.rest('issuer', '/admin/profiles', { body: '{"profile_id": ', as: 'writer' });
      await platform.rest('issuer', '/passports', { body: {} });
      await platform.rest('issuer', '/passports/any/events', { body: '[', headers: { authorization: 'Bearer not-a-token' } });
    });
    expect(lines).toEqual([
      'anonymous appendPassportEvent INVALID_TOKEN',
      'anonymous createPassport MISSING_TOKEN',
      'anonymous setIssuerApplicability MISSING_TOKEN',
      'test-writer upsertIssuerProfile INSUFFICIENT_ROLE',
    ]);
  });

  it('refused at the facade are in the admin log on every route that needs a role, under the field the route runs', async () => {
    for (const { service, route } of guarded) {
      // The route's field: the first of its operation (not its alias), below the service's own root field (`registry { adminLog }`).
      const field = [...route.operation.matchAll(/\{\s*(?:\w+\s*:\s*)?(\w+)/g)].map((match) => match[1]).find((name) => name !== service);
      const lines = await logged(() => fetch(`${platform.base(service)}${pathOf(route)}`, { method: route.method }), service);
      expect(lines, `${service} ${route.method} ${route.path}`).toEqual([`anonymous ${field} MISSING_TOKEN`]);
    }
  });

  it('refused in the graph are in the admin log too, whoever asked', async () => {
    const lines = await logged(async () => {
      const write = await platform.graphql('mutation { appendPassportEvent(passportId: "any", type: "note", payload: {}) { passportId } }');
      expect(write.errors?.[0]?.extensions?.code).toBe('MISSING_TOKEN');
    });
    expect(lines).toEqual(['anonymous appendPassportEvent MISSING_TOKEN']);
  });

  it('are reported by the facade alone, signed, and only under a field of the service', async () => {
    const at = new Date();
    const report = (action: string) => [{ refusal: { actor: 'anonymous', role: 'none', action, outcome: 'MISSING_TOKEN', status: 401, detail: 'x' }, count: 1, times: [at], last: at }];
    const mutation = 'mutation ($report: String!, $signature: String!) { issuerReportRefusals(report: $report, signature: $signature) }';
    const key = refusalReportKey(testAccessTokens())!;
    const unknown = await platform.graphql(mutation, { ...signRefusalReport(key, report('dropEverything')) });
    expect(unknown.errors?.[0]?.extensions?.code).toBe('INVALID_ACTION');
    const itself = await platform.graphql(mutation, { ...signRefusalReport(key, report('issuerReportRefusals')) });
    expect(itself.errors?.[0]?.extensions?.code).toBe('INVALID_ACTION');
    // Signed under other tokens' key: not the platform's, whoever sends it, an admin included.
    const otherKey = refusalReportKey(new AccessTokens([{ name: 'other', role: 'admin', sha256: hashToken('another-platform-token') }]))!;
    const foreign = await platform.graphql(mutation, { ...signRefusalReport(otherKey, report('createPassport')) }, 'admin');
    expect(foreign.errors?.[0]?.extensions?.code).toBe('INVALID_SIGNATURE');
    const signed = await platform.graphql(mutation, { ...signRefusalReport(key, report('createPassport')) });
    expect(signed.data?.issuerReportRefusals).toBe(1);
  });
});

describe('a body over the limit', () => {
  // Size limits come before authentication: an oversized upload is refused for its size, whoever sends it.
  it('is refused as too large before its sender is asked for credentials', async () => {
    const { service, route } = guarded.find((candidate) => candidate.route.method === 'POST')!;
    // Over BODY_LIMIT_BYTES' default of 1 MiB, which the test stacks keep.
    const body = `{"id": "${'x'.repeat(1_100_000)}"}`;
    for (const authorization of [undefined, 'Bearer not-a-token-of-this-platform']) {
      const response = await fetch(`${platform.base(service)}${pathOf(route)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body,
      });
      const refusal = (await response.json()) as { code: string };
      expect([response.status, refusal.code, response.headers.get('www-authenticate')]).toEqual([413, 'BODY_TOO_LARGE', null]);
    }
  });
});
