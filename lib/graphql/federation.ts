/**
 * Federation 2 subgraph schemas from type-graphql classes: type-graphql builds the schema, which is
 * printed with its directives, linked to the federation spec and rebuilt by @apollo/subgraph.
 */
import { buildSubgraphSchema } from '@apollo/subgraph';
import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { parse, type GraphQLSchema } from 'graphql';
import { buildSchema, createResolversMap, type BuildSchemaOptions } from 'type-graphql';

const FEDERATION_LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key", "@shareable", "@external", "@requires", "@provides"])';

/** `__resolveReference` per entity type name: how this subgraph loads an entity another one names. */
export type ReferenceResolvers = Record<string, (reference: Record<string, unknown>, context: unknown) => unknown>;

/** The resolver map @apollo/subgraph takes (its package does not export the type by name). */
type GraphQLResolverMap = NonNullable<Extract<Parameters<typeof buildSubgraphSchema>[0], { resolvers?: unknown }>['resolvers']>;

export async function buildFederatedSchema(options: BuildSchemaOptions, references: ReferenceResolvers = {}): Promise<GraphQLSchema> {
  const schema = await buildSchema({ ...options, skipCheck: true });
  const resolvers = createResolversMap(schema) as GraphQLResolverMap;
  for (const [typeName, resolveReference] of Object.entries(references)) {
    resolvers[typeName] = { ...(resolvers[typeName] as object), __resolveReference: resolveReference } as GraphQLResolverMap[string];
  }
  return buildSubgraphSchema([{ typeDefs: parse(`${FEDERATION_LINK}\n${printSchemaWithDirectives(schema)}`), resolvers }]);
}
