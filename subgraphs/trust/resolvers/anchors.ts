/** The anchor bundle, what a verifier pins, and the trust path material of one key, both signed with the service key. */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Cost } from '../../../lib/graphql/cost.js';
import { Arg, Query, Resolver } from 'type-graphql';
import { signJson } from '../../../lib/crypto/index.js';
import { buildAnchorBundle, buildKeyPathMaterial, instantOf, THUMBPRINT, trustListAt, type TrustList } from '../domain/index.js';
import { STANDING_WEIGHT } from './graph.js';
import { orThrow, type TrustDependencies } from './shared.js';

@Resolver()
export class AnchorBundleResolver {
  constructor(private readonly deps: TrustDependencies) {}

  // Reads the roots, quorums and trust-list histories and signs the bundle.
  @Cost(500)
  @Query(() => GraphQLJSONObject, {
    description:
      'The signed anchor bundle (GET /anchor-bundle): roots with all their keys, quorums, the witness set and the master-list origin, trust-list heads; narrowed to a jurisdiction when given.',
  })
  async trustAnchorBundle(@Arg('jurisdiction', () => String, { nullable: true }) jurisdiction?: string | null): Promise<object> {
    const { graph, masterList } = this.deps;
    const [nodes, witnessSet, histories] = await Promise.all([graph.nodesOfKinds(['root', 'quorum']), masterList.witnessSet(), this.deps.trustLists.trustListHistories()]);
    const trustLists = [...histories.values()].map((history) => trustListAt(history)).filter((list): list is TrustList => list !== undefined);
    const bundle = orThrow(
      buildAnchorBundle({
        nodes,
        ...(witnessSet && { witnessSet: { m: witnessSet.m, keys: witnessSet.keys } }),
        trustLists,
        issuedAt: instantOf(new Date()),
        ...(jurisdiction !== null && jurisdiction !== undefined && { jurisdiction }),
      }),
    );
    return signJson({ service: 'trust', ...bundle, master_list_origin: this.deps.masterListOrigin }, this.deps.serviceSigner());
  }

  // The part of the graph one key hangs from, as one standing reads it.
  @Cost(STANDING_WEIGHT)
  @Query(() => GraphQLJSONObject, {
    description:
      "The signed trust path material of a key (GET /keys/{kid}/path): {type: 'key-path', kid, issued_at, nodes, edges, revocations}, the part of the graph that decides the key's standing (the nodes listing it, every node a delegation chain leads from to them, the edges into those and their revocations), read in one snapshot. Empty lists when no node lists the key.",
  })
  async trustKeyPath(@Arg('kid', () => String) kid: string): Promise<object> {
    // The syntax first: a kid that cannot name a key reads nothing.
    const part = THUMBPRINT.test(kid) ? await this.deps.graph.graphForKeys([kid]) : { nodes: [], edges: [] };
    const material = orThrow(buildKeyPathMaterial(kid, part, instantOf(new Date())));
    return signJson({ service: 'trust', ...material }, this.deps.serviceSigner());
  }
}
