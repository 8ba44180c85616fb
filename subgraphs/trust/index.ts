import { changeChannel } from '../../lib/db/change-feed.js';
import { defineSubgraph } from '../../lib/graphql/subgraph.js';
import type { KeyStore } from '../../lib/keys/key-store.js';
import { PrismaClient } from '../../prisma/trust/generated/client.js';
import { GraphRepository } from './data/graph-repository.js';
import { MasterListRepository } from './data/master-list-repository.js';
import { TrustListRepository } from './data/trust-list-repository.js';
import { AnchorBundleResolver } from './resolvers/anchors.js';
import { TRUST_SUBSCRIPTIONS, TrustFeedResolver } from './resolvers/feeds.js';
import { TrustGraphResolver } from './resolvers/graph.js';
import { MasterListResolver } from './resolvers/master-list.js';
import { RevocationResolver } from './resolvers/revocations.js';
import { trustReferences } from './resolvers/references.js';
import { trustLoaders, type TrustDependencies } from './resolvers/shared.js';
import { TrustListResolver } from './resolvers/trust-lists.js';
import { placePlatformKeys } from './service/platform-keys.js';

/**
 * The origin line witnesses cosign (domain/master-list.ts). It must differ between deployments, so
 * a cosignature cannot be replayed into another; unless configured, it is named after this
 * deployment's first service key, which is never regenerated and stays in the keyring for good.
 */
function masterListOrigin(keys: KeyStore): string {
  const configured = process.env.TRUST_MASTER_LIST_ORIGIN;
  if (configured) return configured;
  const [first] = [...keys.keyring().keys].sort((a, b) => a.iat - b.iat || (a.kid < b.kid ? -1 : 1));
  return `passport-trust/${first!.kid}/master-list`;
}

export const createTrustSubgraph = defineSubgraph<PrismaClient, TrustDependencies>({
  name: 'trust',
  description: 'Holds the trust graph (nodes and delegation edges), trust lists per jurisdiction, the witnessed master list and bitemporal revocations, and publishes the anchors a verifier pins.',
  PrismaClient,
  open: async (kernel, gateway) => {
    const graph = new GraphRepository(kernel.prisma, kernel.schema);
    // Before the graph is served: rows a restore brought from another cluster become visible.
    await graph.adoptForeignRows();
    return {
      graph,
      trustLists: new TrustListRepository(kernel.prisma, changeChannel(kernel.schema)),
      masterList: new MasterListRepository(kernel.prisma),
      masterListOrigin: masterListOrigin(kernel.keys),
      serviceSigner: () => kernel.keys.signer('service'),
      placePlatformKeys: () => placePlatformKeys(gateway, graph, () => kernel.keys.signer('service')),
      metrics: kernel.metrics,
      ...trustLoaders(graph),
    };
  },
  resolvers: (deps) => [
    new TrustGraphResolver(deps),
    new TrustListResolver(deps),
    new MasterListResolver(deps),
    new RevocationResolver(deps),
    new AnchorBundleResolver(deps),
    new TrustFeedResolver(deps),
  ],
  subscriptions: TRUST_SUBSCRIPTIONS,
  references: (deps) => trustReferences(deps),
  discovery: (deps) => ({ master_list_origin: deps.masterListOrigin }),
  // A fresh deployment vouches for its own keys from its first start (docs/trust.md, "The platform's own keys").
  graphReady: async (deps) => {
    await deps.placePlatformKeys().catch((error: unknown) => {
      deps.metrics.keyPlacementFailed('start');
      throw error;
    });
  },
});
