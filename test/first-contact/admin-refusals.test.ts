/**
 * An operator reading a service's admin log finds every refused attempt at an admin operation in it:
 * 401s (no token, or one the platform does not know) and 403s (a writer's token), asked through REST
 * or GraphQL, queries and mutations alike, each with who tried, what, and why it was refused. A
 * flood of refused requests is all there too, counted where it is not itemised, in a few entries
 * and a few SQL statements rather than one of each per request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSAL_LIMITS } from '../../lib/audit/refusal-log.js';
import { startTestStack, type TestStack } from '../support/stack.js';

let platform: TestStack;
beforeAll(async () => {
  platform = await startTestStack();
});
afterAll(() => platform?.stop());

interface Entry {
  id: string;
  actor: string;
  role: string;
  action: string;
  outcome: string;
  detail: { status: number; count?: number } | null;
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

describe('a flood of refused requests', () => {
  /** The entries of the issuer's admin log newer than `since` of one kind of refusal, and how many refusals they stand for. */
  async function refusalsSince(since: string, action: string, outcome: string) {
    const entries = (await logOf('issuer')).filter((entry) => BigInt(entry.id) > BigInt(since) && entry.action === action && entry.outcome === outcome);
    return { entries: entries.length, refusals: entries.reduce((sum, entry) => sum + (entry.detail?.count ?? 1), 0) };
  }
  const newest = async () => (await logOf('issuer'))[0]?.id ?? '0';
  const createPassport = (authorization?: string) =>
    fetch(`${platform.base('issuer')}/passports`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify({ identity: 'https://id.gs1.org/01/09520123456788/21/FLOOD', type_ref: { id: 'none', version: 1 }, config_vector: {} }),
    }).then((response) => response.status);

  it('of 20 at once through REST is 20 refusals in the log, with no token or with one bogus token shared', async () => {
    const since = await newest();
    expect(await Promise.all(Array.from({ length: 20 }, () => createPassport()))).toEqual(Array(20).fill(401));
    expect(await Promise.all(Array.from({ length: 20 }, () => createPassport('Bearer one-bogus-token-for-all')))).toEqual(Array(20).fill(401));
    expect((await refusalsSince(since, 'createPassport', 'MISSING_TOKEN')).refusals).toBe(20);
    expect((await refusalsSince(since, 'createPassport', 'INVALID_TOKEN')).refusals).toBe(20);
  });

  it('of 30 identical admin queries at once at the gateway is 30 refusals in the log', async () => {
    const since = await newest();
    const answers = await Promise.all(Array.from({ length: 30 }, () => platform.graphql('{ issuer { adminLog(first: 1) { nodes { id } } } }')));
    expect(answers.map((answer) => answer.errors?.[0]?.extensions?.code)).toEqual(Array(30).fill('MISSING_TOKEN'));
    expect((await refusalsSince(since, 'adminLog', 'MISSING_TOKEN')).refusals).toBe(30);
  });

  it('of 500 is all counted, in a few entries written with a few SQL statements', async () => {
    const since = await newest();
    const statements = platform.stack.sqlStatements().issuer;
    const statuses: number[] = [];
    for (let wave = 0; wave < 10; wave += 1) statuses.push(...(await Promise.all(Array.from({ length: 50 }, () => createPassport()))));
    expect(statuses).toEqual(Array(500).fill(401));
    // One INSERT per report the facade sends (a few a second) at most, none per refusal.
    expect(platform.stack.sqlStatements().issuer - statements).toBeLessThan(25);
    const logged = await refusalsSince(since, 'createPassport', 'MISSING_TOKEN');
    expect(logged.refusals).toBe(500);
    // At most REFUSAL_LIMITS.itemsPerKind itemised in a window, and one entry with the count of the rest for each read of the log.
    expect(logged.entries).toBeLessThanOrEqual(REFUSAL_LIMITS.itemsPerKind + 1);
  });

  it('cannot be claimed by anyone but the facade: a report without its signature is refused, and logged', async () => {
    const since = await newest();
    const report = JSON.stringify({
      refusals: [
        {
          actor: 'anonymous',
          role: 'none',
          action: 'createPassport',
          outcome: 'MISSING_TOKEN',
          status: 401,
          detail: 'x',
          count: 1000000,
          times: [new Date().toISOString()],
          last: new Date().toISOString(),
        },
      ],
    });
    const forged = await platform.graphql('mutation ($report: String!) { issuerReportRefusals(report: $report, signature: "forged") }', { report });
    expect(forged.errors?.[0]?.extensions?.code).toBe('INVALID_SIGNATURE');
    expect(await refusalsSince(since, 'createPassport', 'MISSING_TOKEN')).toEqual({ entries: 0, refusals: 0 });
    expect(await refusalsSince(since, 'issuerReportRefusals', 'INVALID_SIGNATURE')).toEqual({ entries: 1, refusals: 1 });
  });
});
