import { type AuthChecker } from 'type-graphql';
import { grants, readCredentials, type AccessTokens, type Principal, type Role } from '../auth/tokens.js';
import type { PendingEntry } from '../audit/admin-log.js';
import { ProblemError } from '../problem.js';

/** What every resolver knows about the request: who is calling, if anyone. */
export interface RequestContext {
  principal?: Principal;
  /** Credentials were sent but are malformed or unknown. */
  badCredentials: boolean;
  /** The admin-log entry of each mutation field of the request, by response key (admin-log-plugin.ts). */
  pendingEntries: Map<string | number, PendingEntry>;
}

export function requestContext(tokens: AccessTokens, authorization: string | undefined): RequestContext {
  const credentials = readCredentials(authorization);
  const pendingEntries = new Map<string | number, PendingEntry>();
  if (credentials.kind === 'none') return { badCredentials: false, pendingEntries };
  const principal = credentials.kind === 'bearer' ? tokens.authenticate(credentials.token) : undefined;
  return principal ? { principal, badCredentials: false, pendingEntries } : { badCredentials: true, pendingEntries };
}

/** type-graphql's `@Authorized(role)` check: 401 without valid credentials, 403 with the wrong role. */
export const roleChecker: AuthChecker<RequestContext, Role> = ({ context }, roles) => {
  if (!context.principal) {
    throw new ProblemError(401, context.badCredentials ? 'INVALID_TOKEN' : 'MISSING_TOKEN', context.badCredentials ? 'The bearer token is not valid.' : 'This operation needs a bearer token.', { authenticate: 'Bearer realm="passport"' });
  }
  const principal = context.principal;
  if (roles.length === 0 || roles.some((role) => grants(principal.role, role))) return true;
  throw new ProblemError(403, 'INSUFFICIENT_ROLE', `This operation needs the role ${roles.join(' or ')}; the token has the role ${principal.role}.`);
};
