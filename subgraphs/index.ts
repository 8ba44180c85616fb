import type { ServiceName } from '../lib/config/services.js';
import type { SubgraphFactory } from '../lib/graphql/subgraph.js';

/**
 * Each service's subgraph factory, its code loaded when the service is first started: a subgraph run
 * alone (bin/subgraph.ts) holds only its own resolvers and its own Prisma client, not the other
 * three services' (about 30 MiB of a process measured so).
 */
export const SUBGRAPHS: Record<ServiceName, SubgraphFactory> = {
  trust: async (options) => (await import('./trust/index.js')).createTrustSubgraph(options),
  registry: async (options) => (await import('./registry/index.js')).createRegistrySubgraph(options),
  issuer: async (options) => (await import('./issuer/index.js')).createIssuerSubgraph(options),
  archive: async (options) => (await import('./archive/index.js')).createArchiveSubgraph(options),
};
