/**
 * The gateway in public, now that the graph is deep and listy (a snapshot's passport has snapshots,
 * whose passport has snapshots…): depth and cost limits, introspection switched off by
 * configuration, and a subgraph's internal failure reaching the client as the service's name only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../support/database.js';
import { sharedTestStack, startTestStack, type SharedTestStack, type TestStack } from '../support/stack.js';

let platform: SharedTestStack;
let closed: TestStack;

beforeAll(async () => {
  [platform, closed] = await Promise.all([sharedTestStack(), startTestStack({ env: { GRAPHQL_INTROSPECTION: 'false' } })]);
});
afterAll(() => closed?.stop());

/** `passport(id) { predecessor { predecessor { … } } }`, `levels` deep: deep, but no list multiplies its cost. */
function predecessorChain(levels: number): string {
  let selection = 'id';
  for (let level = 0; level < levels; level += 1) selection = `id predecessor { ${selection} }`;
  return `passport(id: "none") { ${selection} }`;
}

/** `snapshot(id) { passport { snapshots { passport { … } } } }`, `levels` passports deep: each level a list of the one below. */
function snapshotChain(levels: number, leaf = 'id'): string {
  let selection = leaf;
  for (let level = 0; level < levels; level += 1) selection = `id passport { id status snapshots { id sha512 ${selection} } }`;
  return `snapshot(id: "none") { ${selection} }`;
}

describe('limits on what one request may ask', () => {
  it('refuses a query deeper than the depth limit (15), before any subgraph is asked', async () => {
    const shallow = await platform.graphql(`{ ${predecessorChain(12)} }`);
    expect(shallow.errors).toBeUndefined();
    expect(shallow.data.passport).toBeNull();
    const deep = await platform.graphql(`{ ${predecessorChain(16)} }`);
    expect(deep.data).toBeUndefined();
    expect(deep.errors?.[0].message).toMatch(/^The operation nests fields \d+ levels deep; the limit is 15 \(setting GRAPHQL_MAX_DEPTH\)\.$/);
    expect(deep.errors?.[0].extensions).toEqual({ code: 'GRAPHQL_VALIDATION_FAILED', limit: { setting: 'GRAPHQL_MAX_DEPTH', value: 15, found: expect.any(Number) } });
  });

  it('refuses a query whose cost is over the limit, though under the depth, alias and token limits', async () => {
    const costly = Array.from({ length: 40 }, (_, i) => `a${i}: ${snapshotChain(3, 'size createdAt notaryKid')}`).join('\n');
    const refused = await platform.graphql(`{ ${costly} }`);
    expect(refused.data).toBeUndefined();
    expect(refused.errors?.[0].message).toMatch(/^The operation costs \d+ .*; the limit is 200000 \(setting GRAPHQL_MAX_COST\)\.$/);
    expect(refused.errors?.[0].extensions.limit).toEqual({ setting: 'GRAPHQL_MAX_COST', value: 200_000, found: expect.any(Number) });
    // A tenth of it is fine.
    const fine = await platform.graphql(`{ ${costly.split('\n').slice(0, 4).join('\n')} }`);
    expect(fine.errors).toBeUndefined();
  });
});

describe('a limit error', () => {
  it('names the limit, its value and the setting that raises it, never as a syntax error', async () => {
    const aliases = await platform.graphql(`{ ${Array.from({ length: 61 }, (_, i) => `a${i}: passport(id: "x") { id }`).join(' ')} }`);
    expect(aliases.errors).toEqual([
      {
        message: 'The operation has 61 aliases; the limit is 60 (setting GRAPHQL_MAX_ALIASES).',
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit: { setting: 'GRAPHQL_MAX_ALIASES', value: 60, found: 61 } },
      },
    ]);
    const tokens = await platform.graphql(`{ ${Array.from({ length: 5001 }, () => '__typename').join(' ')} }`);
    expect(tokens.errors?.[0]).toMatchObject({
      message: 'The document has more than 5000 tokens (names, punctuation, values); the limit is 5000 (setting GRAPHQL_MAX_TOKENS).',
      extensions: { code: 'GRAPHQL_PARSE_FAILED', limit: { setting: 'GRAPHQL_MAX_TOKENS', value: 5000 } },
    });
    const directives = await platform.graphql(`{ ${Array.from({ length: 51 }, (_, i) => `a${i}: __typename @include(if: true)`).join(' ')} }`);
    expect(directives.errors?.[0]).toMatchObject({ message: 'The operation has 51 directives; the limit is 50 (fixed).', extensions: { limit: { setting: 'fixed', value: 50, found: 51 } } });
    for (const result of [aliases, tokens, directives]) expect(JSON.stringify(result.errors)).not.toMatch(/Syntax Error/);
  });

  it('is not what a real syntax error is called', async () => {
    const broken = await platform.graphql('{ passport(id: "x") { id }');
    expect(broken.errors?.[0]).toMatchObject({ message: 'Syntax Error: Expected Name, found <EOF>.', extensions: { code: 'GRAPHQL_PARSE_FAILED' } });
  });
});

describe('a batched HTTP request', () => {
  it('is refused with 400 and a message that says what to send instead', async () => {
    const response = await fetch(platform.stack.gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors).toEqual([{ message: expect.stringMatching(/^The gateway takes one operation per HTTP request, not a JSON array of them\..*aliases/), extensions: { code: 'BAD_REQUEST' } }]);
  });
});

describe('introspection', () => {
  it('is answered by default, for GraphiQL', async () => {
    const result = await platform.graphql('{ __schema { queryType { name } } }');
    expect(result.data.__schema.queryType.name).toBe('Query');
  });

  it('is refused when GRAPHQL_INTROSPECTION=false, and no field suggestions give the schema away', async () => {
    const schema = await closed.graphql('{ __schema { types { name } } }');
    expect(schema.data).toBeUndefined();
    expect(schema.errors?.[0].message).toBe(
      'Introspection (__schema, __type) is off on this gateway: its operator set GRAPHQL_INTROSPECTION=false. GRAPHQL_INTROSPECTION=true (the default) enables it.',
    );
    expect(schema.errors?.[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const type = await closed.graphql('{ __type(name: "Passport") { fields { name } } }');
    expect(type.errors?.[0].message).toMatch(/introspection/i);
    const typo = await closed.graphql('{ passport(id: "x") { stauts } }');
    expect(typo.errors?.[0].message).toMatch(/stauts/);
    expect(typo.errors?.[0].message).not.toMatch(/did you mean|status/i);
    // Queries themselves are answered as usual.
    const query = await closed.graphql('{ passport(id: "x") { id } trust { health } }');
    expect(query.errors).toBeUndefined();
    expect(query.data.trust.health.service).toBe('trust');
  });
});

describe('a subgraph failing inside', () => {
  it('reaches the client with the service name and no stack trace, SQL or driver message', async () => {
    // The archive's table vanishes under it: its next query fails in PostgreSQL.
    await sql(closed.databaseUrl, 'ALTER TABLE archive.snapshot RENAME TO snapshot_elsewhere');
    try {
      const result = await closed.graphql('{ snapshot(id: "some-id") { id } trust { health } }');
      expect(result.data?.trust.health.service).toBe('trust');
      expect(result.errors).toHaveLength(1);
      const [error] = result.errors!;
      // The archive's generic problem, passed on by the gateway with the archive's name.
      expect(error.extensions).toMatchObject({ code: 'INTERNAL_ERROR', serviceName: 'archive', problem: { status: 500, code: 'INTERNAL_ERROR' } });
      expect(error.message).toBe('Internal error in the archive service.');
      expect(error.path).toEqual(['snapshot']);
      const text = JSON.stringify(result);
      for (const leak of [/snapshot_elsewhere|"?archive"?\."?snapshot/i, /select|relation|postgres|prisma|P20\d\d/i, /stack|\bat .+\(.*:\d+:\d+\)|node_modules|\.ts:\d+/i]) {
        expect(text).not.toMatch(leak);
      }
    } finally {
      await sql(closed.databaseUrl, 'ALTER TABLE archive.snapshot_elsewhere RENAME TO snapshot');
    }
    const healed = await closed.graphql('{ snapshot(id: "some-id") { id } }');
    expect(healed.errors).toBeUndefined();
  });
});
