import type { ApolloServerPlugin } from '@apollo/server';
import type { GraphQLResolveInfo, GraphQLSchema } from 'graphql';
import { PendingEntry, withPendingEntry, type AdminLog } from '../audit/admin-log.js';
import type { RefusalLog } from '../audit/refusal-log.js';
import { rolesOf } from '../auth/tokens.js';
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
 * Writes every mutation made with valid credentials, and every refused write or admin field (whoever asked),
 * to the service's admin log, with its outcome:
 * `ok` or the problem code it failed with. Each mutation's entry is made pending first: a write
 * takes it into its own transaction (recordInTransaction, through resolveMutationsWithPendingEntries); what no
 * transaction took (mutations refused or that changed nothing) is written here once the field is
 * resolved. Refusals of callers without valid credentials, and of admin queries, go to the refusal
 * log, which itemises or counts them (lib/audit/refusal-log.ts). It hooks into mutations' root
 * fields only, so queries pay nothing for it.
 */
export function adminLogPlugin(adminLog: AdminLog, refusalLog: RefusalLog): ApolloServerPlugin<RequestContext> {
  // Logged with the request's logger, so that the line carries the request's id.
  const failed = (context: RequestContext) => (error: unknown) => context.log.error({ err: error }, 'admin log not written');
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue }) {
          const refused = contextValue.refusals.splice(0);
          if (!refused.length) return;
          const at = new Date();
          const [actor, role, operator] = [contextValue.principal?.name ?? 'anonymous', rolesOf(contextValue.principal), contextValue.principal?.operator ?? null];
          // The answer waits for its log entries, as for mutations below.
          await refusalLog
            .record(
              refused.map(({ action, refusal }) => ({
                refusal: { actor, role, operator, action, outcome: refusal.code, status: refusal.status, detail: refusal.detail },
                count: 1,
                times: [at],
                last: at,
              })),
            )
            .catch(failed(contextValue));
        },
        async executionDidStart({ operation, contextValue }) {
          if (operation.operation !== 'mutation' || !contextValue.principal) return;
          const principal = contextValue.principal;
          const records: Promise<void>[] = [];
          return {
            willResolveField({ info, args }: { info: GraphQLResolveInfo; args: Record<string, unknown> }) {
              if (info.parentType.name !== 'Mutation') return;
              const pending = new PendingEntry({ actor: principal.name, role: rolesOf(principal), operator: principal.operator, action: info.fieldName, target: targetOf(args) });
              contextValue.pendingEntries.set(info.path.key, pending);
              return (error: Error | null) => {
                if (!error && pending.inTransaction) return;
                const details = error ? problemOf(error as { extensions?: Record<string, unknown> }) : undefined;
                records.push(
                  adminLog
                    .record({
                      ...pending.entry,
                      outcome: error ? (details?.code ?? 'INTERNAL_ERROR') : 'ok',
                      detail: details ? { status: details.status, detail: details.detail } : null,
                    })
                    .catch(failed(contextValue)),
                );
              };
            },
            async executionDidEnd() {
              // The answer waits for its log entries, so a client that reads the log next finds them.
              await Promise.all(records);
            },
          };
        },
      };
    },
  };
}

/**
 * Each root mutation field of the schema resolves with its pending admin-log entry (made by
 * adminLogPlugin, which sees every mutation field before it resolves) at hand for the write's
 * transaction. Only the Mutation type's own fields are wrapped: queries and object fields pay nothing.
 */
export function resolveMutationsWithPendingEntries(schema: GraphQLSchema): void {
  for (const field of Object.values(schema.getMutationType()?.getFields() ?? {})) {
    const resolve = field.resolve;
    if (!resolve) continue;
    field.resolve = (source, args, context: RequestContext, info) => withPendingEntry(context.pendingEntries.get(info.path.key), () => resolve(source, args, context, info));
  }
}
