/**
 * The limits every operation is held to, from the runtime configuration (GRAPHQL_MAX_*): depth,
 * aliases, tokens and directives by graphql-armor, cost by the schema's `@cost` and `@listSize`
 * (cost.ts). The built-in gateway (gateway/apollo.ts), the Hive Gateway configuration
 * (gateway/hive-gateway.config.ts) and every subgraph (subgraph-server.ts) take the same, so no
 * door is softer than another and a replacement gateway refuses what ours refuses.
 */
import type { ApolloServerOptions, ApolloServerPlugin, BaseContext } from '@apollo/server';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { GraphqlLimits } from '../config/runtime.js';
import { costLimitPlugin, type CostAnnotations, type CostReport } from './cost.js';

/** Most directives in one operation; fixed, as no honest query comes near it. */
export const MAX_DIRECTIVES = 50;

export function armorLimits(limits: GraphqlLimits, introspection: boolean) {
  return {
    maxDepth: { n: limits.maxDepth },
    maxAliases: { n: limits.maxAliases },
    // The cost is the schema's own (cost.ts): armor's counts fields, not the work they do.
    costLimit: { enabled: false },
    maxTokens: { n: limits.maxTokens },
    maxDirectives: { n: MAX_DIRECTIVES },
    // Field suggestions would reveal the schema even with introspection off.
    blockFieldSuggestion: { enabled: !introspection },
  };
}

/**
 * What an Apollo Server (the gateway's or a subgraph's) needs to hold operations to `limits`: armor's
 * plugins and validation rules, the cost limit over the schema's `annotations` (with `costReport`, the
 * gateway's, each operation's estimated and actual cost reported), and the token limit as
 * graphql-js's own parse option — armor's token plugin parses in a hook whose failure Apollo answers
 * with 500, so every syntax error became one.
 */
export function apolloArmor<Context extends BaseContext>(limits: GraphqlLimits, introspection: boolean, annotations: CostAnnotations, costReport?: CostReport) {
  const armor = new ApolloArmor({ ...armorLimits(limits, introspection), maxTokens: { enabled: false } }).protect();
  return {
    // graphql-armor's types come from @apollo/server's CommonJS build; the plugins are the same objects.
    plugins: [...(armor.plugins as unknown as ApolloServerPlugin<Context>[]), costLimitPlugin<Context>(annotations, limits.maxCost, costReport)],
    validationRules: armor.validationRules,
    parseOptions: { maxTokens: limits.maxTokens },
  } satisfies Partial<ApolloServerOptions<Context>>;
}

/**
 * A subgraph's own limits: the gateway's, with room for what a query plan adds to what the client
 * asked (`_entities(representations:) { ... on T { … } }` nests two levels deeper and repeats some
 * key fields), so that every fetch of a query the gateway accepted is accepted here too.
 */
export function subgraphLimits(limits: GraphqlLimits): GraphqlLimits {
  return { ...limits, maxDepth: limits.maxDepth + 2, maxAliases: limits.maxAliases + 10, maxCost: limits.maxCost * 2, maxTokens: limits.maxTokens * 2 };
}
