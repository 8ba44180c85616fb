/**
 * The REST facade on Fastify: each service's route table becomes Fastify routes under the service's
 * prefix, whose schemas validate requests (validation.ts) and make the OpenAPI document
 * (@fastify/swagger, openapi.ts). A route sends its GraphQL operation to the gateway and maps the
 * answer back; every refusal, from the framework or a service, is an RFC 9457 problem.
 */
import { METHODS } from 'node:http';
import { Readable } from 'node:stream';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { type FieldNode, Kind, type OperationDefinitionNode, parse } from 'graphql';
import { challengeOf, identify, refusalOf, type AccessTokens, type Caller, type Refusal } from '../lib/auth/tokens.js';
import type { RefusalsOfAKind } from '../lib/audit/refusal-log.js';
import { refusalReportKey, signRefusalReport } from '../lib/audit/refusal-report.js';
import type { ServiceName } from '../lib/config/services.js';
import type { ListeningServer } from '../lib/graphql/subgraph-server.js';
import { jsonPoster, type JsonAnswer } from '../lib/http/post-json.js';
import { problem, type Problem } from '../lib/problem.js';
import { notModified } from './conditional.js';
import { RefusalReports } from './refusal-reports.js';
import { JSON_MEDIA_TYPE, parseJsonBody } from '../lib/http/json-body.js';
import { openApiOptions, routeSchema, SHARED_SCHEMAS } from './openapi.js';
import { PROBLEM_MEDIA_TYPE, RequestProblem } from '../lib/http/request-problem.js';
import { drainRefusedBody, publicServerOptions, refuseMalformedHost } from '../lib/http/server-options.js';
import { loggingOptions, logRequests, serverLogger } from '../lib/ops/logging.js';
import { serverTracer, traceRequests } from '../lib/ops/tracing.js';
import { problemFromGraphqlErrors, problemHeaders } from './problems.js';
import { facadeUrls } from './public-urls.js';
import type { Route, RouteContext, RouteRequest, ServiceRoutes } from './route-table.js';
import { validatorCompiler } from './validation.js';
import { verifyPageHandler } from './verify-page.js';
import { closeGracefully, Operations, peerReady, registerOperations } from '../lib/ops/operations.js';

export interface FacadeMount {
  service: ServiceName;
  port: number;
  /** Path prefix of the service's base address on that port: `/trust`, or `` for the whole port. */
  prefix: string;
}

export interface FacadeOptions {
  host: string;
  mounts: readonly FacadeMount[];
  /** Configured public base URLs (RuntimeConfig.publicUrls); a service without one is named where the facade serves it (public-urls.ts). */
  publicUrls?: Partial<Record<ServiceName, string>>;
  tables: Record<ServiceName, ServiceRoutes>;
  gatewayUrl: string;
  tokens: AccessTokens;
  bodyLimit: number;
  /** How long a client may take to send a whole request (default: lib/http/server-options.ts). */
  requestTimeoutMs?: number;
  /** The process's metrics and shutdown state; a facade started without them has its own. */
  operations?: Operations;
}

export interface RunningFacade extends ListeningServer {
  /** Base URL of each service as mounted. */
  baseUrls: Record<ServiceName, string>;
}

const tooLarge = (bodyLimit: number) => new RequestProblem(problem(413, 'BODY_TOO_LARGE', `The body exceeds ${bodyLimit} bytes.`, { limit: bodyLimit }));

/**
 * Who is refused a route, and why, if anyone is: every route with a role refuses here, in
 * `onRequest`, before its query, content type or body is read, so that an anonymous or
 * under-privileged caller learns nothing about the operation (DESIGN: authentication before parsing).
 */
function credentialRefusal(route: Route, authorization: string | undefined, tokens: AccessTokens): { caller: Caller; refusal: Refusal } | undefined {
  if (!route.role) return undefined;
  const caller = identify(tokens, authorization);
  const refusal = refusalOf(caller, [route.role]);
  return refusal ? { caller, refusal } : undefined;
}

function refusalProblem(refusal: Refusal): RequestProblem {
  const challenge = challengeOf(refusal);
  return new RequestProblem(problem(refusal.status, refusal.code, refusal.detail), challenge ? { 'www-authenticate': challenge } : {});
}

/** The field of the graph a route's operation runs (below the service's root field for queries), as the admin log names actions. */
function actionOf(operation: string, service: ServiceName): string {
  const definition = parse(operation).definitions.find((node): node is OperationDefinitionNode => node.kind === Kind.OPERATION_DEFINITION)!;
  const field = definition.selectionSet.selections[0] as FieldNode;
  return field.name.value === service ? (field.selectionSet!.selections[0] as FieldNode).name.value : field.name.value;
}

/** Fastify's own refusals (content type, size, framework) as the problems the facade documents. */
function problemOfFrameworkError(error: { code?: string; statusCode?: number; message: string }, bodyLimit: number): RequestProblem | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return tooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new RequestProblem(problem(415, 'UNSUPPORTED_MEDIA_TYPE', 'The body must be application/json.'), { 'accept-post': 'application/json' });
    case 'FST_ERR_BAD_URL':
      return new RequestProblem(problem(400, 'MALFORMED_PATH', 'The path is not validly percent-encoded.'));
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return new RequestProblem(problem(error.statusCode, 'BAD_REQUEST', error.message));
  return undefined;
}

/**
 * Sends a problem as the client gets it: its type an absolute link into /docs/problems at the
 * request's public origin (`origin`, public-urls.ts), its instance the path asked.
 */
const problemSender = (origin: (request: FastifyRequest) => string) =>
  function sendProblem(request: FastifyRequest, reply: FastifyReply, details: Problem, headers: Record<string, string> = {}): FastifyReply {
    const instance = request.url.split('?')[0];
    const type = new URL(details.type, origin(request)).href;
    return reply
      .code(details.status)
      .headers(headers)
      .type(PROBLEM_MEDIA_TYPE)
      .send(Buffer.from(JSON.stringify({ ...details, type, instance })));
  };

/** Every method Node parses except CONNECT (which names no path), so each gets 405 where it does not apply. */
const OTHER_METHODS = METHODS.filter((method) => method !== 'CONNECT');

/** A body sent as it is produced; HEAD sends an empty stream, which Fastify's HEAD handling ends without touching content-length. */
function streamedBody(request: FastifyRequest, body: AsyncIterable<Uint8Array>): Readable {
  return Readable.from(request.method === 'HEAD' ? [] : reportingFailure(request, body));
}

/**
 * A body that fails halfway (a page the gateway could not answer) has its status and first bytes
 * sent already: Fastify cuts the connection short, the only honest answer left, so that the client
 * sees an unfinished transfer rather than a document that ends. The failure is logged here, since
 * Fastify does not log a stream's failure.
 */
async function* reportingFailure(request: FastifyRequest, body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    yield* body;
  } catch (error) {
    request.log.error({ err: error instanceof RequestProblem ? error.details : error, method: request.method, path: request.url.split('?')[0] }, 'answer cut short');
    throw error;
  }
}

export async function startFacade(options: FacadeOptions): Promise<RunningFacade> {
  // Kept-alive sockets to the gateway, over node:http rather than fetch (see lib/http/post-json.ts).
  const tracer = serverTracer('facade');
  const postToGateway = jsonPoster({ tracer });
  const operations = options.operations ?? new Operations();
  const readiness = { gateway: peerReady(new URL('/readyz', options.gatewayUrl).href, 'the gateway') };
  /** `requestId`: the request's own, passed on (`x-request-id`) so that every server's log lines of it carry it, traced or not. */
  async function callGateway(operation: string, variables: Record<string, unknown>, authorization: string | undefined, requestId?: string) {
    let answer: JsonAnswer;
    const headers: Record<string, string> = requestId ? { 'x-request-id': requestId } : {};
    if (authorization) headers.authorization = authorization;
    try {
      answer = await postToGateway(options.gatewayUrl, JSON.stringify({ query: operation, variables }), headers);
    } catch {
      throw new RequestProblem(problem(503, 'GATEWAY_UNAVAILABLE', 'The GraphQL gateway does not answer.'), { 'retry-after': '5' });
    }
    let payload: { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };
    try {
      payload = JSON.parse(answer.text);
    } catch {
      payload = {};
    }
    if (payload.errors?.length) {
      const details = problemFromGraphqlErrors(payload.errors);
      throw new RequestProblem(details, problemHeaders(details));
    }
    if (!payload.data) throw new RequestProblem(problem(502, 'BAD_GATEWAY_ANSWER', `The gateway answered ${answer.status} without data.`));
    return payload.data;
  }

  /**
   * A write or admin operation refused here never reaches its service, which keeps every refused
   * write and admin request in its admin log: the refusals are gathered and reported to it, signed,
   * a few times a second (refusal-reports.ts). A platform without tokens has no key to sign them
   * with (every write is refused there): its refusals are not reported.
   */
  const reportKey = refusalReportKey(options.tokens);
  const refusalReports = new RefusalReports(async (service: ServiceName, refusals: RefusalsOfAKind[]) => {
    try {
      await callGateway(
        `mutation ReportRefusals($report: String!, $signature: String!) { ${service}ReportRefusals(report: $report, signature: $signature) }`,
        { ...signRefusalReport(reportKey!, refusals) },
        undefined,
      );
    } catch (error) {
      const count = refusals.reduce((sum, kind) => sum + kind.count, 0);
      serverLogger('facade').error({ err: error instanceof RequestProblem ? error.details : error }, `the ${service} service did not take a report of ${count} refusals; it is sent again shortly`);
      throw error;
    }
  });
  function reportRefusal(service: ServiceName, action: string, { caller, refusal }: { caller: Caller; refusal: Refusal }): void {
    if (!reportKey) return;
    const { principal } = caller;
    refusalReports.add(service, { actor: principal?.name ?? 'anonymous', role: principal?.role ?? 'none', action, outcome: refusal.code, status: refusal.status, detail: refusal.detail });
  }

  /** The public base URL of every service, the same for every request whatever its Host (public-urls.ts). */
  const urls = facadeUrls(options, (port) => ports.get(port) ?? port);
  const sendProblem = problemSender((request) => urls.problemOrigin(request.socket.localPort, request.url.split('?')[0]!));

  async function answer(route: Route, table: ServiceRoutes, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const routeRequest: RouteRequest = {
      params: request.params as Record<string, string>,
      query: (request.query ?? {}) as RouteRequest['query'],
      body: request.body,
      ifNoneMatch: request.headers['if-none-match'],
      accept: request.headers.accept,
    };
    const authorization = request.headers.authorization;
    const publicUrls = urls.services();
    const context: RouteContext = {
      service: table.service,
      baseUrl: publicUrls[table.service],
      publicUrls,
      routes: table.routes,
      request: routeRequest,
      graphql: (operation, more) => callGateway(operation, more, authorization, request.id),
    };
    if (route.readsAdminLog) await refusalReports.flush(table.service);
    let data: Record<string, unknown>;
    try {
      data = await callGateway(route.operation, route.variables?.(routeRequest) ?? {}, authorization, request.id);
    } catch (error) {
      // A route may add to a service's problem what only the facade knows (e.g. the URL of a passport it names).
      if (route.problem && error instanceof RequestProblem) throw new RequestProblem(route.problem(error.details, context), error.headers);
      throw error;
    }
    const result = route.result(data, context);
    const status = result.status ?? 200;
    const headers = result.headers ?? {};
    const unchanged = notModified(request.method, request.headers['if-none-match'], status, headers);
    if (unchanged) return reply.code(304).headers(unchanged).send();
    if (result.stream) return reply.code(status).type('application/octet-stream').headers(headers).send(streamedBody(request, result.stream));
    if (result.empty) return reply.code(status).headers(headers).send();
    return reply
      .code(status)
      .type('application/json; charset=utf-8')
      .headers(headers)
      .send(result.raw ?? Buffer.from(JSON.stringify(result.body ?? null)));
  }

  /** One service's routes under its prefix, with its OpenAPI document and its own 404 and 405s. */
  async function mountService(instance: FastifyInstance, table: ServiceRoutes, prefix: string): Promise<() => unknown> {
    await instance.register(swagger, openApiOptions(table, prefix) as never);
    const methodsByPath = new Map<string, Set<string>>();
    for (const route of table.routes) {
      const url = route.path.replace(/\{(\w+)\}/g, ':$1');
      const action = route.role && actionOf(route.operation, table.service);
      methodsByPath.set(url, (methodsByPath.get(url) ?? new Set()).add(route.method));
      instance.route({
        method: route.method,
        url,
        schema: routeSchema(route),
        // A declared size over the limit, then credentials, before anything else is read: a refused
        // client's query and body are never parsed (the body is read and thrown away, so the client
        // reads the refusal instead of a reset).
        onRequest: async (request, reply) => {
          let refused: RequestProblem | undefined;
          if (Number(request.headers['content-length']) > options.bodyLimit) refused = tooLarge(options.bodyLimit);
          else {
            const denied = credentialRefusal(route, request.headers.authorization, options.tokens);
            if (denied) reportRefusal(table.service, action!, denied);
            refused = denied && refusalProblem(denied.refusal);
          }
          if (!refused) return;
          drainRefusedBody(request.raw, reply);
          return sendProblem(request, reply, refused.details, refused.headers);
        },
        handler: (request, reply) => answer(route, table, request, reply),
      });
    }
    for (const [url, declared] of methodsByPath) {
      const allow = declared.has('GET') ? [...declared, 'HEAD'] : [...declared];
      instance.route({
        method: OTHER_METHODS.filter((method) => !allow.includes(method)),
        url,
        schema: { hide: true } as never,
        onRequest: async (request, reply) => {
          const relative = request.url.split('?')[0]!.slice(prefix.length) || '/';
          return sendProblem(request, reply, problem(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${relative}; allowed: ${allow.join(', ')}.`), { allow: allow.join(', ') });
        },
        handler: async () => undefined,
      });
    }
    instance.setNotFoundHandler((request, reply) => {
      const relative = request.url.split('?')[0]!.slice(prefix.length) || '/';
      return sendProblem(request, reply, problem(404, 'NOT_FOUND', `The ${table.service} service has no resource at ${relative}.`));
    });
    return () => instance.swagger();
  }

  const verifyPage = verifyPageHandler({ gatewayUrl: options.gatewayUrl });
  const documents = new Map<ServiceName, () => unknown>();
  // Rendered (markdown-it loaded) when first asked for: most starts never serve it.
  let problems: Promise<string> | undefined;
  const byPort = new Map<number, FacadeMount[]>();
  for (const mount of options.mounts) byPort.set(mount.port, [...(byPort.get(mount.port) ?? []), mount]);

  async function buildPortServer(mounts: readonly FacadeMount[]): Promise<FastifyInstance> {
    const app = Fastify({
      ...publicServerOptions(options),
      ...loggingOptions('facade'),
      // Ids are the services' to judge (404), however long; the header limit bounds a request line.
      routerOptions: { ignoreTrailingSlash: true, maxParamLength: 16_384 },
      exposeHeadRoutes: true,
      frameworkErrors: (error, request, reply) => {
        const refused = problemOfFrameworkError(error, options.bodyLimit) ?? new RequestProblem(problem(400, 'MALFORMED_REQUEST', error.message));
        return sendProblem(request, reply, refused.details, refused.headers);
      },
    });
    if (tracer) traceRequests(app, tracer);
    logRequests(app);
    refuseMalformedHost(app);
    registerOperations(app, operations, 'facade', readiness);
    for (const method of OTHER_METHODS) if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
    for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
    app.setValidatorCompiler(validatorCompiler);
    // Answers are serialized by the routes (byte for byte what the services said); response schemas document them.
    app.setSerializerCompiler(() => (data) => JSON.stringify(data));
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(JSON_MEDIA_TYPE, { parseAs: 'buffer' }, (request, raw: Buffer, done) => {
      // A POST that takes no body ignores an empty one, and refuses one that is not JSON.
      if (raw.length === 0 && !request.routeOptions.schema?.body) return done(null, undefined);
      try {
        done(null, parseJsonBody(raw));
      } catch (error) {
        done(error as Error, undefined);
      }
    });
    app.addContentTypeParser('*', (request, payload, done) => {
      if (request.routeOptions.schema?.body) return done(Object.assign(new Error('unsupported media type'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }), undefined);
      payload.resume();
      payload.on('end', () => done(null, undefined));
    });
    app.setErrorHandler((error, request, reply) => {
      drainRefusedBody(request.raw, reply);
      const refused = error instanceof RequestProblem ? error : problemOfFrameworkError(error as Error & { code?: string; statusCode?: number }, options.bodyLimit);
      if (refused) return sendProblem(request, reply, refused.details, refused.headers);
      request.log.error({ err: error }, 'internal error');
      return sendProblem(request, reply, problem(500, 'INTERNAL_ERROR', 'The REST facade failed to answer; the failure is logged.'));
    });
    // A service mounted at the port's root answers its own 404s there.
    if (!mounts.some((mount) => mount.prefix.replace(/\/+$/, '') === '')) {
      app.setNotFoundHandler((request, reply) => sendProblem(request, reply, problem(404, 'NOT_FOUND', `No service is mounted at ${request.url.split('?')[0]}.`)));
    }
    // The verification page (verify-page.ts) answers its own paths; others under /verify are 404s.
    for (const url of ['/verify', '/verify/*']) {
      app.get(url, { schema: { hide: true } as never }, async (request, reply) => {
        const page = await verifyPage(request.url.split('?')[0]!, request.headers['if-none-match']);
        if (!page) return sendProblem(request, reply, problem(404, 'NOT_FOUND', `The verification page has no file at ${request.url.split('?')[0]}.`));
        return reply.code(page.status).headers(page.headers).send(page.body);
      });
      app.route({
        method: OTHER_METHODS.filter((method) => method !== 'GET' && method !== 'HEAD'),
        url,
        schema: { hide: true } as never,
        handler: (request, reply) =>
          sendProblem(request, reply, problem(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on the verification page; allowed: GET, HEAD.`), { allow: 'GET, HEAD' }),
      });
    }
    app.get('/docs/problems', { schema: { hide: true } as never }, async (_request, reply) => {
      problems ??= import('./problem-page.js').then(({ problemPage }) => problemPage());
      return reply
        .type('text/html; charset=utf-8')
        .headers({ 'content-security-policy': "default-src 'none'", 'cache-control': 'public, max-age=3600' })
        .send(await problems);
    });
    app.get('/docs/:service/openapi.json', { schema: { hide: true } as never }, async (request, reply) => {
      const service = (request.params as { service: string }).service as ServiceName;
      const mount = options.mounts.find((candidate) => candidate.service === service);
      const document = documents.get(service);
      if (!mount || !document) return sendProblem(request, reply, problem(404, 'NOT_FOUND', `No service is named ${service}.`));
      const served = { ...(document() as Record<string, unknown>), servers: [{ url: urls.services()[service] }] };
      return reply.type('application/openapi+json').send(Buffer.from(JSON.stringify(served)));
    });
    for (const mount of mounts) {
      const prefix = mount.prefix.replace(/\/+$/, '');
      await app.register(
        async (instance) => {
          documents.set(mount.service, await mountService(instance, options.tables[mount.service], prefix));
        },
        { prefix },
      );
    }
    return app;
  }

  /** Configured port → bound port (they differ when 0 asks for any free port). */
  const ports = new Map<number, number>();
  const servers: FastifyInstance[] = [];
  for (const [port, mounts] of byPort) {
    const app = await buildPortServer(mounts);
    servers.push(app);
    await app.listen({ port, host: options.host });
    ports.set(port, app.server.address() !== null && typeof app.server.address() === 'object' ? (app.server.address() as { port: number }).port : port);
  }
  const baseUrls = Object.fromEntries(options.mounts.map((mount) => [mount.service, `http://${options.host}:${ports.get(mount.port)}${mount.prefix}`])) as Record<ServiceName, string>;
  return {
    url: `http://${options.host}:${ports.get(options.mounts[0]!.port)}`,
    baseUrls,
    async stop() {
      await Promise.all(servers.map((app) => closeGracefully(app, operations)));
      await refusalReports.flush();
    },
  };
}
