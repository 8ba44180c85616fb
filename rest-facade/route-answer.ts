/**
 * A route answered: its GraphQL operation sent to the gateway, and the data mapped back by the route
 * table into status, headers and body (streamed, empty, or JSON as the service said it).
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceName } from '../lib/config/services.js';
import { RequestProblem } from '../lib/http/request-problem.js';
import { notModified } from './conditional.js';
import type { GatewayCall, GatewaySubscription } from './gateway-calls.js';
import type { Route, RouteContext, RouteRequest, ServiceRoutes } from './route-table.js';

/** What answering a route needs of the facade around it. */
export interface RouteAnswering {
  callGateway: GatewayCall;
  subscribeGateway: GatewaySubscription;
  /** Sends the refusals gathered for a service before its admin log is read (access.ts). */
  flushRefusals(service: ServiceName): Promise<void>;
  /** The public base URL of every service, the same for every request whatever its Host (public-urls.ts). */
  publicUrls(): Record<ServiceName, string>;
}

export async function answerRoute(route: Route, table: ServiceRoutes, request: FastifyRequest, reply: FastifyReply, facade: RouteAnswering): Promise<FastifyReply> {
  const routeRequest: RouteRequest = {
    params: request.params as Record<string, string>,
    query: (request.query ?? {}) as RouteRequest['query'],
    body: request.body,
    ifNoneMatch: request.headers['if-none-match'],
    accept: request.headers.accept,
    lastEventId: request.headers['last-event-id'] as string | undefined,
  };
  const authorization = request.headers.authorization;
  const publicUrls = facade.publicUrls();
  const context: RouteContext = {
    service: table.service,
    baseUrl: publicUrls[table.service],
    publicUrls,
    routes: table.routes,
    request: routeRequest,
    graphql: (operation, more) => facade.callGateway(operation, more, authorization, request.id),
    subscribe: (operation, more) => facade.subscribeGateway(operation, more, authorization, request.id),
  };
  if (route.readsAdminLog) await facade.flushRefusals(table.service);
  let data: Record<string, unknown>;
  try {
    data = await facade.callGateway(route.operation, route.variables?.(routeRequest) ?? {}, authorization, request.id);
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
