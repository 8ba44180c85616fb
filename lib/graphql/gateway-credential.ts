/**
 * The gateway's credential to its subgraphs. A subgraph bound beyond loopback is reachable without
 * the gateway in front; with a shared secret configured (`SUBGRAPH_SECRET`) it takes mutations only
 * from a caller that sends it, i.e. the gateway, so every write passes the gateway's limits and path.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError } from 'graphql';
import { problem } from '../problem.js';

export const GATEWAY_CREDENTIAL_HEADER = 'passport-gateway-credential';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Whether a request's credential header is the gateway's (compared in constant time, whatever its length). */
export function gatewayCredentialCheck(secret: string): (sent: string | string[] | null | undefined) => boolean {
  const expected = digest(secret);
  return (sent) => typeof sent === 'string' && timingSafeEqual(digest(sent), expected);
}

/** Refuses a mutation that does not carry the gateway's credential (403 GATEWAY_CREDENTIAL_REQUIRED). */
export function gatewayCredentialPlugin<Context extends object>(secret: string): ApolloServerPlugin<Context> {
  const fromGateway = gatewayCredentialCheck(secret);
  return {
    async requestDidStart({ request }) {
      const sentByGateway = fromGateway(request.http?.headers.get(GATEWAY_CREDENTIAL_HEADER));
      return {
        async didResolveOperation({ operation }) {
          if (sentByGateway || operation?.operation !== 'mutation') return;
          const detail = 'This subgraph takes writes only from the gateway; send them to the gateway or the REST facade.';
          throw new GraphQLError(detail, { extensions: { code: 'GATEWAY_CREDENTIAL_REQUIRED', http: { status: 403 }, problem: problem(403, 'GATEWAY_CREDENTIAL_REQUIRED', detail) } });
        },
      };
    },
  };
}
