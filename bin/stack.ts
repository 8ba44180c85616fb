/**
 * The whole platform in one process: PostgreSQL (embedded unless a URL is given), the four
 * subgraphs, the gateway and the REST facade. `npm start` runs it; the tests start it too.
 */
import { openPlatformIdentity } from '../lib/auth/authentication.js';
import type { AccessTokens } from '../lib/auth/tokens.js';
import type { KeyEncryptionKeys } from '../lib/keys/kek.js';
import { serviceDatabaseUrl } from '../lib/config/database.js';
import type { OidcConfig } from '../lib/config/oidc.js';
import type { RuntimeConfig } from '../lib/config/runtime.js';
import { publicUrlsOfConfig } from '../lib/config/public-urls.js';
import { DATABASE_SCHEMAS, SERVICES, type SchemaName, type ServiceName } from '../lib/config/services.js';
import { startEmbeddedPostgres, type RunningPostgres } from '../lib/db/embedded-postgres.js';
import type { Subgraph } from '../lib/graphql/subgraph.js';
import { deployServices } from '../lib/db/migrate.js';
import { checkSealedKeys, storedKeys } from '../lib/keys/custody-check.js';
import type { StoredKey } from '../lib/keys/key-store.js';
import type { RunningGateway } from '../gateway/index.js';
import type { RunningFacade } from '../rest-facade/server.js';
import type { Operations } from '../lib/ops/operations.js';
import type { EdgeOptions } from '../lib/server/edge-options.js';
import type { ListeningServer } from '../lib/server/platform-server.js';
import { countedHeaders } from '../lib/server/rate-limits.js';
import { openPart, type RunningPart } from './lifecycle.js';

export interface StackOptions {
  config: RuntimeConfig;
  tokens: AccessTokens;
  /** The OpenID provider whose access tokens are taken (lib/config/oidc.ts); undefined: none. */
  oidc?: OidcConfig;
  /** The key-encryption key the services' private signing keys are sealed under. */
  kek: KeyEncryptionKeys;
  /** Where the composed supergraph SDL is written. */
  supergraphFile?: string;
  log?: (line: string) => void;
}

/** The whole platform; its Operations are the six servers' metrics and shutdown state (SIGTERM fails their readiness first), its metrics listener their one Prometheus endpoint. */
export interface RunningStack extends RunningPart {
  databaseUrl: string;
  /** The embedded cluster's folder; absent with DATABASE_URL. */
  clusterDir?: string;
  /** The first replica's URL of each subgraph. */
  subgraphUrls: Record<ServiceName, string>;
  /** Every replica's URL of each subgraph (config.subgraphReplicas of them). */
  replicaUrls: Record<ServiceName, string[]>;
  /** SQL statements each subgraph has sent so far (its replicas together). */
  sqlStatements(): Record<ServiceName, number>;
  /** SQL statements each replica of each subgraph has sent so far. */
  replicaStatements(): Record<ServiceName, number[]>;
  gateway: RunningGateway;
  facade: RunningFacade;
}

export function startStack(options: StackOptions): Promise<RunningStack> {
  return openPart(options.config, 'stack', ({ operations, edge }) => startServers(options, operations, edge));
}

async function startServers(options: StackOptions, operations: Operations, edge: EdgeOptions): Promise<Omit<RunningStack, keyof RunningPart> & { stop(): Promise<void> }> {
  const { config } = options;
  const log = options.log ?? (() => {});
  const stoppers: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const stopOne of stoppers.reverse()) await stopOne().catch((error: unknown) => log(`while stopping: ${String(error)}`));
    stoppers.length = 0;
  };
  try {
    let postgres: RunningPostgres | undefined;
    if (!config.databaseUrl) {
      postgres = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPort, log: (line) => log(`postgres: ${line}`) });
      stoppers.push(() => postgres!.stop());
      if (postgres.setAside) {
        log(
          `The embedded cluster found in ${postgres.clusterDir} was not this data folder's (it holds no credentials for it: the folder was made anew, or its postgres.json removed): it was moved to ${postgres.setAside} and a new cluster made. Remove that folder once its data is not needed.`,
        );
      }
    }
    const databaseUrl = config.databaseUrl ?? postgres!.url;
    const serviceUrl = (service: SchemaName) => serviceDatabaseUrl(service, { ...process.env, DATABASE_URL: databaseUrl });

    // The services' checks (and the identity store's) on one session where their URLs share a database
    // (lib/db/migrate.ts deployServices). Every check ends before a failure is reported.
    // Each service's stored keys are read on its migration session (no connection of its own).
    const stored: Partial<Record<ServiceName, StoredKey[]>> = {};
    const migrated = await deployServices([
      ...SERVICES.map((service) => ({
        service,
        url: serviceUrl(service),
        afterwards: async (client: Parameters<typeof storedKeys>[0]) => {
          stored[service] = await storedKeys(client);
        },
      })),
      { service: 'identity', url: serviceUrl('identity') },
    ]);
    for (const [index, outcome] of migrated.entries()) {
      if (outcome.status === 'rejected') throw outcome.reason;
      if (outcome.value.length) log(`${DATABASE_SCHEMAS[index]}: applied migrations ${outcome.value.join(', ')}`);
    }
    // A key-encryption key that does not open the sealed keys (a wrong or lost KEK file) ends the start
    // here, in the key store's words, before the servers' code is loaded. A PKCS#11 token is the kernel's to open.
    if (!process.env.PASSPORT_PKCS11_MODULE) for (const service of SERVICES) checkSealedKeys(service, options.kek, stored[service] ?? []);

    // One identity store and authenticator chain for the six servers: they recognise the same tokens,
    // and a revocation made through one is forgotten by all at once.
    const identity = openPlatformIdentity(options.tokens, serviceUrl('identity'), options.oidc);
    stoppers.push(() => identity.close());

    // The servers' code (Apollo, type-graphql, the Prisma clients, Fastify: most of what a start loads)
    // once the database has answered, so a start that cannot reach it says so without loading them.
    const [{ gatewayClient }, { serveSubgraph, subgraphServerOptions }, { startGateway }, { ROUTE_TABLES }, { startFacade }, { SUBGRAPHS }] = await Promise.all([
      import('../lib/graphql/gateway-client.js'),
      import('../lib/graphql/subgraph-server.js'),
      import('../gateway/index.js'),
      import('../rest-facade/routes/index.js'),
      import('../rest-facade/server.js'),
      import('../subgraphs/index.js'),
    ]);
    let gatewayUrl: string | undefined;
    const gatewayForSubgraphs = gatewayClient(() => {
      if (!gatewayUrl) throw new Error('the gateway is not started yet');
      return gatewayUrl;
    }, countedHeaders(options.tokens));
    // The facade's rule (lib/config/public-urls.ts) at the ports it binds, once it listens (it may choose them then); before, as configured.
    let facadeBaseUrls: Record<ServiceName, string> | undefined;
    const servicePublicUrls = publicUrlsOfConfig(config, (mount) => (facadeBaseUrls ? Number(new URL(facadeBaseUrls[mount.service]).port) : mount.port));
    const replicaUrls = {} as Record<ServiceName, string[]>;
    const subgraphs: Subgraph[] = [];
    // Built one after another: type-graphql keeps its build settings in static state.
    for (const service of SERVICES) {
      replicaUrls[service] = [];
      for (let replica = 0; replica < config.subgraphReplicas; replica += 1) {
        const subgraph: Subgraph = await SUBGRAPHS[service]({
          databaseUrl: serviceUrl(service),
          tokens: options.tokens,
          identity,
          kek: options.kek,
          gateway: gatewayForSubgraphs,
          operations,
          publicUrls: servicePublicUrls,
          limits: config.graphqlLimits,
        });
        stoppers.push(() => subgraph.close());
        subgraphs.push(subgraph);
        // The first replica on the configured port, the others wherever the system finds room.
        const server: ListeningServer = await serveSubgraph(subgraph, { host: config.host, port: replica === 0 ? config.subgraphPorts[service] : 0 }, subgraphServerOptions(config));
        stoppers.push(() => server.stop());
        replicaUrls[service].push(server.url);
      }
    }
    const subgraphUrls = Object.fromEntries(SERVICES.map((service) => [service, replicaUrls[service][0]!])) as Record<ServiceName, string>;

    const gateway = await startGateway({
      ...edge,
      tokens: options.tokens,
      host: config.host,
      port: config.gatewayPort,
      subgraphs: SERVICES.map((service) => ({ name: service, url: subgraphUrls[service], replicas: replicaUrls[service], timeoutMs: config.subgraphTimeoutsMs[service] })),
      subgraphCircuitOpenMs: config.subgraphCircuitOpenMs,
      supergraphPollIntervalMs: config.supergraphPollIntervalMs,
      introspection: config.introspection,
      limits: config.graphqlLimits,
      ...(config.subgraphSecret ? { subgraphSecret: config.subgraphSecret } : {}),
      trustedDocuments: config.trustedDocuments,
      ...(options.supergraphFile ? { supergraphFile: options.supergraphFile } : {}),
      identity,
    });
    stoppers.push(() => gateway.stop());
    gatewayUrl = gateway.graphqlUrl;
    // Once per service: its replicas share one database, so the first one's start-up steps serve all.
    for (const service of SERVICES) await subgraphs.find((subgraph) => subgraph.name === service)!.graphReady();

    const facade = await startFacade({
      ...edge,
      host: config.host,
      mounts: config.mounts,
      publicUrls: config.publicUrls,
      tables: ROUTE_TABLES,
      gatewayUrl: gateway.graphqlUrl,
      tokens: options.tokens,
      identity,
      ...(options.oidc && { oidc: options.oidc }),
    });
    stoppers.push(() => facade.stop());
    facadeBaseUrls = facade.baseUrls;

    const replicaStatements = () =>
      Object.fromEntries(SERVICES.map((service) => [service, subgraphs.filter((subgraph) => subgraph.name === service).map((subgraph) => subgraph.statements())])) as Record<ServiceName, number[]>;
    const sqlStatements = () =>
      Object.fromEntries(Object.entries(replicaStatements()).map(([service, counts]) => [service, counts.reduce((sum, count) => sum + count, 0)])) as Record<ServiceName, number>;
    return { databaseUrl, ...(postgres ? { clusterDir: postgres.clusterDir } : {}), subgraphUrls, replicaUrls, sqlStatements, replicaStatements, gateway, facade, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
