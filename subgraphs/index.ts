import type { ServiceName } from '../lib/config/services.js';
import type { SubgraphFactory } from '../lib/graphql/subgraph.js';
import { createArchiveSubgraph } from './archive/index.js';
import { createIssuerSubgraph } from './issuer/index.js';
import { createRegistrySubgraph } from './registry/index.js';
import { createTrustSubgraph } from './trust/index.js';

export const SUBGRAPHS: Record<ServiceName, SubgraphFactory> = {
  trust: createTrustSubgraph,
  registry: createRegistrySubgraph,
  issuer: createIssuerSubgraph,
  archive: createArchiveSubgraph,
};
