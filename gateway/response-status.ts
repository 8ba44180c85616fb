/**
 * The HTTP status of the gateway's answers as the GraphQL-over-HTTP spec has it for each response
 * type, where Apollo Server gives one status for both.
 */

/** Errors of a well-formed request that the GraphQL-over-HTTP spec answers with 200 under `application/json`. */
const REQUEST_ERRORS_AS_200 = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT']);

/**
 * The status of an answer: under the legacy `application/json` response type the GraphQL-over-HTTP
 * spec (§6.4.1) says a request that could not be parsed, validated or have its variables coerced is
 * still answered 200 with `errors`, as clients written before `application/graphql-response+json`
 * expect; Apollo Server answers 400 whatever the type. Under the new type, 400 stays.
 */
export function requestErrorStatus(status: number, contentType: string | undefined, body: string): number {
  if (status !== 400 || !contentType?.startsWith('application/json')) return status;
  try {
    const answer = JSON.parse(body) as { data?: unknown; errors?: { extensions?: { code?: unknown } }[] };
    const codes = (answer.errors ?? []).map((error) => error.extensions?.code);
    return answer.data === undefined && codes.length > 0 && codes.every((code) => typeof code === 'string' && REQUEST_ERRORS_AS_200.has(code)) ? 200 : status;
  } catch {
    return status;
  }
}
