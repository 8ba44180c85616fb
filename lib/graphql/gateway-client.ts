/**
 * How a subgraph asks the rest of the graph: one GraphQL request through the gateway (e.g. the
 * issuer reading a registry model, the archive gathering a passport). The gateway's address is
 * resolved per request because, in one process, the gateway starts after the subgraphs.
 */
import { problemOf, ProblemError } from '../problem.js';

export interface GatewayClient {
  request<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<T>;
}

export function gatewayClient(url: () => string): GatewayClient {
  return {
    async request<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
      let response: Response;
      try {
        response = await fetch(url(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
      } catch {
        throw new ProblemError(503, 'GATEWAY_UNAVAILABLE', 'The GraphQL gateway does not answer.');
      }
      const payload = (await response.json()) as { data?: T; errors?: { message: string; extensions?: Record<string, unknown> }[] };
      if (payload.errors?.length) {
        const first = payload.errors[0]!;
        const details = problemOf(first);
        // A problem another service raised is passed on as it is; anything else is a fault here.
        if (details) throw new ProblemError(details.status, details.code, details.detail ?? first.message, details);
        throw new Error(`gateway request failed: ${first.message}`);
      }
      if (!payload.data) throw new Error(`gateway answered ${response.status} without data`);
      return payload.data;
    },
  };
}
