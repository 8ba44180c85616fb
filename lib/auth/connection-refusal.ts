/**
 * Who opens a live connection (a graphql-ws `connection_init`, a GraphQL over SSE request, at the
 * gateway or at a subgraph's own port): its bearer token is checked when the connection opens, by the
 * authenticators every server shares (authentication.ts), so a bad token is refused before any
 * subscription, not served as an anonymous caller's. The token then goes with every read of the
 * connection's subscriptions, as it goes with a query, so that the rules apply to the replay and the
 * live events alike.
 */
import { RequestProblem } from '../http/request-problem.js';
import { ProblemError, problem, problemHeaders } from '../problem.js';
import { type Authenticator, challengeOf, identify, refusalOf } from './tokens.js';

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
    return new RequestProblem(error.problem, problemHeaders(error.problem));
  }
}
