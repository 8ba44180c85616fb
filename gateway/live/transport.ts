/**
 * Subscriptions at the gateway's /graphql over the two protocols clients use: graphql-ws (a WebSocket
 * upgrade of GET /graphql, subprotocol `graphql-transport-ws`, through @fastify/websocket, so the
 * upgrade passes the server's edge plugins like any request: request ids, the malformed-Host and
 * shutdown refusals) and GraphQL over Server-Sent Events (graphql-sse, distinct connections mode: a
 * GET or POST with `Accept: text/event-stream`). Both check and run a subscription the same way
 * (live-subscription.ts), with the caller's credentials as given when the connection opened.
 */
import fastifyWebsocket from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createRequire } from 'node:module';
import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import { createHandler as createSseHandler } from 'graphql-sse/lib/use/fastify';
import type { Context as WsContext } from 'graphql-ws';
import { makeHandler as makeWsHandler } from 'graphql-ws/use/@fastify/websocket';
import type { GatewayContext } from '../data-source.js';
import type { LiveSubscriptions, PlannedSubscription } from './live-subscription.js';

/** What a subscription carries from its connection to its reads. */
interface SubscriptionContext extends Record<PropertyKey, unknown> {
  planned: PlannedSubscription;
  caller: GatewayContext;
}

/** WebSocket close code 1012 (Service Restart): the client reconnects, and resumes from its cursor. */
export const SERVICE_RESTART = 1012;

/** The Authorization a graphql-ws client gives in its connection_init payload (`authorization` or `headers.authorization`), else the upgrade request's. */
function connectionAuthorization(payload: Record<string, unknown> | undefined, request: FastifyRequest): string | undefined {
  const given = payload?.authorization ?? payload?.Authorization ?? (payload?.headers as Record<string, unknown> | undefined)?.authorization;
  return typeof given === 'string' ? given : request.headers.authorization;
}

/**
 * The GraphQLError graphql-ws takes refusals as (it checks with instanceof): that of the graphql Node
 * loads for it, the CommonJS build, which a bundler or test runner may not give this module.
 */
const { GraphQLError } = createRequire(import.meta.url)('graphql') as typeof import('graphql');
const asErrors = (formatted: readonly GraphQLFormattedError[]) => formatted.map((error) => new GraphQLError(error.message, { extensions: error.extensions ?? {} }));

/** Whether a request asks for GraphQL over SSE (graphql-sse compares the header whole). */
export const asksForEventStream = (request: FastifyRequest) => request.headers.accept === 'text/event-stream';

export interface LiveTransport {
  /** Serves a request for an event stream (asksForEventStream). */
  serveEventStream(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** The WebSocket handler of GET /graphql (@fastify/websocket's `wsHandler`). */
  wsHandler: ReturnType<typeof makeWsHandler>;
}

/** Registers @fastify/websocket on the gateway's server; the routes take the handlers returned. */
export async function liveTransport(app: FastifyInstance, live: LiveSubscriptions, options: { maxPayload: number }): Promise<LiveTransport> {
  const eventStreams = new Set<FastifyReply>();
  await app.register(fastifyWebsocket, {
    options: { maxPayload: options.maxPayload },
    // On shutdown each client is told to reconnect (to this gateway restarted, or another), and resumes from its cursor.
    preClose(done) {
      for (const socket of this.websocketServer.clients) socket.close(SERVICE_RESTART, 'The gateway is restarting; reconnect and resume after your last cursor.');
      for (const reply of eventStreams) reply.raw.end('retry: 1000\n\n');
      done();
    },
  });

  const authorizations = new WeakMap<WsContext, string | undefined>();
  const wsHandler = makeWsHandler({
    onConnect(ctx) {
      authorizations.set(ctx, connectionAuthorization(ctx.connectionParams, ctx.extra.request));
      return true;
    },
    onSubscribe(ctx, _id, payload) {
      const planned = live.plan(payload);
      if (Array.isArray(planned)) return asErrors(planned);
      const authorization = authorizations.get(ctx);
      const caller: GatewayContext = { requestId: ctx.extra.request.id, log: ctx.extra.request.log, ...(authorization ? { authorization } : {}) };
      // Checked by plan(); graphql-ws reads the operation's type from the document, and calls subscribe.
      return { schema: live.schema(), document: planned.document, contextValue: { planned, caller } };
    },
    subscribe: ({ contextValue }) => {
      const { planned, caller } = contextValue as SubscriptionContext;
      return live.open(planned, caller);
    },
    // Events carry their errors formatted already.
    onNext: (_ctx, _id, _payload, _args, result) => result as ExecutionResult,
  });

  const sseHandler = createSseHandler<SubscriptionContext>({
    // Distinct connections only: each subscription is its own request.
    authenticate: () => null,
    onSubscribe(request, params) {
      const planned = live.plan(params);
      if (Array.isArray(planned)) return [JSON.stringify({ errors: planned }), { status: 400, statusText: 'Bad Request', headers: { 'content-type': 'application/json; charset=utf-8' } }];
      const fastifyRequest = request.raw as FastifyRequest;
      const { authorization } = fastifyRequest.headers;
      return live.open(planned, { requestId: fastifyRequest.id, log: fastifyRequest.log, ...(authorization ? { authorization } : {}) });
    },
  });

  return {
    wsHandler,
    async serveEventStream(request, reply) {
      // The handler writes the response itself.
      reply.hijack();
      eventStreams.add(reply);
      try {
        await sseHandler(request, reply);
      } finally {
        eventStreams.delete(reply);
      }
    },
  };
}
