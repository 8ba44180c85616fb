/**
 * The gateway: one GraphQL endpoint over the four subgraphs (@apollo/gateway), and GraphiQL served
 * from files installed with the project, so exploring the graph needs no network.
 */
import { createReadStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import Fastify, { type FastifyReply } from 'fastify';
import { ApolloGateway, type GraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { GraphQLError, parse } from 'graphql';
import type { GraphqlLimits } from '../lib/config/runtime.js';
import { JSON_MEDIA_TYPE, MAX_JSON_DEPTH, parseJsonBody } from '../lib/http/json-body.js';
import { RequestProblem } from '../lib/http/request-problem.js';
import { graphqlErrorHandler, refuseOtherMethods } from '../lib/http/graphql-refusals.js';
import { publicServerOptions, refuseMalformedHost } from '../lib/http/server-options.js';
import { loggingOptions, logRequests } from '../lib/ops/logging.js';
import { graphqlTracingPlugin, serverTracer, traceRequests } from '../lib/ops/tracing.js';
import { problem, problemOf } from '../lib/problem.js';
import { jsonPoster, type JsonAnswer } from '../lib/http/post-json.js';
import { noPhoneHomePlugins, subscriptionRefusalPlugin, type ListeningServer } from '../lib/graphql/subgraph-server.js';
import { faultLoggingPlugin, type LoggingContext } from '../lib/graphql/errors.js';
import { composeSupergraph, type SubgraphEndpoint } from './composition.js';
import { apolloArmor } from '../lib/graphql/limits.js';
import { costAnnotations } from '../lib/graphql/cost.js';
import { GATEWAY_CREDENTIAL_HEADER } from '../lib/graphql/gateway-credential.js';
import { formatGatewayError } from './refusals.js';
import { batchingPost, isQuery, parsedAnswer, type JsonPost } from './subgraph-batching.js';
import { operationMetricsPlugin } from '../lib/ops/graphql-metrics.js';
import type { ServerMetrics } from '../lib/ops/metrics.js';
import { closeGracefully, Operations, peerReady, registerOperations } from '../lib/ops/operations.js';

// @apollo/gateway reports usage to Apollo unless this is set before it is constructed.
process.env.APOLLO_TELEMETRY_DISABLED = '1';

export interface GatewayOptions {
  host: string;
  port: number;
  subgraphs: readonly SubgraphEndpoint[];
  /** Whether clients may introspect the composed schema (GraphiQL needs it). */
  introspection: boolean;
  /** Largest accepted request body in bytes. */
  bodyLimit: number;
  /** How long a client may take to send a whole request (REQUEST_TIMEOUT_MS). */
  requestTimeoutMs?: number;
  /** Where the composed supergraph SDL is written, for Apollo Router or Hive Gateway. */
  supergraphFile?: string;
  limits: GraphqlLimits;
  /** Sent to every subgraph as the gateway's credential (SUBGRAPH_SECRET), when configured. */
  subgraphSecret?: string;
  /** The process's metrics and shutdown state; a gateway started without them has its own. */
  operations?: Operations;
}

interface GatewayContext extends LoggingContext {
  authorization?: string;
  /** The request's id (`x-request-id`), passed on to the subgraphs so that their log lines of it carry it. */
  requestId?: string;
}

/**
 * The gateway's HTTP client to the subgraphs: a JSON POST over node:http with kept-alive sockets
 * (lib/http/post-json.ts) rather than the default make-fetch-happen (whose agent builds a stack trace
 * on every request) or Node's fetch (WHATWG Request, Headers and body streams built and torn down on
 * every call).
 *
 * Identical subgraph queries in flight at the same moment are sent once. Under load many clients
 * ask the same thing at once (a popular passport, the same cross-service page); their query plans
 * send the same fetches, which the subgraph would answer alike. Requests are shared by URL,
 * credentials and body, and only queries: a mutation is always sent once per request. The entry is
 * dropped as soon as the answer arrives, so nothing is cached beyond one round trip and every request
 * sees an answer begun after it was sent. An answer that refuses the caller is not shared: each
 * refusal is logged by the subgraph that makes it. Each caller parses the shared text itself (parsedAnswer):
 * the gateway merges subgraph data into the result it builds, so one parsed object must not serve
 * two requests.
 */
/** An answer with a refusal of the caller's credentials or role in it (or text that looks like one). */
const MAY_CARRY_REFUSAL = /"code":"(MISSING_TOKEN|INVALID_TOKEN|INSUFFICIENT_ROLE)"/;

export function sharingPost(post: JsonPost = jsonPoster()): JsonPost {
  const inFlight = new Map<string, { answer: Promise<JsonAnswer>; callers: number }>();
  return (url, body, headers = {}) => {
    // Anything but a query (a mutation) is sent as it is.
    if (!isQuery(body)) return post(url, body, headers);
    const key = `${url}\n${headers.authorization ?? ''}\n${body}`;
    const shared = inFlight.get(key);
    if (shared) {
      shared.callers += 1;
      // A refusal is each caller's own: the subgraph logs every refused admin request (lib/audit/refusal-log.ts), so a caller whose shared answer may carry one asks again by itself.
      return shared.answer.then((answer) => (MAY_CARRY_REFUSAL.test(answer.text) ? post(url, body, headers) : answer));
    }
    const entry = { callers: 1, answer: undefined as unknown as Promise<JsonAnswer> };
    entry.answer = post(url, body, headers).then(
      (answer) => {
        inFlight.delete(key);
        // Shared: its text is made before any caller can take (and change) a batch's parsed value.
        if (entry.callers > 1) void answer.text;
        return answer;
      },
      (error: unknown) => {
        inFlight.delete(key);
        throw error;
      },
    );
    inFlight.set(key, entry);
    return entry.answer;
  };
}

/**
 * A subgraph run as several replicas (processes on one PostgreSQL, each serving the same schema) gets
 * its requests in turn. Replicas keep no state between requests that another could miss: every read
 * and write goes to the database, whose locks order concurrent writes (docs/SCALING.md).
 */
export function roundRobin(replicas: readonly string[], post: JsonPost): JsonPost {
  let next = 0;
  return (_url, body, headers) => post(replicas[next++ % replicas.length]!, body, headers);
}

/** Times each request to one subgraph, and counts those that fail (by network error code or HTTP status). */
export function timedSubgraphPost(metrics: ServerMetrics, subgraph: string, post: JsonPost): JsonPost {
  return async (url, body, headers) => {
    const started = performance.now();
    try {
      const answer = await post(url, body, headers);
      const ok = answer.status >= 200 && answer.status <= 299;
      metrics.subgraphFetchDone(subgraph, ok ? 'success' : 'error', (performance.now() - started) / 1000, ok ? undefined : String(answer.status));
      return answer;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      metrics.subgraphFetchDone(subgraph, 'error', (performance.now() - started) / 1000, typeof code === 'string' && /^E[A-Z_]+$/.test(code) ? code : 'network');
      throw error;
    }
  };
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
 * JSON POST above. The caller's credentials go on, so that every subgraph checks them too, with the
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
    const { authorization, requestId } = (options.context as GatewayContext | undefined) ?? {};
    if (authorization) headers.authorization = authorization;
    if (requestId) headers['x-request-id'] = requestId;
    if (this.subgraphSecret) headers[GATEWAY_CREDENTIAL_HEADER] = this.subgraphSecret;
    const { query, http: _http, ...rest } = request;
    if (!query) throw new Error('Missing query');
    const answer = await this.post(this.url, JSON.stringify({ query, ...rest }), headers);
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

/** The cache hint a subgraph's Cache-Control header gives, as RemoteGraphQLDataSource makes it: uncacheable unless it says max-age. */
function cacheHint(header: string | undefined): { maxAge: number; scope?: 'PUBLIC' | 'PRIVATE' } {
  // Its directives, as RemoteGraphQLDataSource reads them: name=value (quotes dropped) or a bare name.
  const directives: Record<string, string | true> = {};
  for (const part of header?.trim().split(/\s*,\s*/) ?? []) {
    const [name, value] = part.split(/\s*=\s*/, 2) as [string, string | undefined];
    directives[name] = value === undefined ? true : value.replace(/^"|"$/g, '');
  }
  const maxAge = directives['max-age'];
  return {
    maxAge: typeof maxAge === 'string' && /^[0-9]+$/.test(maxAge) ? Number(maxAge) : 0,
    ...(directives.private === true ? { scope: 'PRIVATE' as const } : {}),
    ...(directives.public === true ? { scope: 'PUBLIC' as const } : {}),
  };
}

const graphiqlDirectory = join(dirname(fileURLToPath(import.meta.url)), 'graphiql');
const packageFile = (name: string, file: string) => join(dirname(requireModule.resolve(`${name}/package.json`)), file);
/** The only files GraphiQL's page loads, each from an installed package. */
const GRAPHIQL_ASSETS: Record<string, { file: string; type: string }> = {
  'graphiql.min.css': { file: packageFile('graphiql', 'graphiql.min.css'), type: 'text/css; charset=utf-8' },
  'graphiql.min.js': { file: packageFile('graphiql', 'graphiql.min.js'), type: 'text/javascript; charset=utf-8' },
  'react.production.min.js': { file: packageFile('react', 'umd/react.production.min.js'), type: 'text/javascript; charset=utf-8' },
  'react-dom.production.min.js': { file: packageFile('react-dom', 'umd/react-dom.production.min.js'), type: 'text/javascript; charset=utf-8' },
};

export interface RunningGateway extends ListeningServer {
  graphqlUrl: string;
  graphiqlUrl: string;
  supergraphSdl: string;
}

/**
 * An operationName the document does not define: Apollo Server leaves it to the gateway's executor,
 * which throws a plain error that would be answered as an internal one. It is the client's mistake.
 */
const unknownOperationPlugin: ApolloServerPlugin<GatewayContext> = {
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

/** Errors of a well-formed request that the GraphQL-over-HTTP spec answers with 200 under `application/json`. */
const REQUEST_ERRORS_AS_200 = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT']);

/**
 * The status of an answer: under the legacy `application/json` response type the GraphQL-over-HTTP
 * spec (§6.4.1) says a request that could not be parsed, validated or have its variables coerced is
 * still answered 200 with `errors`, as clients written before `application/graphql-response+json`
 * expect; Apollo Server answers 400 whatever the type. Under the new type, 400 stays.
 */
function requestErrorStatus(status: number, contentType: string | undefined, body: string): number {
  if (status !== 400 || !contentType?.startsWith('application/json')) return status;
  try {
    const answer = JSON.parse(body) as { data?: unknown; errors?: { extensions?: { code?: unknown } }[] };
    const codes = (answer.errors ?? []).map((error) => error.extensions?.code);
    return answer.data === undefined && codes.length > 0 && codes.every((code) => typeof code === 'string' && REQUEST_ERRORS_AS_200.has(code)) ? 200 : status;
  } catch {
    return status;
  }
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const supergraphSdl = await composeSupergraph(options.subgraphs);
  if (options.supergraphFile) {
    // The data folder of a gateway run on its own may not exist yet.
    await mkdir(dirname(options.supergraphFile), { recursive: true });
    await writeFile(options.supergraphFile, supergraphSdl);
  }
  const operations = options.operations ?? new Operations();
  const metrics = operations.metrics.forServer('gateway');
  // Made before ApolloGateway, whose spans go to the gateway's provider (lib/ops/tracing.ts).
  const tracer = serverTracer('gateway');
  const subgraphPost = sharingPost(batchingPost(jsonPoster({ tracer })));
  const gateway = new ApolloGateway({
    supergraphSdl,
    buildService: ({ name, url }) => {
      const replicas = options.subgraphs.find((subgraph) => subgraph.name === name)?.replicas ?? [];
      const post = replicas.length > 1 ? roundRobin(replicas, subgraphPost) : subgraphPost;
      // With METRICS=off the subgraph fetches are not timed at all.
      return new SubgraphDataSource(url!, metrics.enabled ? timedSubgraphPost(metrics, name, post) : post, options.subgraphSecret);
    },
  });
  const armor = apolloArmor<GatewayContext>(options.limits, options.introspection, costAnnotations(parse(supergraphSdl)));
  const formatError = formatGatewayError(options.limits);
  const apollo = new ApolloServer<GatewayContext>({
    gateway,
    plugins: [
      ...noPhoneHomePlugins(),
      operationMetricsPlugin(metrics),
      faultLoggingPlugin<GatewayContext>(formatError),
      ...armor.plugins,
      unknownOperationPlugin,
      subscriptionRefusalPlugin<GatewayContext>(),
      ...(tracer ? [graphqlTracingPlugin<GatewayContext>(tracer)] : []),
    ],
    parseOptions: armor.parseOptions,
    validationRules: armor.validationRules,
    allowBatchedHttpRequests: false,
    // Apollo's CSRF prevention refuses a GET without a preflight header. It guards cookie sessions;
    // here every credential is a bearer token a browser never attaches by itself, and GET runs
    // queries only, so plain GETs (persisted queries, HTTP caches, the spec's URL-encoded form) are served.
    csrfPrevention: false,
    formatError,
    includeStacktraceInErrorResponses: false,
    // The process owns its signals (bin/lifecycle.ts) and stops every part in order.
    stopOnTerminationSignals: false,
    introspection: options.introspection,
  });
  await apollo.start();

  const app = Fastify({ ...publicServerOptions(options), ...loggingOptions('gateway'), exposeHeadRoutes: true });
  if (tracer) traceRequests(app, tracer);
  logRequests(app);
  refuseMalformedHost(app);
  // The gateway listens once the supergraph is composed; ready then means every subgraph replica is ready.
  const subgraphReadiness = options.subgraphs.flatMap(({ name, url, replicas }) =>
    (replicas?.length ? replicas : [url]).map((replica, index, all) => [all.length > 1 ? `${name}#${index + 1}` : name, peerReady(new URL('/readyz', replica).href, `the ${name} subgraph`)] as const),
  );
  registerOperations(app, operations, 'gateway', Object.fromEntries(subgraphReadiness));
  app.removeAllContentTypeParsers();
  // Variables nested thousands deep overflow the stack when sent on to a subgraph (a 500). The limit
  // is the facade's, counted inside the envelope {"variables": {"name": …}}.
  app.addContentTypeParser(JSON_MEDIA_TYPE, { parseAs: 'buffer' }, (_request, raw: Buffer, done) => {
    try {
      done(null, raw.length ? parseJsonBody(raw, MAX_JSON_DEPTH + 2) : undefined);
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  // A body of another media type is not a GraphQL request; a form or a text/plain body is also what a
  // cross-site page could send without a preflight (CSRF prevention is off above).
  app.addContentTypeParser('*', (_request, _payload, done) => done(new RequestProblem(problem(415, 'UNSUPPORTED_MEDIA_TYPE', 'A POST to /graphql needs content-type: application/json.')), undefined));
  app.setErrorHandler(graphqlErrorHandler('gateway', options.bodyLimit));
  app.setNotFoundHandler((_request, reply) => reply.code(404).type('application/json; charset=utf-8').send(Buffer.from('{"error":"not found"}')));

  const serveGraphql = fastifyApolloHandler(apollo, { context: async (request) => ({ authorization: request.headers.authorization, requestId: request.id, log: request.log }) });
  app.route({
    method: ['GET', 'POST'],
    url: '/graphql',
    exposeHeadRoute: false,
    handler: async (request, reply) => {
      // The integration types its route as answering strings; this route also rewrites the status.
      const body = await serveGraphql.call(app, request as never, reply as never);
      return typeof body === 'string' ? reply.code(requestErrorStatus(reply.statusCode, reply.getHeader('content-type') as string | undefined, body)).send(body) : body;
    },
  });
  // Apollo Server names the methods /graphql takes; every other one is refused the same way.
  refuseOtherMethods(app, '/graphql');
  const sendFile = (reply: FastifyReply, file: string, type: string) =>
    reply.type(type).headers({ 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' }).send(createReadStream(file));
  for (const path of ['/', '/graphiql']) app.get(path, async (_request, reply) => reply.redirect('/graphiql/'));
  app.get('/graphiql/', async (_request, reply) => sendFile(reply, join(graphiqlDirectory, 'index.html'), 'text/html; charset=utf-8'));
  app.get('/graphiql/graphiql.js', async (_request, reply) => sendFile(reply, join(graphiqlDirectory, 'graphiql.js'), 'text/javascript; charset=utf-8'));
  for (const [name, asset] of Object.entries(GRAPHIQL_ASSETS)) app.get(`/graphiql/assets/${name}`, async (_request, reply) => sendFile(reply, asset.file, asset.type));

  await app.listen({ port: options.port, host: options.host });
  const { port } = app.server.address() as AddressInfo;
  const base = `http://${options.host}:${port}`;
  return {
    url: base,
    graphqlUrl: `${base}/graphql`,
    graphiqlUrl: `${base}/graphiql/`,
    supergraphSdl,
    async stop() {
      await closeGracefully(app, operations);
      await apollo.stop();
    },
  };
}
