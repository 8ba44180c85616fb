/**
 * How a graphql-ws connection is told its credentials were refused: the close codes and reasons. The
 * check itself (connectionRefusal, lib/auth/connection-refusal.ts) and the tokens asked again while
 * the connection is open (HeldCredentials, lib/graphql/held-credentials.ts) are shared with the
 * subgraphs' own subscriptions (lib/graphql/subgraph-subscriptions.ts).
 */
import type { RequestProblem } from '../../lib/http/request-problem.js';

/** graphql-ws's close code for a connection refused its credentials (the protocol's Unauthorized; its clients do not retry it). */
export const UNAUTHORIZED_CLOSE = 4401;
/** graphql-ws's close code Forbidden: the connection's token, valid when it opened, is no longer (revoked, its operator suspended). */
export const FORBIDDEN_CLOSE = 4403;
/** WebSocket close code 1013 (Try Again Later): the credentials cannot be told now; a client retries. */
export const TRY_AGAIN_LATER_CLOSE = 1013;

/** The close frame of a refused graphql-ws connection: its code, and a reason within the 123 bytes a close frame holds. */
export function closeOf(refusal: RequestProblem): { code: number; reason: string } {
  const { status, code, detail = '' } = refusal.details;
  const reason = `${code}: ${detail}`;
  return { code: status === 401 ? UNAUTHORIZED_CLOSE : TRY_AGAIN_LATER_CLOSE, reason: Buffer.byteLength(reason) <= 123 ? reason : code };
}
