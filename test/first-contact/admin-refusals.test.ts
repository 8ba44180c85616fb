/**
 * An operator reading a service's admin log finds every refused attempt at an admin operation in it:
 * 401s (no token, or one the platform does not know) and 403s (a writer's token), asked through REST
 * or GraphQL, queries and mutations alike, each with who tried, what, and why it was refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.js';

let platform: TestStack;
beforeAll(async () => {
  platform = await startTestStack();
});
afterAll(() => platform?.stop());

interface Entry {
  actor: string;
  role: string;
  action: string;
  outcome: string;
  detail: { status: number } | null;
}

const logOf = async (service: 'registry' | 'trust' | 'issuer'): Promise<Entry[]> => {
  const log = await platform.rest(service, '/admin/log?limit=100', { as: 'admin' });
  expect(log.status, log.text).toBe(200);
  return log.body.entries;
};

describe('refused admin requests', () => {
  it('over REST are answered 401/403 as before, and each is in the admin log', async () => {
    const before = (await logOf('registry')).length;
    const anonymous = await platform.rest('registry', '/admin/log');
    expect([anonymous.status, anonymous.body.code, anonymous.headers.get('www-authenticate')]).toEqual([401, 'MISSING_TOKEN', 'Bearer realm="passport"']);
    const unknown = await platform.rest('registry', '/admin/seed', { method: 'POST', headers: { authorization: 'Bearer not-a-token-of-this-platform' } });
    expect([unknown.status, unknown.body.code, unknown.headers.get('www-authenticate')]).toEqual([401, 'INVALID_TOKEN', 'Bearer realm="passport", error="invalid_token"']);
    const writer = await platform.rest('registry', '/admin/log', { as: 'writer' });
    expect([writer.status, writer.body.code]).toEqual([403, 'INSUFFICIENT_ROLE']);
    const seeding = await platform.rest('registry', '/admin/seed', { method: 'POST', as: 'writer' });
    expect([seeding.status, seeding.body.code]).toEqual([403, 'INSUFFICIENT_ROLE']);

    const entries = await logOf('registry');
    const refusals = entries.slice(0, entries.length - before).map(({ actor, role, action, outcome, detail }) => `${actor} ${role} ${action} ${outcome} ${detail?.status}`);
    expect(refusals.sort()).toEqual(
      [
        'anonymous none adminLog MISSING_TOKEN 401',
        'anonymous none seedRegistry INVALID_TOKEN 401',
        'test-writer writer adminLog INSUFFICIENT_ROLE 403',
        'test-writer writer seedRegistry INSUFFICIENT_ROLE 403',
      ].sort(),
    );
  });

  it('over GraphQL are in the same log, once each; granted reads are not', async () => {
    const before = (await logOf('issuer')).length;
    const query = await platform.graphql('{ issuer { adminLog(first: 1) { nodes { id } } } }', {}, 'writer');
    expect(query.errors?.[0]?.extensions?.code).toBe('INSUFFICIENT_ROLE');
    const mutation = await platform.graphql('mutation { issuerRotateKey(purpose: "service") }');
    expect(mutation.errors?.[0]?.extensions?.code).toBe('MISSING_TOKEN');
    const writerMutation = await platform.graphql('mutation { issuerRotateKey(purpose: "service") }', {}, 'writer');
    expect(writerMutation.errors?.[0]?.extensions?.code).toBe('INSUFFICIENT_ROLE');
    const entries = await logOf('issuer');
    const refusals = entries.slice(0, entries.length - before).map(({ actor, action, outcome }) => `${actor} ${action} ${outcome}`);
    expect(refusals.sort()).toEqual(['anonymous issuerRotateKey MISSING_TOKEN', 'test-writer adminLog INSUFFICIENT_ROLE', 'test-writer issuerRotateKey INSUFFICIENT_ROLE'].sort());
  });
});
