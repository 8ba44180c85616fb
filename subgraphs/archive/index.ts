import { defineSubgraph } from '../../lib/graphql/subgraph.js';
import { PrismaClient } from '../../prisma/archive/generated/client.js';

export const createArchiveSubgraph = defineSubgraph({
  name: 'archive',
  description: 'Keeps snapshots of passports as BagIt archival information packages, re-serves them byte-identically and notarises them.',
  PrismaClient,
  keyPurposes: [{ purpose: 'notary', alg: 'Ed25519' }],
  open: () => ({}),
  resolvers: () => [],
});
