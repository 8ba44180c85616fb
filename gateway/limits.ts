/**
 * The graphql-armor limits every operation is held to, from the runtime configuration
 * (GRAPHQL_MAX_*): the built-in gateway (index.ts) and the Hive Gateway configuration
 * (hive-gateway.config.ts) take the same, so a replacement gateway refuses what ours refuses.
 */
import type { GraphqlLimits } from '../lib/config/runtime.js';

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
