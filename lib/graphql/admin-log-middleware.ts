import type { MiddlewareFn } from 'type-graphql';
import type { AdminLog } from '../audit/admin-log.js';
import { problemOf } from '../problem.js';
import type { RequestContext } from './context.js';

/** Names the record a mutation acts on, for the admin log's `target`. */
function targetOf(args: Record<string, unknown>): string | null {
  for (const value of Object.values(args)) {
    if (typeof value === 'string') return value;
    if (value && typeof value === 'object') {
      const id = (value as Record<string, unknown>).id ?? (value as Record<string, unknown>).passportId;
      if (typeof id === 'string') return id;
    }
  }
  return null;
}

/**
 * Writes every mutation made with valid credentials to the service's admin log, with its outcome:
 * `ok` or the problem code it failed with. Registered once per subgraph as a global middleware.
 */
export function adminLogMiddleware(adminLog: AdminLog): MiddlewareFn<RequestContext> {
  return async ({ context, info, args }, next) => {
    if (info.parentType.name !== 'Mutation' || !context.principal) return next();
    const entry = { actor: context.principal.name, role: context.principal.role, action: info.fieldName, target: targetOf(args) };
    try {
      const result = await next();
      await adminLog.record({ ...entry, outcome: 'ok' });
      return result;
    } catch (error) {
      const details = problemOf(error as { extensions?: Record<string, unknown> });
      await adminLog.record({ ...entry, outcome: details?.code ?? 'INTERNAL_ERROR', detail: details ? { status: details.status, detail: details.detail } : null });
      throw error;
    }
  };
}
