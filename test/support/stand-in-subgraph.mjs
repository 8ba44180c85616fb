/**
 * A small subgraph of its own as a process, to be restarted with another schema:
 * `node stand-in-subgraph.mjs <schema> [port]` prints `listening <port>` and serves one of SCHEMAS
 * (Apollo Server with @apollo/subgraph, batched requests on as the platform's subgraphs have them).
 * `conflict` defines a `Query.passport` of its own, which the issuer's does not share: it does not compose.
 */
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])';
const SCHEMAS = {
  v1: { sdl: 'type Query { notice: String }', resolvers: { Query: { notice: () => 'v1' } } },
  v2: { sdl: 'type Query { notice: String noticeVersion: Int }', resolvers: { Query: { notice: () => 'v2', noticeVersion: () => 2 } } },
  conflict: { sdl: 'type Query { notice: String passport(id: ID!): String }', resolvers: { Query: { notice: () => 'conflict', passport: () => 'not a passport' } } },
};

const { sdl, resolvers } = SCHEMAS[process.argv[2]];
const server = new ApolloServer({
  schema: buildSubgraphSchema([{ typeDefs: parse(`${LINK}\n${sdl}`), resolvers }]),
  allowBatchedHttpRequests: true,
  plugins: [ApolloServerPluginInlineTraceDisabled()],
});
const { url } = await startStandaloneServer(server, { listen: { host: '127.0.0.1', port: Number(process.argv[3] ?? 0) } });
console.log(`listening ${new URL(url).port}`);
