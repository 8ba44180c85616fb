/**
 * A small subgraph of its own, served in the test's process, to be dropped and served again on its
 * port with another schema as a rolling deploy restarts a replica: `serveStandIn(schema, port)` serves
 * one of SCHEMAS (Apollo Server with @apollo/subgraph, batched requests on as the platform's subgraphs
 * have them); `kill()` ends it as a process's end would, every connection cut, in flight or idle.
 * `conflict` defines a `Query.passport` of its own, which the issuer's does not share: it does not compose.
 */
import type { AddressInfo } from 'node:net';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import { buildSubgraphSchema } from '@apollo/subgraph';
import Fastify from 'fastify';
import { parse } from 'graphql';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])';
const SCHEMAS = {
  v1: { sdl: 'type Query { notice: String }', resolvers: { Query: { notice: () => 'v1' } } },
  v2: { sdl: 'type Query { notice: String noticeVersion: Int }', resolvers: { Query: { notice: () => 'v2', noticeVersion: () => 2 } } },
  conflict: { sdl: 'type Query { notice: String passport(id: ID!): String }', resolvers: { Query: { notice: () => 'conflict', passport: () => 'not a passport' } } },
};

export type StandInSchema = keyof typeof SCHEMAS;

export interface ServedStandIn {
  port: number;
  /** Closes the port and cuts every connection at once, as the end of a process does. */
  kill(): Promise<void>;
}

export async function serveStandIn(schema: StandInSchema, port = 0): Promise<ServedStandIn> {
  const { sdl, resolvers } = SCHEMAS[schema];
  const apollo = new ApolloServer({
    schema: buildSubgraphSchema([{ typeDefs: parse(`${LINK}\n${sdl}`), resolvers }]),
    allowBatchedHttpRequests: true,
    plugins: [ApolloServerPluginInlineTraceDisabled()],
  });
  await apollo.start();
  // Served as the platform's subgraphs are (Fastify and Apollo's integration for it); closing cuts every connection.
  const app = Fastify({ forceCloseConnections: true });
  app.route({ method: ['GET', 'POST'], url: '*', handler: fastifyApolloHandler(apollo) });
  await app.listen({ port, host: '127.0.0.1' });
  return {
    port: (app.server.address() as AddressInfo).port,
    async kill() {
      await app.close();
      await apollo.stop();
    },
  };
}
