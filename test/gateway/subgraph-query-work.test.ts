/**
 * What a query costs a subgraph beyond its resolvers (issue 45 item 8: the gateway at twice Hive
 * Gateway's throughput on the mixed workload, whose CPU is mostly the subgraphs'): a query answered
 * at a subgraph's own port runs no hook on each field it resolves (Apollo Server wraps every field
 * resolver of the schema the first time a plugin asks for willResolveField, as its cache-control
 * plugin did on every request, to answer `Cache-Control: no-store` each time), and still answers
 * `no-store`. (A mutation by a known caller has a hook on its root field, for the admin log.)
 */
import type { GraphQLSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withSchema } from '../../lib/config/database.js';
import { loadRuntimeConfig } from '../../lib/config/runtime.js';
import { gatewayClient } from '../../lib/graphql/gateway-client.js';
import type { Subgraph } from '../../lib/graphql/subgraph.js';
import { serveSubgraph, subgraphServerOptions } from '../../lib/graphql/subgraph-server.js';
import type { ListeningServer } from '../../lib/server/platform-server.js';
import { createRegistrySubgraph } from '../../subgraphs/registry/index.js';
import { createTestDatabase } from '../support/database.js';
import { TEST_KEK, testAccessTokens } from '../support/stack.js';

let registry: Subgraph;
let server: ListeningServer;

beforeAll(async () => {
  const databaseUrl = await createTestDatabase();
  registry = await createRegistrySubgraph({ databaseUrl: withSchema(databaseUrl, 'registry'), tokens: testAccessTokens(), kek: TEST_KEK, gateway: gatewayClient(() => 'http://127.0.0.1:9/graphql') });
  server = await serveSubgraph(registry, { host: '127.0.0.1', port: 0 }, subgraphServerOptions(loadRuntimeConfig({})));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await registry?.close();
});

/** Every field resolver of the schema, by coordinate. */
function resolvers(schema: GraphQLSchema): Map<string, unknown> {
  const found = new Map<string, unknown>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || !('getFields' in type)) continue;
    for (const [name, field] of Object.entries(type.getFields())) found.set(`${type.name}.${name}`, 'resolve' in field ? field.resolve : undefined);
  }
  return found;
}

describe("a query at a subgraph's port", () => {
  it('runs no hook per field, and is answered Cache-Control: no-store', async () => {
    const before = resolvers(registry.schema);
    for (const id of ['battery-query-work-1', 'battery-query-work-2']) {
      const answer = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'query Read($id: ID!) { registryRecord(id: $id, kind: "model") { id version kind status body } registry { discovery } }', variables: { id } }),
      });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(await answer.json()).toMatchObject({ data: { registryRecord: null, registry: { discovery: { service: 'registry' } } } });
    }
    // Nothing asked for a hook per field, so Apollo Server wrapped no resolver.
    expect(resolvers(registry.schema)).toEqual(before);
  });
});
