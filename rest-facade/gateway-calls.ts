/** The facade's GraphQL operations, sent to the gateway; a failed answer becomes the problem it stands for. */
import type { Tracer } from '@opentelemetry/api';
import { gatewayRequestBody } from '../lib/graphql/trusted-documents.js';
import { RequestProblem } from '../lib/http/request-problem.js';
import { createClient } from 'graphql-sse';
import { jsonPoster, type JsonAnswer } from '../lib/http/post-json.js';
import { problem, problemHeaders } from '../lib/problem.js';
import { problemFromGraphqlErrors } from './problems.js';

/** `requestId`: the request's own, passed on (`x-request-id`) so that every server's log lines of it carry it, traced or not. */
export type GatewayCall = (operation: string, variables: Record<string, unknown>, authorization: string | undefined, requestId?: string) => Promise<Record<string, unknown>>;

/**
 * Calls over kept-alive sockets to the gateway, over node:http rather than fetch (see lib/http/post-json.ts);
 * `sent`: headers every call carries (the rate limits' credential of requests already counted, lib/server/rate-limits.ts).
 */
export function gatewayCaller(gatewayUrl: string, tracer: Tracer | undefined, sent: Record<string, string> = {}): GatewayCall {
  const postToGateway = jsonPoster({ tracer });
  return async (operation, variables, authorization, requestId) => {
    let answer: JsonAnswer;
    const headers: Record<string, string> = requestId ? { ...sent, 'x-request-id': requestId } : { ...sent };
    if (authorization) headers.authorization = authorization;
    try {
      answer = await postToGateway(gatewayUrl, gatewayRequestBody(operation, variables), headers);
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
  };
}

/** A subscription at the gateway: its events' `data`, as they come; a refusal is thrown as the problem it stands for. */
export type GatewaySubscription = (operation: string, variables: Record<string, unknown>, authorization: string | undefined, requestId?: string) => AsyncIterable<Record<string, unknown>>;

/**
 * Subscribes at the gateway over GraphQL over SSE (graphql-sse's client, one connection per
 * subscription). It does not retry: the facade's own client resumes from its last event id, so a
 * retry here with the first cursor would deliver events twice.
 */
export function gatewaySubscriber(gatewayUrl: string): GatewaySubscription {
  return async function* subscribe(operation, variables, authorization, requestId) {
    const headers: Record<string, string> = requestId ? { 'x-request-id': requestId } : {};
    if (authorization) headers.authorization = authorization;
    const client = createClient({ url: gatewayUrl, singleConnection: false, retryAttempts: 0, headers });
    try {
      for await (const { data, errors } of client.iterate<Record<string, unknown>>({ query: operation, variables })) {
        if (errors?.length) {
          const details = problemFromGraphqlErrors(errors as unknown as { message: string; extensions?: Record<string, unknown> }[]);
          throw new RequestProblem(details, problemHeaders(details));
        }
        if (data) yield data;
      }
    } finally {
      client.dispose();
    }
  };
}
