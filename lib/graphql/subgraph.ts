import 'reflect-metadata';
/**
 * A service as an Apollo Federation subgraph: its kernel, its resolvers and the schema built from
 * them. Each service's `index.ts` declares one with `defineSubgraph`.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import type { AdminLog } from '../audit/admin-log.js';
import type { RefusalLog } from '../audit/refusal-log.js';
import { refusalReportKey } from '../audit/refusal-report.js';
import { openPlatformIdentity, type PlatformIdentity } from '../auth/authentication.js';
import type { AccessTokens, Authenticator } from '../auth/tokens.js';
import { publicUrlsOfConfig, type PublicUrls } from '../config/public-urls.js';
import { withSchema } from '../config/database.js';
import { loadRuntimeConfig, type GraphqlLimits } from '../config/runtime.js';
import type { ServiceName } from '../config/services.js';
import type { KeyEncryptionKeys } from '../keys/kek.js';
import type { PrismaClientClass } from '../db/prisma.js';
import { openServiceKernel, type ServiceKernel, type ServicePrismaClient } from '../service/kernel.js';
import { roleChecker, requestContext, type RequestContext } from './context.js';
import { resolveMutationsWithPendingEntries } from './admin-log-plugin.js';
import { buildFederatedSchema, type ReferenceResolvers } from './federation.js';
import type { GatewayClient } from './gateway-client.js';
import { serviceRootResolver } from './service-root.js';
import { Operations, type ReadinessCheck } from '../ops/operations.js';
import { ChangeListener, changeChannel } from '../db/change-feed.js';
import { followFeedsInSchema } from './subgraph-subscriptions.js';
import type { ServerMetrics } from '../ops/metrics.js';
import { serverTracer } from '../ops/tracing.js';

export interface SubgraphDefinition<P extends ServicePrismaClient, D> {
  name: ServiceName;
  /** One paragraph for the discovery document. */
  description: string;
  PrismaClient: PrismaClientClass<P>;
  /** Builds the service's own dependencies (repositories, domain services) on its kernel. */
  open(kernel: ServiceKernel<P>, gateway: GatewayClient, publicUrls: PublicUrls, limits: GraphqlLimits, identity: PlatformIdentity): Promise<D> | D;
  /** Resolver instances, given the dependencies. */
  resolvers(dependencies: D, kernel: ServiceKernel<P>): object[];
  references?(dependencies: D): ReferenceResolvers;
  /** Members the service adds to its discovery document. */
  discovery?(dependencies: D): Record<string, unknown>;
  /**
   * The SDL of a `Subscription` type of fields the gateway serves (gateway/live/) from queries of
   * this service, woken by the notices it sends on its change channel (lib/db/change-feed.ts).
   */
  subscriptions?: string;
  /** Work that needs the other services, run once the whole graph answers through the gateway. */
  graphReady?(dependencies: D, gateway: GatewayClient): Promise<void>;
}

export interface SubgraphOptions {
  databaseUrl: string;
  /** The configured tokens; the refusal reports' key is derived from them (lib/audit/refusal-report.ts). */
  tokens: AccessTokens;
  /**
   * The identity store and the authenticators every server shares (lib/auth/authentication.ts);
   * without it the subgraph opens its own, on IDENTITY_DATABASE_URL or the identity schema beside its own.
   */
  identity?: PlatformIdentity;
  /** Seals and opens the service's private signing keys (lib/keys/kek.ts). */
  kek: KeyEncryptionKeys;
  /** The rest of the graph, for services that read other services' data. */
  gateway: GatewayClient;
  /** The process's metrics and shutdown state; a subgraph made without them has its own. */
  operations?: Operations;
  /** Every service's public base URL (lib/config/public-urls.ts), for what the service signs or publishes; default: as the environment configures them. */
  publicUrls?: PublicUrls;
  /** The limits operations are held to (GRAPHQL_MAX_*), for work that shows its size only as it runs (cost.ts, actualCostMeter); default: as the environment configures them. */
  limits?: GraphqlLimits;
}

export interface Subgraph {
  name: ServiceName;
  schema: GraphQLSchema;
  adminLog: AdminLog;
  refusals: RefusalLog;
  /** SQL statements the subgraph has sent so far. */
  statements(): number;
  operations: Operations;
  metrics: ServerMetrics;
  /** The conditions of its readiness probe (database reachable and migrated, keys unsealed). */
  readiness: Record<string, ReadinessCheck>;
  /** Recognises the bearer tokens of the subgraph's callers (the shared identity's authenticators). */
  authenticator: Authenticator;
  /** Calls a listener after each revocation or suspension made in this process (the identity store's). */
  onRevocation(listener: () => void): void;
  /** A request's context: its caller, and its logger (the request's, bound to its ids). */
  context(authorization: string | undefined, log: FastifyBaseLogger): Promise<RequestContext>;
  /** The service's change notices, for the gateway's live subscriptions (served at GET /changes) and its own (subgraph-subscriptions.ts); absent for a service without subscriptions. */
  changes?: ChangeListener;
  /** Runs the definition's graphReady, if any: call it once the gateway serves every subgraph. */
  graphReady(): Promise<void>;
  close(): Promise<void>;
}

/** The trust graph vouches for every service's keys (docs/KEYS.md): a key change is placed there at once, by the admin who made it. */
export const PLACE_PLATFORM_KEYS = 'mutation PlacePlatformKeys { placePlatformKeys { created } }';

export type SubgraphFactory = (options: SubgraphOptions) => Promise<Subgraph>;

export function defineSubgraph<P extends ServicePrismaClient, D>(definition: SubgraphDefinition<P, D>): SubgraphFactory {
  return async ({
    databaseUrl,
    tokens,
    identity: shared,
    gateway,
    kek,
    operations = new Operations(),
    publicUrls = publicUrlsOfConfig(loadRuntimeConfig(process.env)),
    limits = loadRuntimeConfig(process.env).graphqlLimits,
  }) => {
    const metrics = operations.metrics.forServer(definition.name);
    const kernel = await openServiceKernel(definition.name, definition.PrismaClient, databaseUrl, kek, metrics);
    const identity = shared ?? openPlatformIdentity(tokens, process.env.IDENTITY_DATABASE_URL || withSchema(databaseUrl, 'identity'));
    const dependencies = await definition.open(kernel, gateway, publicUrls, limits, identity);
    const RootResolver = serviceRootResolver(definition.name, {
      discovery: () => ({ service: definition.name, description: definition.description, ...definition.discovery?.(dependencies) }),
      health: () => kernel.health(),
      keys: kernel.keys,
      adminLog: kernel.adminLog,
      refusals: kernel.refusals,
      refusalReportKey: refusalReportKey(tokens),
      keysChanged: (context) => gateway.request(PLACE_PLATFORM_KEYS, {}, context.authorization).then(() => undefined),
      keyPlacementFailed: () => kernel.metrics.keyPlacementFailed('rotation'),
    });
    const instances = [new (RootResolver as new () => object)(), ...definition.resolvers(dependencies, kernel)];
    // type-graphql asks the container for the resolver instance on every field it resolves.
    // biome-ignore lint/complexity/noBannedTypes: type-graphql takes resolver classes as Function
    const byClass = new Map<Function, object>(instances.map((instance) => [instance.constructor, instance]));
    const schema = await buildFederatedSchema(
      {
        // biome-ignore lint/complexity/noBannedTypes: as above
        resolvers: instances.map((instance) => instance.constructor) as [Function, ...Function[]],
        // biome-ignore lint/complexity/noBannedTypes: as above
        container: { get: (resolverClass: Function) => byClass.get(resolverClass) },
        authChecker: roleChecker,
        validate: false,
      },
      definition.references?.(dependencies),
      definition.subscriptions,
    );
    resolveMutationsWithPendingEntries(schema);
    // LISTENs only while the gateway or a subscriber follows it: one connection for every subscriber.
    const changes = definition.subscriptions ? new ChangeListener(databaseUrl, changeChannel(kernel.schema)) : undefined;
    if (changes) followFeedsInSchema(schema, definition.name, changes, { metrics: metrics.live, tracer: serverTracer(definition.name) });
    return {
      ...(changes ? { changes } : {}),
      name: definition.name,
      schema,
      adminLog: kernel.adminLog,
      refusals: kernel.refusals,
      statements: () => kernel.statements.count,
      operations,
      metrics,
      readiness: kernel.readiness,
      authenticator: identity.authenticator,
      onRevocation: (listener) => identity.store.onRevocation(listener),
      context: (authorization, log) => requestContext(identity.authenticator, authorization, log),
      graphReady: async () => definition.graphReady?.(dependencies, gateway),
      close: async () => {
        await changes?.close();
        await kernel.close();
        if (!shared) await identity.close();
      },
    };
  };
}
