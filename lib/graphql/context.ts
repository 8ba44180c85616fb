import { type AuthChecker } from 'type-graphql';
import { identify, refusalOf, type AccessTokens, type Caller, type Role } from '../auth/tokens.js';
import type { PendingEntry } from '../audit/admin-log.js';
import { ProblemError } from '../problem.js';

/** What every resolver knows about the request: who is calling, if anyone. */
export interface RequestContext extends Caller {
  /** The admin-log entry of each mutation field of the request, by response key (admin-log-plugin.ts). */
  pendingEntries: Map<string | number, PendingEntry>;
}

export function requestContext(tokens: AccessTokens, authorization: string | undefined): RequestContext {
  return { ...identify(tokens, authorization), pendingEntries: new Map() };
}

/** type-graphql's `@Authorized(role)` check: 401 without valid credentials, 403 with the wrong role. */
export const roleChecker: AuthChecker<RequestContext, Role> = ({ context }, roles) => {
  const refusal = refusalOf(context, roles);
  if (!refusal) return true;
  throw new ProblemError(refusal.status, refusal.code, refusal.detail, refusal.status === 401 ? { authenticate: 'Bearer realm="passport"' } : undefined);
};
