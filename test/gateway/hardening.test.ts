/**
 * The gateway in public, now that the graph is deep and listy (a snapshot's passport has snapshots,
 * whose passport has snapshots…): depth and cost limits, introspection switched off by
 * configuration, and a subgraph's internal failure reaching the client as the service's name only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../support/database.js';
import { startTestStack, type TestStack } from '../support/stack.js';

let platform: TestStack;
let closed: TestStack;

beforeAll(async () => {
  [platform, closed] = await Promise.all([startTestStack(), startTestStack({ env: { GRAPHQL_INTROSPECTION: 'false' } })]);
});
afterAll(async () => {
  await platform?.stop();
  await closed?.stop();
});

/** `snapshot(id) { passport { snapshots { passport { … } } } }`, `levels` passports deep. */
function snapshotChain(levels: number, leaf = 'id'): string {
  let selection = leaf;
  for (let level = 0; level < levels; level += 1) selection = `id passport { id status snapshots { id sha512 ${selection} } }`;
  return `snapshot(id: "none") { ${selection} }`;
}

describe('limits on what one request may ask', () => {
  it('refuses a query deeper than the depth limit (15), before any subgraph is asked', async () => {
    const shallow = await platform.graphql(`{ ${snapshotChain(6)} }`);
    expect(shallow.errors).toBeUndefined();
    expect(shallow.data.snapshot).toBeNull();
    const deep = await platform.graphql(`{ ${snapshotChain(8)} }`);
    expect(deep.data).toBeUndefined();
    expect(deep.errors?.[0].message).toMatch(/depth limit/i);
    expect(deep.errors?.[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('refuses a query whose cost is over the limit, though under the depth, alias and token limits', async () => {
    const costly = Array.from({ length: 40 }, (_, i) => `a${i}: ${snapshotChain(6, 'size createdAt notaryKid')}`).join('\n');
    const refused = await platform.graphql(`{ ${costly} }`);
    expect(refused.data).toBeUndefined();
    expect(refused.errors?.[0].message).toMatch(/cost/i);
    // A tenth of it is fine.
    const fine = await platform.graphql(`{ ${costly.split('\n').slice(0, 4).join('\n')} }`);
    expect(fine.errors).toBeUndefined();
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
    expect(schema.errors?.[0].message).toMatch(/introspection/i);
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
