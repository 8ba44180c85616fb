/**
 * What every server that serves subscriptions checks as one opens, the gateway (gateway/live/) and a
 * subgraph on its own port (subgraph-subscriptions.ts) alike: the token of a GraphQL over SSE request
 * (connectionRefusal), the client's quota of open subscriptions, and how a refusal that no request
 * log sees (a hijacked stream, a WebSocket's close) is logged.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLFormattedError } from 'graphql';
import { connectionRefusal } from '../auth/connection-refusal.js';
import type { Authenticator } from '../auth/tokens.js';
import type { GraphqlLimits } from '../config/runtime.js';
import { PROBLEM_MEDIA_TYPE } from '../http/request-problem.js';
import { infoLogged } from '../ops/logging.js';

/**
 * Answers a GraphQL over SSE request whose token may not open a stream (401 INVALID_TOKEN, 503 with
 * Retry-After when it cannot be told now), before its stream is hijacked, so that the request log has
 * it like any refused request; whether it did.
 */
export async function refusedEventStream(authenticator: Authenticator, request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  const refusal = await connectionRefusal(authenticator, request.headers.authorization);
  if (!refusal) return false;
  // A Buffer, so that Fastify adds no charset to the media type.
  await reply
    .code(refusal.details.status)
    .headers(refusal.headers)
    .type(PROBLEM_MEDIA_TYPE)
    .send(Buffer.from(JSON.stringify(refusal.details)));
  return true;
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

  /** Counts one more of `eventCost` for `client`; the release, or why it may not open. */
  take(client: string, eventCost: number): (() => void) | 'count' | 'cost' {
    const open = this.#open.get(client) ?? { count: 0, cost: 0 };
    if (open.count >= this.max) return 'count';
    if (open.cost + eventCost > this.maxCost) return 'cost';
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

  /** The error a subscription over the client's quota is refused with (`over`: what take answered), naming the setting that raises it. */
  refusal(over: 'count' | 'cost'): GraphQLFormattedError {
    return over === 'count'
      ? limitRefusal(`This client has ${this.max} subscriptions open, the most one client may hold.`, 'GRAPHQL_MAX_SUBSCRIPTIONS_PER_CLIENT', this.max)
      : limitRefusal(`The events of this client's open subscriptions would together cost more than ${this.maxCost}, what one request may cost; complete one first.`, 'GRAPHQL_MAX_COST', this.maxCost);
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
