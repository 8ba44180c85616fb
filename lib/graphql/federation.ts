/**
 * Federation 2 subgraph schemas from type-graphql classes: type-graphql builds the schema, which is
 * printed with its directives, linked to the federation spec and rebuilt by @apollo/subgraph.
 */
import { buildSubgraphSchema } from '@apollo/subgraph';
import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { parse, type GraphQLField, type GraphQLResolveInfo, type GraphQLSchema } from 'graphql';
import { buildSchema, createResolversMap, type BuildSchemaOptions } from 'type-graphql';
import { DateTimeISO } from './common-types.js';

// 2.9 brings @cost and @listSize (lib/graphql/cost.ts), which composition carries into the supergraph.
const FEDERATION_LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@shareable", "@external", "@requires", "@provides", "@cost", "@listSize"])';

/**
 * `__resolveReference` per entity type name: how this subgraph loads an entity another one names;
 * `info` is the `_entities` field's, whose selection set says what the request asks of the entities.
 */
export type ReferenceResolvers = Record<string, (reference: Record<string, unknown>, context: unknown, info: GraphQLResolveInfo) => unknown>;

/** The resolver map @apollo/subgraph takes (its package does not export the type by name). */
type GraphQLResolverMap = NonNullable<Extract<Parameters<typeof buildSubgraphSchema>[0], { resolvers?: unknown }>['resolvers']>;

/** `subscriptions`: SDL of a Subscription type the gateway serves (lib/graphql/subgraph.ts), composed with the rest. */
export async function buildFederatedSchema(options: BuildSchemaOptions, references: ReferenceResolvers = {}, subscriptions = ''): Promise<GraphQLSchema> {
  const schema = await buildSchema({ ...options, scalarsMap: [{ type: Date, scalar: DateTimeISO }], skipCheck: true });
  const resolvers = createResolversMap(schema) as GraphQLResolverMap;
  for (const [typeName, resolveReference] of Object.entries(references)) {
    resolvers[typeName] = { ...(resolvers[typeName] as object), __resolveReference: resolveReference } as GraphQLResolverMap[string];
  }
  return omittedArgumentsAsNull(buildSubgraphSchema([{ typeDefs: parse(`${FEDERATION_LINK}\n${printSchemaWithDirectives(schema)}\n${subscriptions}`), resolvers }]));
}

/**
 * An optional argument a client leaves out reaches a resolver as `undefined`, one given `null` as
 * `null`, and one with a default given `null` as `null` rather than the default; the schema
 * promises all mean "not given". So every field gets omitted optional arguments as `null` (no
 * resolver can tell the two apart: `after === null` holds for both) and a `null` argument that has
 * a default as that default (`first: null` pages like `first` left out).
 */
export function omittedArgumentsAsNull(schema: GraphQLSchema): GraphQLSchema {
  // Types are told apart by shape, not instanceof: @apollo/subgraph builds the schema with the
  // CommonJS graphql, this module imports the ES one.
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || !('getFields' in type)) continue;
    for (const field of Object.values(type.getFields()) as Partial<GraphQLField<unknown, unknown>>[]) {
      const optional = (field.args ?? []).filter((argument) => !String(argument.type).endsWith('!'));
      const resolve = field.resolve;
      if (!optional.length || !resolve) continue;
      field.resolve = (source, args: Record<string, unknown>, context, info) => {
        let given = args;
        for (const { name, defaultValue } of optional) {
          if (given[name] === undefined) given = { ...given, [name]: null };
          if (given[name] === null && defaultValue !== undefined) given = { ...given, [name]: defaultValue };
        }
        return resolve(source, given, context, info);
      };
    }
  }
  return schema;
}
