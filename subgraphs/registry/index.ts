import { defineSubgraph } from '../../lib/graphql/subgraph.js';
import { PrismaClient } from '../../prisma/registry/generated/client.js';

export const createRegistrySubgraph = defineSubgraph({
  name: 'registry',
  description:
    'Holds versioned registry records — items, models, services, cross-register mappings, protocol bindings, verification mechanisms — with supersession, model validation and applicability.',
  PrismaClient,
  keyPurposes: [],
  open: () => ({}),
  resolvers: () => [],
});
