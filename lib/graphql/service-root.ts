/**
 * The operational face every service shares — discovery, signed health, keyring and admin log —
 * under one root field per service (`trust { health }`, `issuer { keyring }` …) so the four can
 * be composed without clashing.
 */
import { GraphQLJSONObject } from 'graphql-scalars';
import type { GraphQLResolveInfo } from 'graphql';
import { Cost, ListSize } from './cost.js';
import { Arg, Authorized, Ctx, FieldResolver, Info, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { ROLES, refusalOf, type Role } from '../auth/tokens.js';
import type { AdminLog } from '../audit/admin-log.js';
import type { ServiceName } from '../config/services.js';
import type { KeyStore } from '../keys/key-store.js';
import { badRequest, notFound, ProblemError } from '../problem.js';
import { AdminLogPage, PageInfo } from './common-types.js';
import type { RequestContext } from './context.js';

const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

export interface ServiceOperations {
  discovery(): Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Signed JSON liveness status. */
  health(): Promise<Record<string, unknown>>;
  keys: KeyStore;
  adminLog: AdminLog;
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
    @FieldResolver(() => AdminLogPage, { description: 'State-changing requests, newest first.' })
    async adminLog(
      @Arg('first', () => Int, { nullable: true, defaultValue: 50, description: `Page size, 1 to ${ADMIN_LOG_MAX_PAGE}.` }) first: number,
      @Arg('after', () => String, { nullable: true, description: 'pageInfo.endCursor of the previous page: entries older than it.' }) after: string | null,
    ): Promise<AdminLogPage> {
      if (first < 1 || first > ADMIN_LOG_MAX_PAGE) throw badRequest('INVALID_QUERY', `first must be between 1 and ${ADMIN_LOG_MAX_PAGE}.`);
      if (after !== null && !/^[0-9]{1,19}$/.test(after)) throw badRequest('INVALID_CURSOR', 'after must be a cursor from a previous page.');
      const page = await operations.adminLog.page(first, after ?? undefined);
      return Object.assign(new AdminLogPage(), { nodes: page.entries, pageInfo: PageInfo.of(page.next) });
    }

    /**
     * The REST facade refuses a write or admin path before it reads the request (DESIGN:
     * authentication before parsing), so the operation never reaches this service; it reports the
     * refusal here, and the service writes it to its admin log as if the operation had been refused
     * itself. Only the caller's own credentials count, and only fields of this graph may be named.
     * A query field, not a mutation: a mutation by a known caller would be logged a second time, as
     * itself.
     */
    @FieldResolver(() => Boolean, {
      description:
        'Records a write or admin request refused at the REST facade (the field it would have run, and the role it needs) in the admin log; true when it was recorded, false when the caller has that role.',
    })
    reportRefusal(
      @Arg('action', () => String) action: string,
      @Arg('role', () => String, { nullable: true, defaultValue: 'admin', description: 'The role the refused route needs: admin (the default) or writer.' }) role: string | null,
      @Ctx() context: RequestContext,
      @Info() info: GraphQLResolveInfo,
    ): boolean {
      const fields = { ...info.schema.getMutationType()?.getFields(), ...info.parentType.getFields() };
      if (!Object.hasOwn(fields, action) || action === info.fieldName) throw badRequest('INVALID_ACTION', `The ${service} service has no field ${action}.`);
      const needed = role ?? 'admin';
      if (!isRole(needed)) throw badRequest('INVALID_ROLE', `role must be admin or writer, not ${needed}.`);
      const refusal = refusalOf(context, [needed]);
      if (!refusal) return false;
      context.refusals.push({ action, refusal });
      return true;
    }

    @Authorized('admin')
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

    @Authorized('admin')
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
