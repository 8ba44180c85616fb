/**
 * The gateway's source of each subgraph (the GraphQLDataSource @apollo/gateway calls for every fetch
 * of a query plan), over the transport of subgraph-transport.ts.
 */
import { createRequire } from 'node:module';
import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { GraphQLError } from 'graphql';
import type { JsonAnswer } from '../lib/http/post-json.js';
import type { LoggingContext } from '../lib/graphql/errors.js';
import { GATEWAY_CREDENTIAL_HEADER } from '../lib/graphql/gateway-credential.js';
import { problem, problemOf } from '../lib/problem.js';
import { cacheHint } from './cache-hint.js';
import { parsedAnswer, type JsonPost } from './subgraph-batching.js';
import { SubgraphUnavailable } from './subgraph-instances.js';

/** What the gateway's Apollo Server knows of a request, and passes on to the subgraphs. */
export interface GatewayContext extends LoggingContext {
  authorization?: string;
  /** The request's id (`x-request-id`), passed on to the subgraphs so that their log lines of it carry it. */
  requestId?: string;
  /**
   * Whether each subgraph's answer must be begun after this request (a live feed's read, woken by an
   * append that an identical read already in flight may not see): sent with `cache-control: no-cache`,
   * which the gateway's own sharing of identical fetches honours (subgraph-transport.ts).
   */
  freshAnswer?: boolean;
}

/** What RemoteGraphQLDataSource reads from a body: JSON under a JSON media type, text otherwise. */
function answerBody(answer: JsonAnswer): unknown {
  const type = answer.headers['content-type'];
  return type?.startsWith('application/json') || type?.startsWith('application/graphql-response+json') ? parsedAnswer(answer) : answer.text;
}

const requireModule = createRequire(import.meta.url);

/**
 * The GraphQLError of graphql's CommonJS build, which @apollo/gateway (CommonJS) makes its errors
 * with; Apollo Server, loaded as ES modules, does not take it for its own and wraps it, as it did the
 * errors RemoteGraphQLDataSource threw for these statuses.
 */
const GatewayGraphQLError = (requireModule('graphql') as typeof import('graphql')).GraphQLError;

/**
 * The gateway's source of one subgraph, doing what @apollo/gateway's RemoteGraphQLDataSource does
 * for it (the same request body, headers, errors and cache hint; the GraphQLDataSource interface is
 * the gateway's public one) without its per-fetch WHATWG Request and two Headers objects, over the
 * JSON POST of subgraph-transport.ts. The caller's credentials go on, so that every subgraph checks them too, with the
 * gateway's own.
 */
export class SubgraphDataSource implements GraphQLDataSource<GatewayContext> {
  constructor(
    readonly url: string,
    private readonly post: JsonPost,
    private readonly subgraphSecret?: string,
  ) {}

  async process(options: GraphQLDataSourceProcessOptions<GatewayContext>): ReturnType<GraphQLDataSource['process']> {
    const { request } = options;
    const headers: Record<string, string> = {};
    for (const [name, value] of request.http?.headers ?? []) headers[name.toLowerCase()] = value;
    headers['content-type'] = 'application/json';
    const { authorization, requestId, freshAnswer } = (options.context as GatewayContext | undefined) ?? {};
    if (authorization) headers.authorization = authorization;
    if (requestId) headers['x-request-id'] = requestId;
    if (freshAnswer) headers['cache-control'] = 'no-cache';
    if (this.subgraphSecret) headers[GATEWAY_CREDENTIAL_HEADER] = this.subgraphSecret;
    const { query, http: _http, ...rest } = request;
    if (!query) throw new Error('Missing query');
    let answer: JsonAnswer;
    try {
      answer = await this.post(this.url, JSON.stringify({ query, ...rest }), headers);
    } catch (error) {
      throw error instanceof SubgraphUnavailable ? unavailableError(error) : error;
    }
    if (answer.status < 200 || answer.status > 299) throw this.errorFromAnswer(answer);
    const body = answerBody(answer);
    if (typeof body !== 'object' || body === null) throw new Error(`Expected JSON response body, but received: ${String(body)}`);
    // An incoming operation's fetch (not a health check or schema load) restricts its cache policy.
    const policy = 'incomingRequestContext' in options ? options.incomingRequestContext.overallCachePolicy : undefined;
    if (policy && 'restrict' in policy) policy.restrict(cacheHint(answer.headers['cache-control']));
    return body as Awaited<ReturnType<GraphQLDataSource['process']>>;
  }

  /**
   * A subgraph answers 400 when it refuses an operation's variables: a value the gateway cannot
   * check itself because it belongs to a custom scalar (an array given for a JSONObject, an instant
   * outside years 0001 to 9999 for a DateTimeISO). That is the client's mistake, so it is passed on
   * as BAD_USER_INPUT, with the problem the subgraph gave it, rather than as a gateway fault. Any
   * other status is the error RemoteGraphQLDataSource makes of it.
   */
  private errorFromAnswer(answer: JsonAnswer): Error {
    const body = answerBody(answer);
    if (answer.status === 400) {
      const first = (body as { errors?: { message?: string; extensions?: Record<string, unknown> }[] } | undefined)?.errors?.[0];
      const details = first && problemOf(first);
      return new GraphQLError(first?.message ?? `${answer.status}: ${answer.statusText}`, { extensions: { code: 'BAD_USER_INPUT', ...(details ? { problem: details } : {}) } });
    }
    const code = answer.status === 401 ? 'UNAUTHENTICATED' : answer.status === 403 ? 'FORBIDDEN' : undefined;
    return new GatewayGraphQLError(`${answer.status}: ${answer.statusText}`, {
      extensions: { response: { url: this.url, status: answer.status, statusText: answer.statusText, body }, ...(code ? { code } : {}) },
    });
  }
}

/**
 * A subgraph that could not be asked: the fields it owns are null with this error, the other
 * subgraphs' fields answer. Its problem is a 504 when the subgraph did not answer by its deadline,
 * a 503 when it cannot be reached or its circuit is open; the REST facade answers with it.
 */
function unavailableError(error: SubgraphUnavailable): GraphQLError {
  const status = error.reason === 'deadline' ? 504 : 503;
  const details = problem(status, 'SUBGRAPH_UNAVAILABLE', error.message, { subgraph: error.subgraph, reason: error.reason, retry_after: error.retryAfterSeconds });
  return new GraphQLError(error.message, { extensions: { code: 'SUBGRAPH_UNAVAILABLE', serviceName: error.subgraph, problem: details } });
}
