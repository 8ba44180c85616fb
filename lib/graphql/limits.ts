/**
 * The graphql-armor limits every operation is held to, from the runtime configuration
 * (GRAPHQL_MAX_*): the built-in gateway (gateway/index.ts), the Hive Gateway configuration
 * (gateway/hive-gateway.config.ts) and every subgraph (subgraph-server.ts) take the same, so no
 * door is softer than another and a replacement gateway refuses what ours refuses.
 */
import type { GraphqlLimits } from '../config/runtime.js';

/** Most directives in one operation; fixed, as no honest query comes near it. */
export const MAX_DIRECTIVES = 50;

export function armorLimits(limits: GraphqlLimits, introspection: boolean) {
  return {
    maxDepth: { n: limits.maxDepth },
    maxAliases: { n: limits.maxAliases },
    costLimit: { maxCost: limits.maxCost },
    maxTokens: { n: limits.maxTokens },
    maxDirectives: { n: MAX_DIRECTIVES },
    // Field suggestions would reveal the schema even with introspection off.
    blockFieldSuggestion: { enabled: !introspection },
  };
}

/**
 * A subgraph's own limits: the gateway's, with room for what a query plan adds to what the client
 * asked (`_entities(representations:) { ... on T { … } }` nests two levels deeper and repeats some
 * key fields), so that every fetch of a query the gateway accepted is accepted here too.
 */
export function subgraphLimits(limits: GraphqlLimits): GraphqlLimits {
  return { ...limits, maxDepth: limits.maxDepth + 2, maxAliases: limits.maxAliases + 10, maxCost: limits.maxCost * 2, maxTokens: limits.maxTokens * 2 };
}
