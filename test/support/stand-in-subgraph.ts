/**
 * A small subgraph of its own, served in the test's process, to be dropped and served again on its
 * port with another schema as a rolling deploy restarts a replica: `serveStandIn(schema, port)` serves
 * one of SCHEMAS (Apollo Server with @apollo/subgraph, batched requests on as the platform's subgraphs
 * have them); `kill()` ends it as a process's end would, every connection cut, in flight or idle.
 * `conflict` defines a `Query.passport` of its own, which the issuer's does not share: it does not compose.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer, HeaderMap } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { buildSubgraphSchema } from '@apollo/subgraph';
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
  // As Apollo's standalone server hands a request over, its JSON body parsed.
  const server = createServer(async (request, response) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      const headers = new HeaderMap();
      for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      const answer = await apollo.executeHTTPGraphQLRequest({
        httpGraphQLRequest: { method: request.method!.toUpperCase(), headers, search: new URL(request.url!, 'http://stand-in').search, body: text ? JSON.parse(text) : undefined },
        context: async () => ({}),
      });
      for (const [name, value] of answer.headers) response.setHeader(name, value);
      response.statusCode = answer.status ?? 200;
      if (answer.body.kind === 'complete') response.end(answer.body.string);
      else {
        for await (const chunk of answer.body.asyncIterator) response.write(chunk);
        response.end();
      }
    } catch (error) {
      if (!response.headersSent) response.statusCode = 400;
      response.end(String(error));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    async kill() {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await closed;
      await apollo.stop();
    },
  };
}
