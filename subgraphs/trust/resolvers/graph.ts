/** Nodes, delegation edges and key standings. */
import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { badRequest } from '../../../lib/problem.js';
import { instantOf, keyStandingAt } from '../domain/index.js';
import { DelegationEdgeAdditionType, KeyStandingQuestionInput, KeyStandingType, TrustGraphType, TrustNodeInput, TrustNodeType, TrustNodeUpsertType } from '../schema/types.js';
import { edgeOut, instantArgument, nodeOut, orThrow, present, revocationOut, type TrustDependencies } from './shared.js';

/** Most questions one `trustKeyStandings` answers. */
export const MAX_STANDING_QUESTIONS = 1000;

@Resolver()
export class TrustGraphResolver {
  constructor(private readonly deps: TrustDependencies) {}

  @Query(() => TrustGraphType, { description: 'Every node, edge and revocation, credentials verbatim, read in one snapshot (GET /graph).' })
  async trustGraph(): Promise<TrustGraphType> {
    const { nodes, edges, revocations = [] } = await this.deps.store.graph();
    return { nodes: nodes.map(nodeOut), edges: edges.map(edgeOut), revocations: revocations.map(revocationOut) };
  }

  @Query(() => TrustNodeType, { nullable: true, description: 'One node, or null when unknown.' })
  async trustNode(@Arg('id', () => ID) id: string): Promise<TrustNodeType | null> {
    const node = await this.deps.nodes.load(id);
    return node && nodeOut(node);
  }

  @Query(() => GraphQLJSONObject, {
    description:
      'Standing of a key at an instant: {kid, at, standing (valid, revoked, unknown, not_yet_valid, expired), node_id?, path? (edge ids from a root), reason?}. knownBy counts only revocations recorded by then.',
  })
  async trustKeyStanding(
    @Arg('kid', () => String) kid: string,
    @Arg('at', () => Date) at: Date,
    @Arg('knownBy', () => String, { nullable: true }) knownBy?: string | null,
  ): Promise<object> {
    const knownByInstant = instantArgument('knownBy', knownBy);
    return keyStandingAt(await this.deps.store.graphForKeys([kid]), kid, instantOf(at), knownByInstant);
  }

  @Query(() => [KeyStandingType], {
    description: `Standings of many keys at many instants, in the order asked, with the node, root and delegation path of each; all answered from one read of the part of the graph those keys hang from (at most ${MAX_STANDING_QUESTIONS}).`,
  })
  async trustKeyStandings(@Arg('questions', () => [KeyStandingQuestionInput]) questions: KeyStandingQuestionInput[], @Ctx() context: unknown): Promise<KeyStandingType[]> {
    if (questions.length > MAX_STANDING_QUESTIONS) throw badRequest('INVALID_QUERY', `questions may hold at most ${MAX_STANDING_QUESTIONS} questions.`);
    const standings = this.deps.standings(context);
    return Promise.all(questions.map(({ kid, at }) => standings.load({ kid, at })));
  }

  @Authorized('admin')
  @Mutation(() => TrustNodeUpsertType, {
    description:
      "Merges every service's keyring into the `platform` root node, so the trust graph vouches for the platform's own keys. Runs at every start; `npm run keys -- rotate` runs it after a rotation.",
  })
  async placePlatformKeys(): Promise<TrustNodeUpsertType> {
    const { node, created } = await this.deps.placePlatformKeys();
    return { node: nodeOut(node), created };
  }

  @Authorized('writer')
  @Mutation(() => TrustNodeUpsertType, { description: 'Creates a node or merges keys into it by kid (POST /nodes); the same kid with other key material is a 409.' })
  async upsertTrustNode(@Arg('input', () => TrustNodeInput) input: TrustNodeInput): Promise<TrustNodeUpsertType> {
    const body = present({ id: input.id, kind: input.kind, jurisdiction: input.jurisdiction, keys: input.keys, threshold: input.threshold, group_key: input.groupKey });
    const { value, created } = orThrow(await this.deps.store.upsertNode(body));
    return { node: nodeOut(value), created };
  }

  @Authorized('writer')
  @Mutation(() => DelegationEdgeAdditionType, {
    description: 'Validates a delegation credential (signed JSON or compact JWS) and adds it as an edge (POST /edges); a failing one is a 422 with the reason and adds nothing.',
  })
  async addTrustEdge(@Arg('credential', () => GraphQLJSON) credential: unknown): Promise<DelegationEdgeAdditionType> {
    const { value, created } = orThrow(await this.deps.store.addEdge(credential));
    return { edge: edgeOut(value), created };
  }
}
