import { HeaderMap } from '@apollo/server';
import type { AuthChecker } from 'type-graphql';
import { challengeOf, identify, PLATFORM_ADMIN, refusalOf, type Authenticator, type Caller, type Refusal, type Requirement } from '../auth/tokens.js';
import type { PendingEntry } from '../audit/admin-log.js';
import { RequestProblem } from '../http/request-problem.js';
import { ProblemError, problemHeaders } from '../problem.js';
import type { FastifyBaseLogger } from 'fastify';
import type { LoggingContext } from './errors.js';

/** What every resolver knows about the request: who is calling, if anyone. */
export interface RequestContext extends Caller, LoggingContext {
  /** The admin-log entry of each mutation field of the request, by response key (admin-log-plugin.ts). */
  pendingEntries: Map<string | number, PendingEntry>;
  /**
   * One object per HTTP request. Apollo Server gives each operation of a batched request a shallow
   * copy of the context, so this, not the context itself, is what per-request loaders are kept by
   * (batching.ts): the operations of one batch share them.
   */
  httpRequest: object;
  /** Admin fields refused to this request, for the admin log (admin-log-plugin.ts). */
  refusals: { action: string; refusal: Pick<Refusal, 'detail'> & { status: number; code: string } }[];
  /** The caller's Authorization header, passed on when a service asks another on the caller's behalf. */
  authorization?: string;
}

export async function requestContext(authenticator: Authenticator, authorization: string | undefined, log: FastifyBaseLogger): Promise<RequestContext> {
  const caller = await identify(authenticator, authorization).catch((error: unknown) => {
    throw unidentified(error, log);
  });
  return { ...caller, log, pendingEntries: new Map(), httpRequest: {}, refusals: [], ...(authorization !== undefined && { authorization }) };
}

/**
 * A caller that cannot be told now (the identity store's database, or the OpenID provider, out of
 * reach) as the problem it is answered with: Apollo answers a failed context 500 unless the error
 * names its HTTP status (extensions.http), so it carries the problem's status and Retry-After.
 */
function unidentified(error: unknown, log: FastifyBaseLogger): unknown {
  const refusal =
    error instanceof ProblemError
      ? { problem: error.problem, headers: problemHeaders(error.problem) }
      : error instanceof RequestProblem
        ? { problem: error.details, headers: error.headers }
        : undefined;
  if (!refusal) return error;
  const { status, code, type: _type, title, detail = title, ...extensions } = refusal.problem;
  // What made it: for the operator's log, not for the client (an OpenID provider's failure names its URL).
  log.warn({ code, reason: (error as { reason?: string }).reason }, `caller not identified: ${detail}`);
  const answered = new ProblemError(status, code, detail, extensions);
  answered.extensions.http = { status, headers: new HeaderMap(Object.entries(refusal.headers)) };
  return answered;
}

/**
 * type-graphql's `@Authorized(role)` check: 401 without valid credentials, 403 with the wrong role
 * (`@Authorized(PLATFORM_ADMIN)`: 403 for any admin but the platform's).
 * A refused write (a mutation field) or admin field is noted for the admin log (DESIGN: every refused
 * write or admin request is logged), unless it is a mutation by a known caller, whose entry the
 * admin-log plugin makes with every other mutation.
 */
export const roleChecker: AuthChecker<RequestContext, Requirement> = ({ context, info }, roles) => {
  const refusal = refusalOf(context, roles);
  if (!refusal) return true;
  const mutation = info.parentType.name === 'Mutation';
  if ((mutation || roles.includes('admin') || roles.includes(PLATFORM_ADMIN)) && !(mutation && context.principal)) context.refusals.push({ action: info.fieldName, refusal });
  const challenge = challengeOf(refusal);
  throw new ProblemError(refusal.status, refusal.code, refusal.detail, challenge ? { authenticate: challenge } : undefined);
};

/**
 * Runs an admin read whose rule is judged against the object (another operator's tokens, another
 * operator): a refusal it throws is noted for the admin log, as roleChecker notes a role's, then thrown.
 */
export async function refusalsLogged<T>(context: RequestContext, action: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ProblemError && error.problem.status < 500) {
      const { status, code, detail = code } = error.problem;
      context.refusals.push({ action, refusal: { status, code, detail } });
    }
    throw error;
  }
}
