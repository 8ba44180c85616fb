/**
 * The gateway's refusals in words a client can act on. graphql-armor labels every limit it
 * enforces `Syntax Error:` (its own wording), graphql-js words the token limit as a parse failure,
 * and Apollo Server tells a client to change its code to enable introspection. Each is answered
 * here with what was over which limit and the setting that raises it, and keeps its code; a limit
 * also carries `extensions.limit` ({setting, value, found}) for programs. An operationName that
 * names no operation is refused as the client's mistake. docs/GRAPHQL-ERRORS.md lists every code
 * with an example.
 */
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { GraphqlLimits } from '../lib/config/runtime.js';
import { formatServiceError } from '../lib/graphql/errors.js';

interface Limit {
  setting: string;
  value: number;
  found?: number;
}

/** The gateway's formatError: the services' rules (lib/graphql/errors.ts), then the refusals explained. */
export function formatGatewayError(limits: GraphqlLimits): (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError {
  const format = formatServiceError('gateway');
  const explain = explainRefusals(limits);
  return (formatted, error) => explain(format(withRequestCode(formatted), error));
}

/**
 * An operationName the document does not define: Apollo Server leaves it to the gateway's executor,
 * which throws a plain error that would be answered as an internal one. It is the client's mistake.
 */
export const unknownOperationPlugin: ApolloServerPlugin<BaseContext> = {
  async requestDidStart() {
    return {
      async didResolveOperation({ operation, request }) {
        if (operation) return;
        const detail = request.operationName ? `Unknown operation named "${request.operationName}".` : 'The document defines several operations; operationName must name one.';
        throw new GraphQLError(detail, { extensions: { code: 'OPERATION_RESOLUTION_FAILURE', http: { status: 400 } } });
      },
    };
  },
};

/**
 * Apollo Server refuses a persisted query whose hash does not match it with HTTP 400 but no code
 * (so the default INTERNAL_SERVER_ERROR), which would be answered as an internal error: it is the
 * client's mistake.
 */
function withRequestCode(formatted: GraphQLFormattedError): GraphQLFormattedError {
  if (formatted.message !== 'provided sha does not match query') return formatted;
  return { ...formatted, message: 'The persistedQuery sha256Hash is not the SHA-256 of the query sent with it.', extensions: { ...formatted.extensions, code: 'BAD_REQUEST' } };
}

function explainRefusals(limits: GraphqlLimits): (formatted: GraphQLFormattedError) => GraphQLFormattedError {
  const armor: Record<string, { what: string; setting: string }> = {
    'Query depth': { what: 'The operation nests fields {found} levels deep', setting: 'GRAPHQL_MAX_DEPTH' },
    Aliases: { what: 'The operation has {found} aliases', setting: 'GRAPHQL_MAX_ALIASES' },
    Directives: { what: 'The operation has {found} directives', setting: 'fixed' },
  };
  const explained = (formatted: GraphQLFormattedError, message: string, limit?: Limit): GraphQLFormattedError => ({
    ...formatted,
    message,
    extensions: { ...formatted.extensions, ...(limit ? { limit } : {}) },
  });

  return (formatted) => {
    const overArmor = /^Syntax Error: (Query depth|Aliases|Directives) limit of (\d+) exceeded, found ([\d.]+)\.$/.exec(formatted.message);
    if (overArmor) {
      const { what, setting } = armor[overArmor[1]!]!;
      const limit = { setting, value: Number(overArmor[2]), found: Math.ceil(Number(overArmor[3])) };
      return explained(formatted, `${what.replace('{found}', String(limit.found))}; the limit is ${limit.value} (${setting === 'fixed' ? 'fixed' : `setting ${setting}`}).`, limit);
    }
    if (/^Syntax Error: Document contains more th[ae]t? \d+ tokens\. Parsing aborted\.$/.test(formatted.message)) {
      const limit = { setting: 'GRAPHQL_MAX_TOKENS', value: limits.maxTokens };
      return explained(formatted, `The document has more than ${limit.value} tokens (names, punctuation, values); the limit is ${limit.value} (setting GRAPHQL_MAX_TOKENS).`, limit);
    }
    if (formatted.message.startsWith('GraphQL introspection is not allowed')) {
      return explained(formatted, 'Introspection (__schema, __type) is off on this gateway: its operator set GRAPHQL_INTROSPECTION=false. GRAPHQL_INTROSPECTION=true (the default) enables it.');
    }
    if (formatted.message === 'Operation batching disabled.') {
      return explained(
        formatted,
        'The gateway takes one operation per HTTP request, not a JSON array of them. Send each as its own request, or put the fields in one operation with aliases: the gateway batches what it asks each subgraph either way.',
      );
    }
    return formatted;
  };
}
