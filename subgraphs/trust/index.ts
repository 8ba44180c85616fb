import { defineSubgraph } from '../../lib/graphql/subgraph.js';
import { PrismaClient } from '../../prisma/trust/generated/client.js';

export const createTrustSubgraph = defineSubgraph({
  name: 'trust',
  description:
    'Holds the trust graph (nodes and delegation edges), trust lists per jurisdiction, the witnessed master list and bitemporal revocations, and publishes the anchors a verifier pins.',
  PrismaClient,
  keyPurposes: [],
  open: () => ({}),
  resolvers: () => [],
});
