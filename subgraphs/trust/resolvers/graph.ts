/** Nodes, delegation edges and key standings. */
import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { Cost, ListSize } from '../../../lib/graphql/cost.js';
import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { PLATFORM_ADMIN } from '../../../lib/auth/tokens.js';
import { PageInfo } from '../../../lib/graphql/common-types.js';
import { badRequest } from '../../../lib/problem.js';
import { GRAPH_SECTIONS, type GraphCursor } from '../data/graph-repository.js';
import { instantOf, isNodeId, keyStandingAt } from '../domain/index.js';
import {
  DelegationEdgeAdditionType,
  KeyStandingQuestionInput,
  PlatformKeysPlacementType,
  KeyStandingType,
  TrustGraphPageType,
  TrustGraphType,
  TrustNodeInput,
  TrustNodeType,
  TrustNodeUpsertType,
} from '../schema/types.js';
import { edgeOut, instantArgument, nodeOut, orThrow, present, revocationOut, type TrustDependencies } from './shared.js';

/** Records per page of `trustGraphPage`: at most, and when not asked. */
export const MAX_GRAPH_PAGE = 2000;
export const DEFAULT_GRAPH_PAGE = 500;

export function encodeGraphCursor(cursor: GraphCursor): string {
  return Buffer.from(JSON.stringify([cursor.snapshot, cursor.version, cursor.position.section, cursor.position.after ?? null])).toString('base64url');
}

/** pg_snapshot text: xmin:xmax:xip,... */
const SNAPSHOT = /^\d{1,20}:\d{1,20}:(\d{1,20}(,\d{1,20})*)?$/;
/** Keys of the sections: a node id, [recorded_at, edge id] as JSON, a revocation's number. */
const KEY_CHECKS: Record<GraphCursor['position']['section'], (key: string) => boolean> = {
  nodes: (key) => isNodeId(key),
  edges: (key) => {
    try {
      const [recordedAt, id] = JSON.parse(key) as unknown[];
      return typeof recordedAt === 'string' && !Number.isNaN(Date.parse(recordedAt)) && typeof id === 'string' && !id.includes('\u0000');
    } catch {
      return false;
    }
  },
  revocations: (key) => /^\d{1,18}$/.test(key),
};

export function decodeGraphCursor(text: string): GraphCursor {
  try {
    const [snapshot, version, section, after] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    const sectionKnown = typeof section === 'string' && (GRAPH_SECTIONS as readonly string[]).includes(section);
    if (typeof snapshot === 'string' && SNAPSHOT.test(snapshot) && typeof version === 'string' && /^\d{1,20}$/.test(version) && sectionKnown) {
      const known = section as GraphCursor['position']['section'];
      if (after === null) return { snapshot, version, position: { section: known } };
      if (typeof after === 'string' && KEY_CHECKS[known](after)) return { snapshot, version, position: { section: known, after } };
    }
  } catch {
    // Reported below like any other malformed cursor.
  }
  throw badRequest('INVALID_CURSOR', 'after must be a cursor from a previous page.');
}

/**
 * Most records (nodes, edges and revocations together) `trustGraph` answers at once. Each record is
 * held several times over while one answer is built and sent (rows, domain objects, GraphQL result,
 * JSON): at 200,000 records the trust subgraph peaked at 773 MiB, and under a heap limit it died.
 * Beyond this the pages of trustGraphPage hold a bounded part each.
 */
export const MAX_ONE_ANSWER_RECORDS = 20_000;

/** Most questions one `trustKeyStandings` answers. */
export const MAX_STANDING_QUESTIONS = 1000;
/** What a standing of a key the caller names costs (lib/graphql/cost.ts). */
export const STANDING_WEIGHT = 400;

@Resolver()
export class TrustGraphResolver {
  constructor(private readonly deps: TrustDependencies) {}

  // Reading the whole graph in one snapshot: 18,500 records take 0.9 s, most of it reading and serialising (docs/benchmarks/graphql-cost.md).
  @Cost(30_000)
  @Query(() => TrustGraphType, {
    description: `Every node, edge and revocation, credentials verbatim, read in one snapshot, in one answer: for graphs of at most ${MAX_ONE_ANSWER_RECORDS} records (nodes, edges and revocations together); a larger one is refused (GRAPH_TOO_LARGE) and read with trustGraphPage.`,
  })
  async trustGraph(): Promise<TrustGraphType> {
    const tooLarge = () =>
      badRequest(
        'GRAPH_TOO_LARGE',
        `The trust graph holds more than ${MAX_ONE_ANSWER_RECORDS} records, too many for one answer: read it page by page with trustGraphPage (GET /trust/graph streams them).`,
      );
    // Clearly larger by PostgreSQL's statistics: refused without reading a record, however often it is asked.
    if (((await this.deps.graph.estimatedGraphRecords()) ?? 0) > 2 * MAX_ONE_ANSWER_RECORDS) throw tooLarge();
    // One page of one record more than allowed: the whole graph, or the proof that it is larger.
    const { nodes, edges, revocations } = await this.deps.graph.graphPage(MAX_ONE_ANSWER_RECORDS + 1);
    if (nodes.length + edges.length + revocations.length > MAX_ONE_ANSWER_RECORDS) throw tooLarge();
    return { nodes: nodes.map(nodeOut), edges: edges.map(edgeOut), revocations: revocations.map(revocationOut) };
  }

  @Cost(3000)
  @ListSize({ slicingArguments: ['first'], sizedFields: ['nodes', 'edges', 'revocations'], assumedSize: DEFAULT_GRAPH_PAGE, requireOneSlicingArgument: false })
  @Query(() => TrustGraphPageType, { description: 'The whole graph page by page, all pages in the snapshot of the first (GET /graph streams them).' })
  async trustGraphPage(
    @Arg('first', () => Int, { nullable: true, description: `Records (nodes, edges and revocations together) per page, 1 to ${MAX_GRAPH_PAGE}, default ${DEFAULT_GRAPH_PAGE}.` }) first: number | null,
    @Arg('after', () => String, { nullable: true, description: 'pageInfo.endCursor of the previous page.' }) after: string | null,
  ): Promise<TrustGraphPageType> {
    if (first !== null && (first < 1 || first > MAX_GRAPH_PAGE)) throw badRequest('INVALID_QUERY', `first must be between 1 and ${MAX_GRAPH_PAGE}.`);
    const page = await this.deps.graph.graphPage(first ?? DEFAULT_GRAPH_PAGE, after === null ? undefined : decodeGraphCursor(after));
    return {
      version: page.version,
      nodes: page.nodes.map(nodeOut),
      edges: page.edges.map(edgeOut),
      revocations: page.revocations.map(revocationOut),
      pageInfo: PageInfo.of(page.next ? encodeGraphCursor(page.next) : null),
    };
  }

  @Query(() => TrustNodeType, { nullable: true, description: 'One node, or null when unknown.' })
  async trustNode(@Arg('id', () => ID) id: string): Promise<TrustNodeType | null> {
    const node = await this.deps.nodes.load(id);
    return node && nodeOut(node);
  }

  @Cost(STANDING_WEIGHT)
  @Query(() => GraphQLJSONObject, {
    description:
      'Standing of a key at an instant: {kid, at, standing (valid, revoked, unknown, not_yet_valid, expired), node_id?, path? (edge ids from a root), reason?}. knownBy counts only revocations recorded by then.',
  })
  async trustKeyStanding(
    @Arg('kid', () => String) kid: string,
    @Arg('at', () => Date) at: Date,
    @Arg('knownBy', () => String, { nullable: true, description: 'RFC 3339 date-time: only revocations recorded by then count.' }) knownBy?: string | null,
  ): Promise<object> {
    const knownByInstant = instantArgument('knownBy', knownBy);
    const answer = keyStandingAt(await this.deps.graph.graphForKeys([kid]), kid, instantOf(at), knownByInstant);
    this.deps.metrics.keyStandingAnswered(answer.standing);
    return answer;
  }

  // Each standing is a path search over the part of the graph the request's keys hang from, and a
  // request's questions are answered together, so the work grows with their square: 1,000 distinct
  // keys of a 9,000-node graph take 5 s, 100 take 0.13 s (docs/benchmarks/graphql-cost.md). The
  // weight holds a request to about 500 of them (about 1.3 s).
  @Cost(STANDING_WEIGHT)
  @ListSize({ assumedSize: MAX_STANDING_QUESTIONS })
  @Query(() => [KeyStandingType], {
    description: `Standings of many keys at many instants, in the order asked, with the node, root and delegation path of each; all answered from one read of the part of the graph those keys hang from (at most ${MAX_STANDING_QUESTIONS}).`,
  })
  async trustKeyStandings(@Arg('questions', () => [KeyStandingQuestionInput]) questions: KeyStandingQuestionInput[], @Ctx() context: unknown): Promise<KeyStandingType[]> {
    if (questions.length > MAX_STANDING_QUESTIONS) throw badRequest('INVALID_QUERY', `questions may hold at most ${MAX_STANDING_QUESTIONS} questions.`);
    const standings = this.deps.standings(context);
    const answers = await Promise.all(questions.map(({ kid, at }) => standings.load({ kid, at })));
    for (const answer of answers) this.deps.metrics.keyStandingAnswered(answer.standing);
    return answers;
  }

  @Authorized(PLATFORM_ADMIN)
  @Mutation(() => PlatformKeysPlacementType, {
    description:
      "Merges every service's keyring into the `platform` root node, so the trust graph vouches for the platform's own keys, and each operator's keys into its node `operator:<id>`, delegated from `platform`. Runs at every start, after every key rotation or revocation of any service and when an operator is created.",
  })
  async placePlatformKeys(): Promise<PlatformKeysPlacementType> {
    const { node, created, operators } = await this.deps.placePlatformKeys();
    return { node: nodeOut(node), created, operators };
  }

  @Authorized(PLATFORM_ADMIN)
  @Mutation(() => TrustNodeUpsertType, { description: 'Creates a node or merges keys into it by kid (POST /nodes); the same kid with other key material is a 409.' })
  async upsertTrustNode(@Arg('input', () => TrustNodeInput) input: TrustNodeInput): Promise<TrustNodeUpsertType> {
    const body = present({ id: input.id, kind: input.kind, jurisdiction: input.jurisdiction, keys: input.keys, threshold: input.threshold, group_key: input.groupKey });
    const { value, created } = orThrow(await this.deps.graph.upsertNode(body));
    return { node: nodeOut(value), created };
  }

  @Authorized(PLATFORM_ADMIN)
  @Mutation(() => DelegationEdgeAdditionType, {
    description: 'Validates a delegation credential (signed JSON or compact JWS) and adds it as an edge (POST /edges); a failing one is a 422 with the reason and adds nothing.',
  })
  async addTrustEdge(@Arg('credential', () => GraphQLJSON) credential: unknown): Promise<DelegationEdgeAdditionType> {
    const judged = await this.deps.graph.addEdge(credential);
    this.deps.metrics.delegationJudged(judged.ok ? 'accepted' : 'refused', judged.ok ? 'ACCEPTED' : judged.code);
    const { value, created } = orThrow(judged);
    return { edge: edgeOut(value), created };
  }
}
