import { defineSubgraph } from '../../lib/graphql/subgraph.js';
import { PrismaClient } from '../../prisma/issuer/generated/client.js';

export const createIssuerSubgraph = defineSubgraph({
  name: 'issuer',
  description:
    'Creates digital product passports, appends server-signed typed events to their logs, mints Tier-A packs under a QR budget and computes full-pipeline verdicts with coverage.',
  PrismaClient,
  keyPurposes: [
    { purpose: 'event', alg: 'Ed25519' },
    { purpose: 'carrier', alg: 'ES256' },
  ],
  open: () => ({}),
  resolvers: () => [],
});
