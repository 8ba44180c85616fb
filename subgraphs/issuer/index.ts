import { actualCostMeter } from '../../lib/graphql/cost.js';
import { defineSubgraph } from '../../lib/graphql/subgraph.js';
import type { ServiceKernel } from '../../lib/service/kernel.js';
import { PrismaClient } from '../../prisma/issuer/generated/client.js';
import { PassportRepository } from './data/passport-repository.js';
import { ProfileRepository } from './data/profile-repository.js';
import { RestoreRepository } from './data/restore-repository.js';
import { CAPABILITY_CLASS_CATALOGUE, DEFAULT_QR_BUDGET, EVENT_CATALOGUE, PACK_CLAIM_KEYS, PACK_PREFIX, PASSPORT_STATUSES, TRANSITIONS, VERDICT_CHECKS } from './domain/index.js';
import { TokenAdministration } from '../../lib/auth/token-administration.js';
import { AccessTokenResolver } from './resolvers/access-token-resolver.js';
import { IssuerAdminResolver } from './resolvers/admin-resolver.js';
import { CredentialResolver } from './resolvers/credential-resolver.js';
import { PassportAsOfResolver, PassportResolver } from './resolvers/passport-resolver.js';
import { PASSPORT_EVENTS_SUBSCRIPTION, PassportEventResolver } from './resolvers/passport-event-resolver.js';
import { passportReferences } from './resolvers/references.js';
import { PASSPORT_STATUS_CHANGES_SUBSCRIPTION, StatusChangeResolver } from './resolvers/status-change-resolver.js';
import { IssuerAdminService } from './service/admin-service.js';
import { CredentialService } from './service/credential-service.js';
import { IssuerService } from './service/issuer-service.js';
import { RegistryClient } from './service/registry-client.js';
import { TrustClient } from './service/trust-client.js';
import { OperatorSigning } from './service/operator-signing.js';
import { OperatorService } from './service/operator-service.js';
import { OperatorResolver } from './resolvers/operator-resolver.js';

/** ISSUER_QR_BUDGET: the largest pack in characters; default one QR code of version 22 at level M. */
function qrBudget(env: NodeJS.ProcessEnv): number {
  const text = env.ISSUER_QR_BUDGET;
  if (text === undefined || text === '') return DEFAULT_QR_BUDGET;
  const budget = Number(text);
  if (!Number.isSafeInteger(budget) || budget <= PACK_PREFIX.length) {
    throw new Error(`ISSUER_QR_BUDGET must be a whole number of characters above ${PACK_PREFIX.length}, not "${text}"`);
  }
  return budget;
}

export const createIssuerSubgraph = defineSubgraph({
  name: 'issuer',
  description: 'Creates digital product passports, appends server-signed typed events to their logs, mints Tier-A packs under a QR budget and computes full-pipeline verdicts with coverage.',
  PrismaClient,
  open: (kernel: ServiceKernel<PrismaClient>, gateway, publicUrls, limits, identity) => {
    const settings = { issuer: process.env.ISSUER_ID || 'passport-issuer', qrBudget: qrBudget(process.env), publicUrls };
    const passports = new PassportRepository(kernel.prisma, kernel.schema);
    const profiles = new ProfileRepository(kernel.prisma);
    const operators = identity.store;
    const trust = new TrustClient(gateway);
    const signing = new OperatorSigning(kernel.keys, operators, trust);
    const issuer = new IssuerService(passports, profiles, new RegistryClient(gateway), trust, kernel.keys, signing, settings, kernel.metrics);
    const credentials = new CredentialService(passports, kernel.keys, signing, settings);
    const operatorService = new OperatorService(operators, kernel.keys, gateway);
    const admin = new IssuerAdminService(profiles, new RestoreRepository(kernel.prisma));
    // What one operation may spend on passports' logs as they are: the cost limit (lib/graphql/cost.ts).
    return { issuer, credentials, admin, operators: operatorService, tokens: new TokenAdministration(identity.store), charge: actualCostMeter(limits.maxCost) };
  },
  resolvers: ({ issuer, credentials, admin, operators, tokens, charge }) => [
    new OperatorResolver(operators, credentials),
    new PassportResolver(issuer, credentials, charge),
    new PassportAsOfResolver(issuer, charge),
    new PassportEventResolver(issuer),
    new StatusChangeResolver(issuer),
    new IssuerAdminResolver(admin),
    new AccessTokenResolver(tokens),
    new CredentialResolver(credentials),
  ],
  references: ({ issuer }) => passportReferences(issuer),
  subscriptions: PASSPORT_EVENTS_SUBSCRIPTION + PASSPORT_STATUS_CHANGES_SUBSCRIPTION,
  discovery: ({ issuer }) => ({
    qr_budget: issuer.settings.qrBudget,
    pack_prefix: PACK_PREFIX,
    pack_claims: PACK_CLAIM_KEYS,
    statuses: PASSPORT_STATUSES,
    transitions: TRANSITIONS,
    event_types: EVENT_CATALOGUE,
    capability_classes: CAPABILITY_CLASS_CATALOGUE,
    verdict_checks: VERDICT_CHECKS,
  }),
});
