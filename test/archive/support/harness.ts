/**
 * The archive's own parts on a test database, with the rest of the graph stood in for: a gateway
 * that answers the gather query from given passports, as the issuer and trust services would.
 * Used to test snapshot creation before (and independently of) the issuer, and to seed a running
 * stack's archive with snapshots through the very service the subgraph uses.
 */
import { PlatformMetrics } from '../../../lib/ops/metrics.js';
import { withSchema } from '../../../lib/config/database.js';
import { changeChannel } from '../../../lib/db/change-feed.js';
import { TEST_KEK } from '../../support/stack.js';
import type { GatewayClient } from '../../../lib/graphql/gateway-client.js';
import { openServiceKernel, type ServiceKernel } from '../../../lib/service/kernel.js';
import { PrismaClient } from '../../../prisma/archive/generated/client.js';
import { SnapshotRepository } from '../../../subgraphs/archive/data/snapshot-repository.js';
import type { SnapshotContent } from '../../../subgraphs/archive/domain/index.js';
import { NOTARY_KEY_PURPOSE } from '../../../subgraphs/archive/service/discovery.js';
import { GATHER_QUERY, type GatheredPassport } from '../../../subgraphs/archive/service/gather.js';
import { SnapshotService } from '../../../subgraphs/archive/service/snapshot-service.js';

/** The platform itself, as a snapshot's creator: it may snapshot any passport. */
export const PLATFORM = { operator: null };

/** What the graph answers to the gather query for a passport, in the contract's shape. */
export function gathered(content: SnapshotContent | undefined): GatheredPassport {
  const keys = content?.keys ?? { issuerKeyring: { keys: [] }, trustAnchorBundle: { anchors: [] }, trustKeyring: { keys: [] } };
  return {
    passport: content
      ? {
          id: content.passportId,
          operator: 'default',
          status: String((content.core as { status?: unknown }).status ?? 'active'),
          core: content.core,
          manifest: content.manifest,
          logHead: content.logHead,
          events: [...content.events],
          latestPack: content.pack ?? null,
          verdict: content.verdict,
        }
      : null,
    issuer: { keyring: keys.issuerKeyring },
    trust: { keyring: keys.trustKeyring },
    trustAnchorBundle: keys.trustAnchorBundle,
  };
}

export interface StubGateway extends GatewayClient {
  /** Every request made, in order. */
  readonly requests: { query: string; variables: Record<string, unknown> }[];
  /** Passports the stand-in issuer knows, by id. */
  readonly passports: Map<string, SnapshotContent>;
  /** Makes the next requests fail with this error instead of answering. */
  failWith(error: Error | undefined): void;
}

/** Answers only the contract's gather query; anything else is a test failure. */
export function stubGateway(passports: SnapshotContent[] = []): StubGateway {
  const known = new Map(passports.map((content) => [content.passportId, content]));
  const requests: StubGateway['requests'] = [];
  let failure: Error | undefined;
  return {
    requests,
    passports: known,
    failWith(error) {
      failure = error;
    },
    async request<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
      requests.push({ query, variables });
      if (query !== GATHER_QUERY) throw new Error(`unexpected query: ${query}`);
      if (failure) throw failure;
      return gathered(known.get(String(variables.id))) as T;
    },
  };
}

export interface ArchiveParts {
  kernel: ServiceKernel<PrismaClient>;
  repository: SnapshotRepository;
  service: SnapshotService;
  close(): Promise<void>;
}

/** The archive's repository and snapshot service on a database (its `archive` schema), keys included. */
export async function openArchive(databaseUrl: string, gateway: GatewayClient, options: { chunkSize?: number } = {}): Promise<ArchiveParts> {
  const kernel = await openServiceKernel('archive', PrismaClient, withSchema(databaseUrl, 'archive'), TEST_KEK, new PlatformMetrics().forServer('archive'));
  const repository = new SnapshotRepository(kernel.prisma, changeChannel(kernel.schema), options.chunkSize);
  const service = new SnapshotService({
    repository,
    gateway,
    notary: () => kernel.keys.signer(NOTARY_KEY_PURPOSE),
    sourceOrganization: 'Passport archive service',
    softwareAgent: 'passport-archive/test',
    metrics: kernel.metrics,
  });
  return { kernel, repository, service, close: () => kernel.close() };
}
