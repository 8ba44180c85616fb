/**
 * What every server that serves subscriptions does as one opens, the gateway (gateway/live/) and a
 * subgraph on its own port (subgraph-subscriptions.ts) alike: its GraphQL over SSE streams, the token
 * checked first (connectionRefusal) and counted while open; the client's quota of open
 * subscriptions; and how a refusal that no request log sees (a hijacked stream, a WebSocket's close)
 * is logged.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLFormattedError } from 'graphql';
import { connectionRefusal } from '../auth/connection-refusal.js';
import type { Authenticator } from '../auth/tokens.js';
import type { GraphqlLimits } from '../config/runtime.js';
import { PROBLEM_MEDIA_TYPE } from '../http/request-problem.js';
import { infoLogged } from '../ops/logging.js';
import type { LiveMetrics } from '../ops/metrics.js';

/**
 * A server's GraphQL over SSE streams (graphql-sse's handler, which writes each response itself): a
 * request whose token may not open a stream is answered before its stream is hijacked (401
 * INVALID_TOKEN, 503 with Retry-After when it cannot be told now), so that the request log has it
 * like any refused request; the open ones are counted (LiveMetrics, `graphql-sse`) and, on shutdown,
 * ended with a reconnect hint (`retry:`), so that clients resume from their cursors elsewhere.
 */
export class EventStreams {
  readonly #open = new Set<FastifyReply>();
  constructor(
    readonly authenticator: Authenticator,
    readonly metrics: LiveMetrics,
  ) {}

  async serve(request: FastifyRequest, reply: FastifyReply, handler: (request: FastifyRequest, reply: FastifyReply) => Promise<void>): Promise<void> {
    const refusal = await connectionRefusal(this.authenticator, request.headers.authorization);
    if (refusal) {
      // A Buffer, so that Fastify adds no charset to the media type.
      await reply
        .code(refusal.details.status)
        .headers(refusal.headers)
        .type(PROBLEM_MEDIA_TYPE)
        .send(Buffer.from(JSON.stringify(refusal.details)));
      return;
    }
    reply.hijack();
    this.#open.add(reply);
    this.metrics.connectionOpened('graphql-sse');
    // Ended by the response's close, which a client gone away also makes: graphql-sse's handler then
    // never returns (it waits for an end that a closed response does not call back).
    reply.raw.once('close', () => {
      this.#open.delete(reply);
      this.metrics.connectionClosed('graphql-sse');
    });
    await handler(request, reply);
  }

  /** Ends every open stream with a reconnect hint. */
  endAll(): void {
    for (const reply of this.#open) reply.raw.end('retry: 1000\n\n');
  }
}

/**
 * The subscriptions open from each client address: one client cannot hold more than `max`
 * (GRAPHQL_MAX_SUBSCRIPTIONS_PER_CLIENT) of the server's memory, nor subscriptions whose events
 * together cost more than `maxCost` (the server's cost limit): every append wakes them all, so one
 * append costs a client's subscriptions at most what one request of it may cost.
 */
export class ClientQuota {
  readonly #open = new Map<string, { count: number; cost: number }>();
  constructor(
    readonly max: number,
    readonly maxCost: number,
  ) {}

  /**
   * Counts one more subscription of `request`'s client (its address), of `eventCost`: the release;
   * else the error it is refused with, naming the setting that raises it, its refusal logged (status:
   * 429 over GraphQL over SSE, 101 for a WebSocket's subscription).
   */
  admit(request: FastifyRequest, eventCost: number, status: 101 | 429): (() => void) | GraphQLFormattedError {
    const client = request.ip;
    const open = this.#open.get(client) ?? { count: 0, cost: 0 };
    const over = open.count >= this.max ? 'count' : open.cost + eventCost > this.maxCost ? 'cost' : undefined;
    if (over) {
      refusalLogged(request, { status, code: 'SUBSCRIPTION_LIMIT' });
      return over === 'count'
        ? limitRefusal(`This client has ${this.max} subscriptions open, the most one client may hold.`, 'GRAPHQL_MAX_SUBSCRIPTIONS_PER_CLIENT', this.max)
        : limitRefusal(
            `The events of this client's open subscriptions would together cost more than ${this.maxCost}, what one request may cost; complete one first.`,
            'GRAPHQL_MAX_COST',
            this.maxCost,
          );
    }
    this.#open.set(client, { count: open.count + 1, cost: open.cost + eventCost });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.#open.get(client);
      if (!left || left.count <= 1) this.#open.delete(client);
      else this.#open.set(client, { count: left.count - 1, cost: left.cost - eventCost });
    };
  }
}

export const limitRefusal = (message: string, setting: string, value: number): GraphQLFormattedError => ({ message, extensions: { code: 'SUBSCRIPTION_LIMIT', limit: { setting, value } } });

/** A server's quota of subscriptions per client: GRAPHQL_MAX_SUBSCRIPTIONS_PER_CLIENT, and the server's cost limit for their events together. */
export const clientQuota = (limits: Pick<GraphqlLimits, 'maxSubscriptionsPerClient' | 'maxCost'>): ClientQuota => new ClientQuota(limits.maxSubscriptionsPerClient, limits.maxCost);

/** graphql-sse's answer to a subscription over its client's quota: 429 with the error, as a GraphQL response. */
export const quotaRefusalResponse = (error: GraphQLFormattedError) =>
  [JSON.stringify({ errors: [error] }), { status: 429, statusText: 'Too Many Requests', headers: { 'content-type': 'application/json; charset=utf-8' } }] as const;

/**
 * A refused connection or subscription, logged as a refused request is (lib/server/request-logs.ts:
 * one `request` line at info), which a hijacked stream or a WebSocket's close never gets: its status,
 * or for a WebSocket its close code, and the refusal's code.
 */
export function refusalLogged(request: FastifyRequest, refusal: { status: number; close_code?: number; code: unknown }): void {
  if (!infoLogged()) return;
  request.log.info({ method: request.method, route: request.routeOptions.url ?? null, path: request.url.split('?')[0], ...refusal }, 'request');
}
