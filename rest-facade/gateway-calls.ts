/** The facade's GraphQL operations, sent to the gateway; a failed answer becomes the problem it stands for. */
import type { Tracer } from '@opentelemetry/api';
import { gatewayRequestBody } from '../lib/graphql/trusted-documents.js';
import { RequestProblem } from '../lib/http/request-problem.js';
import { jsonPoster, type JsonAnswer } from '../lib/http/post-json.js';
import { problem } from '../lib/problem.js';
import { problemFromGraphqlErrors, problemHeaders } from './problems.js';

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
