/**
 * How a subgraph asks the rest of the graph: one GraphQL request through the gateway (e.g. the
 * issuer reading a registry model, the archive gathering a passport). The gateway's address is
 * resolved per request because, in one process, the gateway starts after the subgraphs.
 */
import { jsonPoster, type JsonAnswer } from '../http/post-json.js';
import { problemOf, ProblemError } from '../problem.js';
import { gatewayRequestBody } from './trusted-documents.js';

export interface GatewayClient {
  /** `authorization`: the caller's header, when asking on its behalf (a write that follows another). */
  request<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, authorization?: string): Promise<T>;
}

/** `headers`: sent with every request (the rate limits' credential of requests already counted, lib/server/rate-limits.ts). */
export function gatewayClient(url: () => string, headers: Record<string, string> = {}): GatewayClient {
  // Kept-alive sockets over node:http, as the facade asks the gateway (lib/http/post-json.ts).
  const post = jsonPoster();
  return {
    async request<T>(query: string, variables: Record<string, unknown> = {}, authorization?: string): Promise<T> {
      let answer: JsonAnswer;
      try {
        answer = await post(url(), gatewayRequestBody(query, variables), authorization === undefined ? headers : { ...headers, authorization });
      } catch {
        throw new ProblemError(503, 'GATEWAY_UNAVAILABLE', 'The GraphQL gateway does not answer.');
      }
      let payload: { data?: T; errors?: { message: string; extensions?: Record<string, unknown> }[] };
      try {
        payload = JSON.parse(answer.text);
      } catch {
        throw new Error(`gateway answered ${answer.status} with a body that is not JSON`);
      }
      if (payload.errors?.length) {
        const first = payload.errors[0]!;
        const details = problemOf(first);
        // A problem another service raised is passed on as it is; anything else is a fault here.
        if (details) throw new ProblemError(details.status, details.code, details.detail ?? first.message, details);
        throw new Error(`gateway request failed: ${first.message}`);
      }
      if (!payload.data) throw new Error(`gateway answered ${answer.status} without data`);
      return payload.data;
    },
  };
}
