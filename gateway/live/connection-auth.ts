/**
 * Who opens a live connection: its bearer token is checked once, when the connection opens (a
 * graphql-ws `connection_init`, a graphql-sse request), by the authenticators every server shares
 * (lib/auth/authentication.ts), so a bad token is refused before any subscription, not served as an
 * anonymous caller's. The token then goes with every read of the connection's subscriptions, as it
 * goes with a query, so that each subgraph applies its rules to the replay and the live events alike.
 */
import { type Authenticator, challengeOf, identify, refusalOf } from '../../lib/auth/tokens.js';
import { RequestProblem } from '../../lib/http/request-problem.js';
import { ProblemError, problem } from '../../lib/problem.js';

/** Why a connection with this Authorization may not open (401 INVALID_TOKEN, or 503 when it cannot be told now); undefined when it may. */
export async function connectionRefusal(authenticator: Authenticator, authorization: string | undefined): Promise<RequestProblem | undefined> {
  try {
    const caller = await identify(authenticator, authorization);
    if (!caller.badCredentials) return undefined;
    const refusal = refusalOf(caller, [])!;
    return new RequestProblem(problem(refusal.status, refusal.code, refusal.detail), { 'www-authenticate': challengeOf(refusal)! });
  } catch (error) {
    // The identity store's database or the OpenID provider out of reach: neither taken nor refused.
    if (error instanceof RequestProblem) return error;
    if (!(error instanceof ProblemError)) throw error;
    const retryAfter = error.problem.retry_after;
    return new RequestProblem(error.problem, typeof retryAfter === 'number' ? { 'retry-after': String(retryAfter) } : {});
  }
}

/** graphql-ws's close code for a connection refused its credentials (the protocol's Unauthorized; its clients do not retry it). */
export const UNAUTHORIZED_CLOSE = 4401;
/** WebSocket close code 1013 (Try Again Later): the credentials cannot be told now; a client retries. */
export const TRY_AGAIN_LATER_CLOSE = 1013;

/** The close frame of a refused graphql-ws connection: its code, and a reason within the 123 bytes a close frame holds. */
export function closeOf(refusal: RequestProblem): { code: number; reason: string } {
  const { status, code, detail = '' } = refusal.details;
  const reason = `${code}: ${detail}`;
  return { code: status === 401 ? UNAUTHORIZED_CLOSE : TRY_AGAIN_LATER_CLOSE, reason: Buffer.byteLength(reason) <= 123 ? reason : code };
}
