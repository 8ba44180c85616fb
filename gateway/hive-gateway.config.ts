/**
 * Hive Gateway serving the supergraph file (`npm start` writes it) as the built-in gateway serves
 * it: on loopback unless HOST says otherwise, with the same limits from the same settings
 * (GRAPHQL_MAX_*, GRAPHQL_INTROSPECTION) refused in the same words with the same codes, the
 * caller's Authorization passed to every subgraph (and the gateway's credential, with SUBGRAPH_SECRET), no GraphiQL or landing page from a CDN, and
 * nothing reported anywhere (no Hive token is given).
 *
 *   hive-gateway supergraph .data/supergraph.graphql --config-path gateway/hive-gateway.config.ts
 *
 * Unlike ours it has no request body limit: put it behind a proxy that has one (BODY_LIMIT_BYTES,
 * 1 MiB). test/gateway/hive-gateway.test.ts runs that command.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { Kind, parse, type DocumentNode, type GraphQLError, type GraphQLSchema, type OperationDefinitionNode, type ValidationRule } from 'graphql';
import { loadRuntimeConfig } from '../lib/config/runtime.js';
import { costAnnotations, costRefusal, operationCost, operationCosts, type CostAnnotations } from '../lib/graphql/cost.js';
import { GATEWAY_CREDENTIAL_HEADER } from '../lib/graphql/gateway-credential.js';
import { armorLimits } from '../lib/graphql/limits.js';
import { formatGatewayError } from './refusals.js';

const config = loadRuntimeConfig(process.env);

/**
 * The weights of the supergraph Hive Gateway serves (`@cost`, `@listSize`; lib/graphql/cost.ts): the
 * file its command names (`supergraph <file>`), else the one `npm start` writes. Read at the first
 * request, as Hive Gateway reads the file once it has loaded this configuration.
 */
let annotations: CostAnnotations | undefined;
function supergraphAnnotations(): CostAnnotations {
  const named = process.argv.indexOf('supergraph');
  const file = named >= 0 && process.argv[named + 1] ? process.argv[named + 1]! : join(config.dataDir, 'supergraph.graphql');
  annotations ??= costAnnotations(parse(readFileSync(file, 'utf8')));
  return annotations;
}

/** The operation a request runs, as graphql-js picks it: the one named, or the only one. */
function chosenOperation(document: DocumentNode, name: string | null | undefined): OperationDefinitionNode | undefined {
  const operations = document.definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
  return name ? operations.find((operation) => operation.name?.value === name) : operations.length === 1 ? operations[0] : undefined;
}

type Validate = (schema: GraphQLSchema, document: DocumentNode, rules?: readonly ValidationRule[], ...rest: unknown[]) => readonly GraphQLError[];
type Parse = (source: unknown, options?: object) => DocumentNode;

function isGraphQLError(error: unknown): error is GraphQLError {
  return error instanceof Error && error.name === 'GraphQLError';
}

/**
 * The limits refused as the built-in gateway refuses them (gateway/apollo.ts, lib/graphql/limits.ts):
 * - armor's depth, alias and directive rules throw out of graphql-js's validate; Apollo Server
 *   answers that as a validation failure, but Hive Gateway (Yoga) would pass the bare error on with
 *   no code and status 200. Here the thrown GraphQLError becomes validate's result, which Yoga then
 *   answers as every validation error: GRAPHQL_VALIDATION_FAILED, status 400.
 * - the cost (lib/graphql/cost.ts, from the supergraph's @cost and @listSize) is checked once the
 *   operation is valid, with its variables, and refused as a validation error too.
 * - the token limit is graphql-js's own parse option, as ours has it (armor's token plugin would
 *   word it differently); a parse failure is GRAPHQL_PARSE_FAILED.
 * - the refusals are then worded as ours words them (gateway/refusals.ts): what was over which
 *   limit, the setting that raises it, and `extensions.limit`.
 * - an operation that ran is answered with `extensions.cost` {estimated, actual, max}, as ours
 *   (lib/graphql/cost.ts, costLimitPlugin).
 * Armor's errors are recognised by name and reworded in place, so this holds whichever copy of
 * graphql they come from; bench/tools links the project's, and with a copy of its own Hive Gateway
 * would also show its internal `extensions.http` on them. The cost refusal is made with the
 * project's graphql, the copy bench/tools links.
 */
function refuseAsOurGateway() {
  const explain = formatGatewayError(config.graphqlLimits);
  return {
    onParse({ parseFn, setParseFn }: { parseFn: Parse; setParseFn: (parse: Parse) => void }) {
      setParseFn((source, options) => parseFn(source, { ...options, maxTokens: config.graphqlLimits.maxTokens }));
    },
    onValidate({ validateFn, setValidationFn, context }: { validateFn: Validate; setValidationFn: (validate: Validate) => void; context: unknown }) {
      setValidationFn((schema, document, ...rest) => {
        let errors: readonly GraphQLError[];
        try {
          errors = validateFn(schema, document, ...rest);
        } catch (error) {
          if (isGraphQLError(error)) return [error];
          throw error;
        }
        // The cost needs the variables (list sizes), which Yoga keeps in the context's params.
        const params = (context as { params?: { operationName?: string | null; variables?: Record<string, unknown> | null } }).params;
        const operation = chosenOperation(document, params?.operationName);
        if (errors.length > 0 || !operation) return errors;
        const found = operationCost({ schema, document, operation, variables: params?.variables ?? null }, supergraphAnnotations());
        return found > config.graphqlLimits.maxCost ? [costRefusal(found, config.graphqlLimits.maxCost)] : errors;
      });
    },
    onExecute({ args }: { args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null; variableValues?: Record<string, unknown> | null } }) {
      return {
        onExecuteDone({ result }: { result: unknown }) {
          const operation = chosenOperation(args.document, args.operationName);
          if (!operation || !result || typeof result !== 'object' || Symbol.asyncIterator in result) return;
          const answered = result as { data?: Record<string, unknown> | null; extensions?: Record<string, unknown> };
          const costed = { schema: args.schema, document: args.document, operation, variables: args.variableValues ?? null };
          const costs = operationCosts(costed, supergraphAnnotations());
          const cost = { estimated: costs.estimated, actual: costs.actual(answered.data), max: config.graphqlLimits.maxCost };
          answered.extensions = { ...answered.extensions, cost };
        },
      };
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
    // The caller's Authorization, and the gateway's credential (SUBGRAPH_SECRET) as ours sends it: a
    // subgraph takes mutations only with it, and does not count again in its own quota of subscriptions
    // per client the streams that carry it.
    fromClientToSubgraphs: ({ request }: { request: Request }) => {
      const authorization = request.headers.get('authorization');
      return { ...(authorization ? { authorization } : {}), ...(config.subgraphSecret ? { [GATEWAY_CREDENTIAL_HEADER]: config.subgraphSecret } : {}) };
    },
  },
  plugins: () => [EnvelopArmorPlugin({ ...armorLimits(config.graphqlLimits, config.introspection), maxTokens: { enabled: false }, blockFieldSuggestion: { enabled: false } }), refuseAsOurGateway()],
};
