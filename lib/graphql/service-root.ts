/**
 * The operational face every service shares — discovery, signed health, keyring and admin log —
 * under one root field per service (`trust { health }`, `issuer { keyring }` …) so the four can
 * be composed without clashing.
 */
import { GraphQLJSONObject } from 'graphql-scalars';
import type { GraphQLObjectType, GraphQLResolveInfo } from 'graphql';
import { Cost, ListSize } from './cost.js';
import { Arg, Authorized, Ctx, FieldResolver, Info, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { PLATFORM_ADMIN } from '../auth/tokens.js';
import type { AdminLog } from '../audit/admin-log.js';
import type { RefusalLog } from '../audit/refusal-log.js';
import { readRefusalReport } from '../audit/refusal-report.js';
import type { ServiceName } from '../config/services.js';
import type { KeyStore } from '../keys/key-store.js';
import { badRequest, notFound, ProblemError } from '../problem.js';
import { AdminLogPage, PageInfo } from './common-types.js';
import type { RequestContext } from './context.js';

export interface ServiceOperations {
  discovery(): Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Signed JSON liveness status. */
  health(): Promise<Record<string, unknown>>;
  keys: KeyStore;
  adminLog: AdminLog;
  refusals: RefusalLog;
  /** The key the REST facade signs its reports of refusals with (lib/audit/refusal-report.ts). */
  refusalReportKey: Buffer | undefined;
  /** Follows a rotation or revocation, asked with the admin's request (the trust graph placing the keyring again). */
  keysChanged(context: RequestContext): Promise<void>;
  /** Counts a key change the trust graph could not place (passport_key_placement_failures_total). */
  keyPlacementFailed(): void;
}

export const ADMIN_LOG_MAX_PAGE = 500;

// biome-ignore lint/complexity/noBannedTypes: type-graphql takes resolver classes as Function
export function serviceRootResolver(service: ServiceName, operations: ServiceOperations): Function {
  const typeName = `${service[0]!.toUpperCase()}${service.slice(1)}Service`;
  // The key change itself is committed: a follow-up that fails says so, rather than look like a refusal.
  const keysChanged = async (context: RequestContext, change: string) => {
    try {
      await operations.keysChanged(context);
    } catch (error) {
      operations.keyPlacementFailed();
      const reason = error instanceof Error ? error.message : String(error);
      throw new ProblemError(502, 'KEY_PLACEMENT_FAILED', `The ${service} service ${change}, but the trust graph could not place its keyring (${reason}); placePlatformKeys or a restart places it.`);
    }
  };

  @ObjectType(typeName, { description: `Discovery, health, keyring and admin log of the ${service} service.` })
  class ServiceRoot {}

  @Resolver(() => ServiceRoot)
  class ServiceRootResolver {
    @Query(() => ServiceRoot, { name: service, description: `The ${service} service itself.` })
    root(): ServiceRoot {
      return new ServiceRoot();
    }

    @FieldResolver(() => GraphQLJSONObject, { description: 'The discovery document (GET /).' })
    discovery() {
      return operations.discovery();
    }

    @Cost(10)
    @FieldResolver(() => GraphQLJSONObject, { description: 'Liveness as signed JSON (detached JWS over the JCS form).' })
    health() {
      return operations.health();
    }

    @FieldResolver(() => GraphQLJSONObject, { description: 'JWK Set of every key this service signs with, retired ones included.' })
    keyring() {
      return operations.keys.keyring();
    }

    @Authorized('admin')
    @ListSize({ slicingArguments: ['first'], sizedFields: ['nodes'] })
    @FieldResolver(() => AdminLogPage, { description: 'State-changing requests, newest first: every entry for the platform’s admin, those of its own operator for an operator’s admin.' })
    async adminLog(
      @Arg('first', () => Int, { nullable: true, defaultValue: 50, description: `Page size, 1 to ${ADMIN_LOG_MAX_PAGE}.` }) first: number,
      @Arg('after', () => String, { nullable: true, description: 'pageInfo.endCursor of the previous page: entries older than it.' }) after: string | null,
      @Ctx() context: RequestContext,
    ): Promise<AdminLogPage> {
      if (first < 1 || first > ADMIN_LOG_MAX_PAGE) throw badRequest('INVALID_QUERY', `first must be between 1 and ${ADMIN_LOG_MAX_PAGE}.`);
      if (after !== null && !/^[0-9]{1,19}$/.test(after)) throw badRequest('INVALID_CURSOR', 'after must be a cursor from a previous page.');
      // The refusals counted so far are written first, so that the reader sees every refusal made before the read.
      await operations.refusals.writeCounts();
      // An operator's admin reads what was done for its operator; the platform's admin reads every entry.
      const operator = context.principal!.operator;
      const page = await operations.adminLog.page(first, after ?? undefined, operator ?? undefined);
      return Object.assign(new AdminLogPage(), { nodes: page.entries, pageInfo: PageInfo.of(page.next) });
    }

    /**
     * The REST facade refuses a write or admin path before it reads the request (DESIGN:
     * authentication before parsing), so the operation never reaches this service; it reports its
     * refusals here, gathered and signed (lib/audit/refusal-report.ts), and the service logs them as
     * its own. A report without the platform's signature is itself a refused write. Only fields of
     * this graph may be named. A mutation so that no report is ever merged with another in flight.
     */
    @Mutation(() => Int, {
      name: `${service}ReportRefusals`,
      description: 'Records in the admin log the write and admin requests the REST facade refused (a report it signs); answers how many.',
    })
    async reportRefusals(
      @Arg('report', () => String) report: string,
      @Arg('signature', () => String) signature: string,
      @Ctx() context: RequestContext,
      @Info() info: GraphQLResolveInfo,
    ): Promise<number> {
      const refusals = readRefusalReport(operations.refusalReportKey, { report, signature });
      if (!refusals) {
        const refusal = { status: 403, code: 'INVALID_SIGNATURE', detail: 'Only the REST facade reports refusals, signed with the platform key.' } as const;
        // A known caller's mutation is logged with its outcome by the admin-log plugin; only an anonymous one is noted here.
        if (!context.principal) context.refusals.push({ action: info.fieldName, refusal });
        throw new ProblemError(refusal.status, refusal.code, refusal.detail);
      }
      // Query fields too: a route may need a role for a field the graph serves to anyone (POST /models/{id}/validate).
      const fields = { ...info.schema.getQueryType()?.getFields(), ...info.schema.getMutationType()?.getFields(), ...(info.schema.getType(typeName) as GraphQLObjectType).getFields() };
      const unknown = refusals.find(({ refusal }) => !Object.hasOwn(fields, refusal.action) || refusal.action === info.fieldName);
      if (unknown) throw badRequest('INVALID_ACTION', `The ${service} service has no field ${unknown.refusal.action}.`);
      // Entries that cannot be itemised now are counted, and written with the counts (lib/audit/refusal-log.ts).
      await operations.refusals.record(refusals).catch(() => {});
      return refusals.reduce((sum, kind) => sum + kind.count, 0);
    }

    @Authorized(PLATFORM_ADMIN)
    @Mutation(() => GraphQLJSONObject, {
      name: `${service}RotateKey`,
      description: 'Makes a new current key for a purpose; the old key stays in the keyring with `exp`, so what it signed still verifies. Returns the new key.',
    })
    async rotateKey(@Arg('purpose', () => String) purpose: string, @Ctx() context: RequestContext) {
      if (!operations.keys.purposes.some((candidate) => candidate.purpose === purpose)) {
        throw notFound(`The ${service} service has no key purpose "${purpose}"; it has ${operations.keys.purposes.map((candidate) => candidate.purpose).join(', ')}.`);
      }
      const rotated = await operations.keys.rotate(purpose);
      await keysChanged(context, `rotated its ${purpose} key`);
      return rotated;
    }

    @Authorized(PLATFORM_ADMIN)
    @Mutation(() => GraphQLJSONObject, { name: `${service}RevokeKey`, description: 'Marks a key revoked (with the time and reason); a revoked current key is replaced at once.' })
    async revokeKey(@Arg('kid', () => String) kid: string, @Arg('reason', () => String) reason: string, @Ctx() context: RequestContext) {
      const revoked = await operations.keys.revoke(kid, reason);
      if (!revoked) throw notFound(`No key of the ${service} service has kid ${kid}.`);
      await keysChanged(context, `revoked key ${kid}`);
      return revoked;
    }
  }

  return ServiceRootResolver;
}
