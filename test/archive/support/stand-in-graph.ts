/**
 * The archive in a graph of its own: the real archive subgraph, gateway and REST facade, with one
 * stand-in subgraph serving exactly the fields of the cross-service contract the archive reads
 * (`passport(id)`, `issuer { keyring }`, `trust { keyring }`, `trustAnchorBundle`) from given
 * passports. POST /snapshots then runs as in production — the gather query crosses the gateway —
 * without the issuer and trust services.
 */
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import type { AccessTokens } from '../../../lib/auth/tokens.js';
import { withSchema } from '../../../lib/config/database.js';
import { loadRuntimeConfig } from '../../../lib/config/runtime.js';
import { gatewayClient } from '../../../lib/graphql/gateway-client.js';
import { noPhoneHomePlugins, serveSubgraph, subgraphServerOptions } from '../../../lib/graphql/subgraph-server.js';
import { startGateway } from '../../../gateway/index.js';
import { ROUTE_TABLES } from '../../../rest-facade/routes/index.js';
import { startFacade } from '../../../rest-facade/server.js';
import { createArchiveSubgraph } from '../../../subgraphs/archive/index.js';
import type { SnapshotContent } from '../../../subgraphs/archive/domain/index.js';
import { TEST_KEK } from '../../support/stack.js';
import { gathered } from './harness.js';

const CONTRACT = `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
scalar JSONObject
type Passport @key(fields: "id") {
  id: ID!
  operator: ID!
  status: String!
  core: JSONObject!
  manifest: JSONObject!
  logHead: JSONObject!
  events: [JSONObject!]!
  latestPack: String
  verdict: JSONObject!
}
type IssuerService { keyring: JSONObject! }
type TrustService { keyring: JSONObject! }
type Query {
  passport(id: ID!): Passport
  issuer: IssuerService!
  trust: TrustService!
  trustAnchorBundle(jurisdiction: String): JSONObject!
}`;

export interface StandInGraph {
  /** Base URL of the archive's REST interface. */
  archiveBase: string;
  gatewayUrl: string;
  /** The archive subgraph itself. */
  archiveSubgraphUrl: string;
  /** Passports the stand-in issuer knows, by id. */
  passports: Map<string, SnapshotContent>;
  /** How many times the stand-in was asked for a passport. */
  passportRequests(): number;
  stop(): Promise<void>;
}

export async function startStandInGraph(options: { databaseUrl: string; tokens: AccessTokens; passports?: SnapshotContent[] }): Promise<StandInGraph> {
  const passports = new Map((options.passports ?? []).map((content) => [content.passportId, content]));
  const any = [...passports.values()][0];
  let requests = 0;
  const standIn = new ApolloServer({
    schema: buildSubgraphSchema([
      {
        typeDefs: parse(CONTRACT),
        resolvers: {
          JSONObject: GraphQLJSONObject,
          Query: {
            passport: (_: unknown, { id }: { id: string }) => {
              requests += 1;
              return gathered(passports.get(id)).passport;
            },
            issuer: () => gathered(any).issuer,
            trust: () => gathered(any).trust,
            trustAnchorBundle: () => gathered(any).trustAnchorBundle,
          },
        } as never,
      },
    ]),
    plugins: [...noPhoneHomePlugins(), ApolloServerPluginInlineTraceDisabled()],
  });
  const stoppers: (() => Promise<unknown>)[] = [];
  try {
    const { url: standInUrl } = await startStandaloneServer(standIn, { listen: { host: '127.0.0.1', port: 0 } });
    stoppers.push(() => standIn.stop());

    let gatewayUrl = '';
    const archive = await createArchiveSubgraph({ databaseUrl: withSchema(options.databaseUrl, 'archive'), tokens: options.tokens, kek: TEST_KEK, gateway: gatewayClient(() => gatewayUrl) });
    stoppers.push(() => archive.close());
    const config = loadRuntimeConfig({});
    const archiveServer = await serveSubgraph(archive, { host: '127.0.0.1', port: 0 }, subgraphServerOptions(config));
    stoppers.push(() => archiveServer.stop());

    const gateway = await startGateway({
      host: '127.0.0.1',
      port: 0,
      subgraphs: [
        { name: 'archive', url: archiveServer.url },
        { name: 'stand_in', url: standInUrl },
      ],
      introspection: true,
      bodyLimit: config.bodyLimit,
      limits: config.graphqlLimits,
    });
    stoppers.push(() => gateway.stop());
    gatewayUrl = gateway.graphqlUrl;

    const facade = await startFacade({
      host: '127.0.0.1',
      mounts: [{ service: 'archive', port: 0, prefix: '/archive' }],
      tables: ROUTE_TABLES,
      gatewayUrl,
      tokens: options.tokens,
      bodyLimit: config.bodyLimit,
    });
    stoppers.push(() => facade.stop());
    return {
      archiveBase: facade.baseUrls.archive,
      gatewayUrl,
      archiveSubgraphUrl: archiveServer.url,
      passports,
      passportRequests: () => requests,
      async stop() {
        for (const stop of stoppers.reverse()) await stop();
      },
    };
  } catch (error) {
    for (const stop of stoppers.reverse()) await stop();
    throw error;
  }
}
