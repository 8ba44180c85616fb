import { changeChannel } from '../../lib/db/change-feed.js';
import { defineSubgraph } from '../../lib/graphql/subgraph.js';
import { PLATFORM_VERSION, type ServiceKernel } from '../../lib/service/kernel.js';
import { PrismaClient } from '../../prisma/archive/generated/client.js';
import { SnapshotRepository } from './data/snapshot-repository.js';
import { PassportSnapshotsResolver } from './resolvers/passport-resolver.js';
import { snapshotReferences } from './resolvers/references.js';
import { PASSPORT_SNAPSHOTS_SUBSCRIPTION, SnapshotFeedResolver } from './resolvers/snapshot-feed-resolver.js';
import { SnapshotResolver } from './resolvers/snapshot-resolver.js';
import { archiveDiscovery, NOTARY_KEY_PURPOSE } from './service/discovery.js';
import { SnapshotService } from './service/snapshot-service.js';

export const createArchiveSubgraph = defineSubgraph({
  name: 'archive',
  description: 'Keeps snapshots of passports as BagIt archival information packages, re-serves them byte-identically and notarises them.',
  PrismaClient,
  open: (kernel: ServiceKernel<PrismaClient>, gateway) => {
    const repository = new SnapshotRepository(kernel.prisma, changeChannel(kernel.schema));
    const snapshots = new SnapshotService({
      repository,
      gateway,
      notary: () => kernel.keys.signer(NOTARY_KEY_PURPOSE),
      sourceOrganization: 'Passport archive service',
      softwareAgent: `passport-archive/${PLATFORM_VERSION}`,
      metrics: kernel.metrics,
    });
    return { repository, snapshots, keys: kernel.keys };
  },
  resolvers: (dependencies) => [new SnapshotResolver(dependencies), new PassportSnapshotsResolver(dependencies.repository), new SnapshotFeedResolver(dependencies.repository)],
  references: ({ repository }) => snapshotReferences(repository),
  subscriptions: PASSPORT_SNAPSHOTS_SUBSCRIPTION,
  discovery: ({ keys }) => archiveDiscovery(keys.signer(NOTARY_KEY_PURPOSE).kid),
});
