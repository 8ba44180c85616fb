/** Revocations, bitemporal: what was revoked at `at`, as known by `known_by`. */
import { ListSize } from '../../../lib/graphql/cost.js';
import { Arg, Authorized, Int, Mutation, Query, Resolver } from 'type-graphql';
import { PLATFORM_ADMIN } from '../../../lib/auth/tokens.js';
import { PageInfo } from '../../../lib/graphql/common-types.js';
import { badRequest } from '../../../lib/problem.js';
import type { GraphCursor } from '../data/graph-repository.js';
import { parseRevocationQuery, revocationMatches, type RevocationQuery } from '../domain/index.js';
import { RevocationInput, RevocationType, TrustRevocationPageType } from '../schema/types.js';
import { decodeGraphCursor, DEFAULT_GRAPH_PAGE, encodeGraphCursor, MAX_GRAPH_PAGE, MAX_ONE_ANSWER_RECORDS } from './graph.js';
import { orThrow, present, revocationOut, type TrustDependencies } from './shared.js';

const FILTERS = "at = effective by then, knownBy = recorded by then, window = effective within start/end, subject = affecting that node or key (only its node's revocations are read), retroactive.";
const AT = 'RFC 3339 date-time: effective by then (effective_at <= at).';
const KNOWN_BY = 'RFC 3339 date-time: recorded by then (recorded_at <= knownBy).';
const WINDOW = 'RFC 3339 interval start/end: effective_at within [start, end); either end may be empty or "..".';

/** The filters of GET /revocations, as the domain reads them; a malformed one is a 400. */
function revocationQuery(at?: string | null, knownBy?: string | null, window?: string | null, subject?: string | null, retroactive?: boolean | null): RevocationQuery {
  const params = present({ at, known_by: knownBy, window, subject, retroactive: retroactive === null || retroactive === undefined ? undefined : String(retroactive) });
  return orThrow(parseRevocationQuery(params as Record<string, string>));
}

/** A cursor from a previous page of revocations: a graph cursor in its revocations section. */
function revocationCursor(text: string): GraphCursor {
  const cursor = decodeGraphCursor(text);
  if (cursor.position.section !== 'revocations') throw badRequest('INVALID_CURSOR', 'after must be a cursor from a previous page of trustRevocationPage.');
  return cursor;
}

@Resolver()
export class RevocationResolver {
  constructor(private readonly deps: TrustDependencies) {}

  @ListSize({ assumedSize: MAX_ONE_ANSWER_RECORDS })
  @Query(() => [RevocationType], {
    description: `Revocations (${FILTERS}) in one answer, read from at most ${MAX_ONE_ANSWER_RECORDS} stored revocations; with more (and no subject to narrow the read) it is refused (TOO_MANY_REVOCATIONS) and read with trustRevocationPage, as GET /revocations does.`,
  })
  async trustRevocations(
    @Arg('at', () => String, { nullable: true, description: AT }) at?: string | null,
    @Arg('knownBy', () => String, { nullable: true, description: KNOWN_BY }) knownBy?: string | null,
    @Arg('window', () => String, { nullable: true, description: WINDOW }) window?: string | null,
    @Arg('subject', () => String, { nullable: true }) subject?: string | null,
    @Arg('retroactive', () => Boolean, { nullable: true }) retroactive?: boolean | null,
  ): Promise<RevocationType[]> {
    const query = revocationQuery(at, knownBy, window, subject, retroactive);
    // One page of one more than allowed: all of them, or the proof that there are more.
    const page = await this.deps.graph.revocationPage(MAX_ONE_ANSWER_RECORDS, undefined, query.subject?.node_id);
    if (page.next) {
      throw badRequest(
        'TOO_MANY_REVOCATIONS',
        `More than ${MAX_ONE_ANSWER_RECORDS} revocations are stored, too many to read for one answer: read them page by page with trustRevocationPage (GET /trust/revocations streams them).`,
      );
    }
    return page.revocations.filter((revocation) => revocationMatches(revocation, query)).map(revocationOut);
  }

  @ListSize({ slicingArguments: ['first'], sizedFields: ['nodes'], assumedSize: DEFAULT_GRAPH_PAGE, requireOneSlicingArgument: false })
  @Query(() => TrustRevocationPageType, {
    description: `Revocations (${FILTERS}) page by page, all pages in the snapshot of the first (GET /revocations streams them). Each page reads up to \`first\` stored revocations and answers those that match, so a page may hold fewer, or none, and still have a next one. Ask every page with the same filters.`,
  })
  async trustRevocationPage(
    @Arg('first', () => Int, { nullable: true, description: `Stored revocations read per page, 1 to ${MAX_GRAPH_PAGE}, default ${DEFAULT_GRAPH_PAGE}.` }) first: number | null,
    @Arg('after', () => String, { nullable: true, description: 'pageInfo.endCursor of the previous page.' }) after: string | null,
    @Arg('at', () => String, { nullable: true, description: AT }) at?: string | null,
    @Arg('knownBy', () => String, { nullable: true, description: KNOWN_BY }) knownBy?: string | null,
    @Arg('window', () => String, { nullable: true, description: WINDOW }) window?: string | null,
    @Arg('subject', () => String, { nullable: true }) subject?: string | null,
    @Arg('retroactive', () => Boolean, { nullable: true }) retroactive?: boolean | null,
  ): Promise<TrustRevocationPageType> {
    if (first !== null && (first < 1 || first > MAX_GRAPH_PAGE)) throw badRequest('INVALID_QUERY', `first must be between 1 and ${MAX_GRAPH_PAGE}.`);
    const query = revocationQuery(at, knownBy, window, subject, retroactive);
    const page = await this.deps.graph.revocationPage(first ?? DEFAULT_GRAPH_PAGE, after === null ? undefined : revocationCursor(after), query.subject?.node_id);
    return {
      nodes: page.revocations.filter((revocation) => revocationMatches(revocation, query)).map(revocationOut),
      pageInfo: PageInfo.of(page.next ? encodeGraphCursor(page.next) : null),
    };
  }

  @Authorized(PLATFORM_ADMIN)
  @Mutation(() => RevocationType, {
    description: "Declares a revocation (POST /revocations); recordedAt is the server's clock. A retroactive one needs a quorate attestation, else 422 and nothing is stored.",
  })
  async declareTrustRevocation(@Arg('input', () => RevocationInput) input: RevocationInput): Promise<RevocationType> {
    const body = present({ subject: input.subject, reason: input.reason, effective_at: input.effectiveAt, attestation: input.attestation });
    const revocation = orThrow(await this.deps.graph.declareRevocation(body));
    this.deps.metrics.revocationRecorded();
    return revocationOut(revocation);
  }
}
