/**
 * Hive Gateway serving the supergraph file (`npm start` writes it) as the built-in gateway serves
 * it: on loopback unless HOST says otherwise, with the same limits from the same settings
 * (GRAPHQL_MAX_*, GRAPHQL_INTROSPECTION) refused in the same words with the same codes, the
 * caller's Authorization passed to every subgraph, no GraphiQL or landing page from a CDN, and
 * nothing reported anywhere (no Hive token is given).
 *
 *   hive-gateway supergraph .data/supergraph.graphql --config-path gateway/hive-gateway.config.ts
 *
 * Unlike ours it has no request body limit: put it behind a proxy that has one (BODY_LIMIT_BYTES,
 * 1 MiB). test/gateway/hive-gateway.test.ts runs that command.
 */
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import type { DocumentNode, GraphQLError, GraphQLSchema, ValidationRule } from 'graphql';
import { loadRuntimeConfig } from '../lib/config/runtime.js';
import { armorLimits } from '../lib/graphql/limits.js';
import { formatGatewayError } from './refusals.js';

const config = loadRuntimeConfig(process.env);

type Validate = (schema: GraphQLSchema, document: DocumentNode, rules?: readonly ValidationRule[], ...rest: unknown[]) => readonly GraphQLError[];
type Parse = (source: unknown, options?: object) => DocumentNode;

function isGraphQLError(error: unknown): error is GraphQLError {
  return error instanceof Error && error.name === 'GraphQLError';
}

/**
 * The limits refused as the built-in gateway refuses them (gateway/index.ts, lib/graphql/limits.ts):
 * - armor's depth, alias, cost and directive rules throw out of graphql-js's validate; Apollo Server
 *   answers that as a validation failure, but Hive Gateway (Yoga) would pass the bare error on with
 *   no code and status 200. Here the thrown GraphQLError becomes validate's result, which Yoga then
 *   answers as every validation error: GRAPHQL_VALIDATION_FAILED, status 400.
 * - the token limit is graphql-js's own parse option, as ours has it (armor's token plugin would
 *   word it differently); a parse failure is GRAPHQL_PARSE_FAILED.
 * - the refusals are then worded as ours words them (gateway/refusals.ts): what was over which
 *   limit, the setting that raises it, and `extensions.limit`.
 * No GraphQLError is made here (errors are recognised by name and reworded in place), so this holds
 * whichever copy of graphql armor's errors come from; bench/tools links the project's, and with a
 * copy of its own Hive Gateway would also show its internal `extensions.http` on these errors.
 */
function refuseAsOurGateway() {
  const explain = formatGatewayError(config.graphqlLimits);
  return {
    onParse({ parseFn, setParseFn }: { parseFn: Parse; setParseFn: (parse: Parse) => void }) {
      setParseFn((source, options) => parseFn(source, { ...options, maxTokens: config.graphqlLimits.maxTokens }));
    },
    onValidate({ validateFn, setValidationFn }: { validateFn: Validate; setValidationFn: (validate: Validate) => void }) {
      setValidationFn((...args) => {
        try {
          return validateFn(...args);
        } catch (error) {
          if (isGraphQLError(error)) return [error];
          throw error;
        }
      });
    },
    onResultProcess({ result }: { result: unknown }) {
      const errors = (result as { errors?: unknown[] } | null)?.errors;
      if (!Array.isArray(errors)) return;
      for (const error of errors) {
        if (!isGraphQLError(error)) continue;
        const code = error.extensions?.code;
        if (code !== 'GRAPHQL_VALIDATION_FAILED' && code !== 'GRAPHQL_PARSE_FAILED') continue;
        const explained = explain(error.toJSON(), error);
        if (explained.message === error.message) continue;
        // GraphQLError's message and extensions are plain properties: Yoga serialises the error as it is then.
        error.message = explained.message;
        (error as { extensions: object }).extensions = { ...error.extensions, ...explained.extensions };
      }
    },
  };
}

// Plain object rather than defineConfig: @graphql-hive/gateway's types would bring the DOM's
// fetch and stream types into the project's type check.
export const gatewayConfig = {
  host: config.host,
  port: config.gatewayPort,
  graphiql: false,
  landingPage: false,
  ...(config.introspection ? {} : { disableIntrospection: {} }),
  // Hive Gateway's own option: armor's plugin, loaded by Hive Gateway, so that it recognises the
  // validation errors of the graphql copy Hive Gateway uses (the project's own armor, if that copy
  // were another, would let "Did you mean" through).
  blockFieldSuggestions: !config.introspection,
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }: { request: Request }) => {
      const authorization = request.headers.get('authorization');
      return authorization ? { authorization } : {};
    },
  },
  plugins: () => [EnvelopArmorPlugin({ ...armorLimits(config.graphqlLimits, config.introspection), maxTokens: { enabled: false }, blockFieldSuggestion: { enabled: false } }), refuseAsOurGateway()],
};
