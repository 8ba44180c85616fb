/**
 * Subscriptions at the gateway's /graphql over the two protocols clients use: graphql-ws (a WebSocket
 * upgrade of GET /graphql, subprotocol `graphql-transport-ws`, through @fastify/websocket, so the
 * upgrade passes the server's edge plugins like any request: request ids, the malformed-Host and
 * shutdown refusals) and GraphQL over Server-Sent Events (graphql-sse, distinct connections mode: a
 * GET or POST with `Accept: text/event-stream`). Both check and run a subscription the same way
 * (live-subscription.ts), with the caller's credentials as given when the connection opened, checked
 * then (connection-auth.ts).
 */
import fastifyWebsocket from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createRequire } from 'node:module';
import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import { createHandler as createSseHandler } from 'graphql-sse/lib/use/fastify';
import type { Context as WsContext } from 'graphql-ws';
import { makeHandler as makeWsHandler } from 'graphql-ws/use/@fastify/websocket';
import type { Authenticator } from '../../lib/auth/tokens.js';
import type { GraphqlLimits } from '../../lib/config/runtime.js';
import { clientQuota, limitRefusal, quotaRefusalResponse, refusalLogged, EventStreams } from '../../lib/graphql/live-gate.js';
import type { LiveMetrics } from '../../lib/ops/metrics.js';
import type { GatewayContext } from '../data-source.js';
import type { DocumentLookup } from '../trusted-documents.js';
import { connectionRefusal } from '../../lib/auth/connection-refusal.js';
import { HeldCredentials, NO_LONGER_VALID } from '../../lib/graphql/held-credentials.js';
import { closeOf, FORBIDDEN_CLOSE } from './connection-auth.js';
import type { LiveSubscriptions, PlannedSubscription } from './live-subscription.js';

/** What a subscription carries from its connection to its reads. */
interface SubscriptionContext extends Record<PropertyKey, unknown> {
  planned: PlannedSubscription;
  caller: GatewayContext;
  /** Gives back its place in the client's quota. */
  release: () => void;
}

/** WebSocket close code 1012 (Service Restart): the client reconnects, and resumes from its cursor. */
export const SERVICE_RESTART = 1012;

/**
 * The Authorization a graphql-ws client gives in its connection_init payload (`authorization` or
 * `headers.authorization`), else the upgrade request's; a value given that is not a string is a
 * malformed credential, refused as such rather than ignored.
 */
function connectionAuthorization(payload: Record<string, unknown> | undefined, request: FastifyRequest): string | undefined {
  const given = payload?.authorization ?? payload?.Authorization ?? (payload?.headers as Record<string, unknown> | undefined)?.authorization;
  if (given === undefined || given === null) return request.headers.authorization;
  return typeof given === 'string' ? given : 'malformed';
}

/**
 * The GraphQLError graphql-ws takes refusals as (it checks with instanceof): that of the graphql Node
 * loads for it, the CommonJS build, which a bundler or test runner may not give this module.
 */
const { GraphQLError } = createRequire(import.meta.url)('graphql') as typeof import('graphql');
const asErrors = (formatted: readonly GraphQLFormattedError[]) => formatted.map((error) => new GraphQLError(error.message, { extensions: error.extensions ?? {} }));

export interface LiveTransport {
  /** Serves a request for an event stream (asksForEventStream). */
  serveEventStream(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** The WebSocket handler of GET /graphql (@fastify/websocket's `wsHandler`). */
  wsHandler: ReturnType<typeof makeWsHandler>;
}

/** Registers @fastify/websocket on the gateway's server; the routes take the handlers returned. */
export async function liveTransport(
  app: FastifyInstance,
  live: LiveSubscriptions,
  options: {
    lookupDocument: DocumentLookup;
    maxPayload: number;
    limits: Pick<GraphqlLimits, 'maxSubscriptionsPerConnection' | 'maxSubscriptionsPerClient' | 'maxCost'>;
    metrics: LiveMetrics;
    /** Recognises the bearer token a connection opens with, and asks it again while the connection is open. */
    authenticator: Authenticator;
    /** Calls a listener after each revocation or suspension made in this process (the identity store's onRevocation). */
    onRevocation?: (listener: () => void) => void;
  },
): Promise<LiveTransport> {
  const eventStreams = new EventStreams(options.authenticator, options.metrics);
  const { maxSubscriptionsPerConnection } = options.limits;
  const quota = clientQuota(options.limits);
  // A token revoked, or of an operator suspended, ends the streams that opened with it.
  const held = new HeldCredentials(options.authenticator);
  options.onRevocation?.(() => void held.check());
  await app.register(fastifyWebsocket, {
    options: { maxPayload: options.maxPayload },
    // On shutdown each client is told to reconnect (to this gateway restarted, or another), and resumes from its cursor.
    preClose(done) {
      for (const socket of this.websocketServer.clients) socket.close(SERVICE_RESTART, 'The gateway is restarting; reconnect and resume after your last cursor.');
      eventStreams.endAll();
      held.close();
      done();
    },
  });

  const authorizations = new WeakMap<WsContext, string | undefined>();
  const wsHandler = makeWsHandler({
    async onConnect(ctx) {
      const authorization = connectionAuthorization(ctx.connectionParams, ctx.extra.request);
      const refusal = await connectionRefusal(options.authenticator, authorization);
      if (refusal) {
        const { code, reason } = closeOf(refusal);
        refusalLogged(ctx.extra.request, { status: 101, close_code: code, code: refusal.details.code });
        // graphql-ws would close 4403 without a reason; a closing socket takes no second close.
        ctx.extra.socket.close(code, reason);
        return false;
      }
      authorizations.set(ctx, authorization);
      const { socket } = ctx.extra;
      socket.once(
        'close',
        held.hold(authorization, () => {
          refusalLogged(ctx.extra.request, { status: 101, close_code: FORBIDDEN_CLOSE, code: NO_LONGER_VALID.code });
          socket.close(FORBIDDEN_CLOSE, `${NO_LONGER_VALID.code}: ${NO_LONGER_VALID.detail}`);
        }),
      );
      options.metrics.connectionOpened('graphql-ws');
      return true;
    },
    // Only acknowledged connections were counted.
    onDisconnect: () => options.metrics.connectionClosed('graphql-ws'),
    onSubscribe(ctx, _id, payload) {
      // A document named by its id (TRUSTED_DOCUMENTS), as at /graphql over HTTP, where the SSE form is looked up.
      const looked = options.lookupDocument(payload as unknown as Record<string, unknown>);
      if ('refusal' in looked) return asErrors([{ message: looked.refusal.message, extensions: { code: looked.refusal.code } }]);
      // graphql-ws has reserved this one's id already.
      if (Object.keys(ctx.subscriptions).length > maxSubscriptionsPerConnection) {
        refusalLogged(ctx.extra.request, { status: 101, code: 'SUBSCRIPTION_LIMIT' });
        return asErrors([
          limitRefusal(
            `This connection has ${maxSubscriptionsPerConnection} subscriptions open, the most one connection may hold; complete one first.`,
            'GRAPHQL_MAX_SUBSCRIPTIONS_PER_CONNECTION',
            maxSubscriptionsPerConnection,
          ),
        ]);
      }
      const planned = live.plan(looked.params as unknown as typeof payload);
      if (Array.isArray(planned)) return asErrors(planned);
      const release = quota.admit(ctx.extra.request, planned.eventCost, 101);
      if (typeof release !== 'function') return asErrors([release]);
      const authorization = authorizations.get(ctx);
      const caller: GatewayContext = { requestId: ctx.extra.request.id, log: ctx.extra.request.log, ...(authorization ? { authorization } : {}) };
      // Checked by plan(); graphql-ws reads the operation's type from the document, and calls subscribe.
      return { schema: live.schema(), document: planned.document, contextValue: { planned, caller, release } };
    },
    subscribe: ({ contextValue }) => {
      const { planned, caller, release } = contextValue as SubscriptionContext;
      return live.open(planned, caller, release);
    },
    // Events carry their errors formatted already.
    onNext: (_ctx, _id, _payload, _args, result) => result as ExecutionResult,
  });

  const sseHandler = createSseHandler<SubscriptionContext>({
    // Distinct connections only: each subscription is its own request.
    authenticate: () => null,
    async onSubscribe(request, params) {
      const planned = live.plan(params);
      if (Array.isArray(planned)) return [JSON.stringify({ errors: planned }), { status: 400, statusText: 'Bad Request', headers: { 'content-type': 'application/json; charset=utf-8' } }];
      const fastifyRequest = request.raw as FastifyRequest;
      const release = quota.admit(fastifyRequest, planned.eventCost, 429);
      if (typeof release !== 'function') return quotaRefusalResponse(release);
      const { authorization } = fastifyRequest.headers;
      const events = await live.open(planned, { requestId: fastifyRequest.id, log: fastifyRequest.log, ...(authorization ? { authorization } : {}) }, release);
      return Symbol.asyncIterator in events ? held.streamHeld(events, authorization) : events;
    },
  });

  return {
    wsHandler,
    serveEventStream: (request, reply) => eventStreams.serve(request, reply, sseHandler),
  };
}
