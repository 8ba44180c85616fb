/**
 * The trust service's feeds as their subscribers read them: revocations recorded and trust-list
 * changes. The gateway serves Subscription.trustRevocationsRecorded and trustListChanges
 * (gateway/live/) by reading these queries after each subscriber's cursor, so the replay and the
 * live items are the same rows, read with the subscriber's credentials and its selection.
 */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Field, Int, ObjectType, Query, Resolver } from 'type-graphql';
import { feedCursor, MAX_FEED_PAGE } from '../../../lib/db/change-feed.js';
import { normalizeJurisdiction } from '../../../lib/formats/trust/jurisdiction.js';
import { PageInfo } from '../../../lib/graphql/common-types.js';
import { ListSize } from '../../../lib/graphql/cost.js';
import { FEED_PAGE_SIZE, feedPageInfo, readWindow } from '../../../lib/graphql/feed-page.js';
import { badRequest } from '../../../lib/problem.js';
import { RevocationType } from '../schema/types.js';
import { revocationOut, type TrustDependencies } from './shared.js';

/** The subscriptions the gateway serves from these queries (lib/graphql/live-feeds.ts). */
export const TRUST_SUBSCRIPTIONS = `
type Subscription {
  "Each revocation the trust graph records, in the order they were committed: with \`after\`, first every revocation after that cursor (none missed, none twice), then each new one."
  trustRevocationsRecorded(after: String): TrustRevocationRecorded!
  "Each change of a trust list (its registration, an entry added or changed), of the list of \`jurisdiction\` or of every list, in the order they were committed: with \`after\`, first every change after that cursor, then each new one."
  trustListChanges(jurisdiction: String, after: String): TrustListChangeRecorded!
}
`;

@ObjectType('TrustRevocationRecorded', { simpleResolvers: true, description: 'A revocation as the feed of revocations delivers it.' })
export class TrustRevocationRecorded {
  @Field(() => String, { description: 'Where a subscription resumes after this revocation (`after:`): its place in the feed, in decimal.' })
  cursor!: string;

  @Field(() => RevocationType)
  revocation!: RevocationType;
}

@ObjectType('TrustRevocationRecordedPage', { simpleResolvers: true, description: 'A page of revocations, in the order they were committed.' })
export class TrustRevocationRecordedPage {
  @Field(() => [TrustRevocationRecorded])
  nodes!: TrustRevocationRecorded[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}

@ObjectType('TrustListChangeRecorded', { simpleResolvers: true, description: 'A change of a trust list as the feed of changes delivers it.' })
export class TrustListChangeRecorded {
  @Field(() => String, { description: 'Where a subscription resumes after this change (`after:`): its place in the feed, in decimal.' })
  cursor!: string;

  @Field(() => String)
  jurisdiction!: string;

  @Field(() => Int, { description: 'The sequence number of the list the change made.' })
  sequenceNumber!: number;

  @Field(() => String, { description: '`registration` or `entry`.' })
  change!: string;

  @Field(() => String)
  recordedAt!: string;

  @Field(() => GraphQLJSONObject, { description: 'The change as the list history records it (GET /trust-lists/{jurisdiction} history), verbatim.' })
  document!: Record<string, unknown>;
}

@ObjectType('TrustListChangeRecordedPage', { simpleResolvers: true, description: 'A page of trust-list changes, in the order they were committed.' })
export class TrustListChangeRecordedPage {
  @Field(() => [TrustListChangeRecorded])
  nodes!: TrustListChangeRecorded[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}

@Resolver()
export class TrustFeedResolver {
  constructor(private readonly deps: TrustDependencies) {}

  @ListSize({ slicingArguments: ['first'], sizedFields: ['nodes'] })
  @Query(() => TrustRevocationRecordedPage, {
    description: `Up to \`first\` (at most ${MAX_FEED_PAGE}) revocations recorded after the cursor \`after\` (from the first without one), in the order they were committed. What Subscription.trustRevocationsRecorded delivers.`,
  })
  async trustRevocationsRecordedAfter(
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('first', () => Int, { nullable: true, defaultValue: 10, description: FEED_PAGE_SIZE }) first: number,
  ): Promise<TrustRevocationRecordedPage> {
    const afterId = readWindow(after, first, 'revocation');
    const nodes = (await this.deps.graph.revocationsAfter(afterId, first)).map(({ id, revocation }) => ({ cursor: feedCursor(id), revocation: revocationOut(revocation) }));
    return { nodes, pageInfo: feedPageInfo(nodes, first) };
  }

  @ListSize({ slicingArguments: ['first'], sizedFields: ['nodes'] })
  @Query(() => TrustListChangeRecordedPage, {
    description: `Up to \`first\` (at most ${MAX_FEED_PAGE}) changes of the trust list of \`jurisdiction\` (of every list without one) after the cursor \`after\` (from the first without one), in the order they were committed. What Subscription.trustListChanges delivers.`,
  })
  async trustListChangesAfter(
    @Arg('jurisdiction', () => String, { nullable: true }) jurisdiction: string | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('first', () => Int, { nullable: true, defaultValue: 10, description: FEED_PAGE_SIZE }) first: number,
  ): Promise<TrustListChangeRecordedPage> {
    const afterId = readWindow(after, first, 'trust-list change');
    let list: string | undefined;
    if (jurisdiction !== null) {
      list = normalizeJurisdiction(jurisdiction);
      if (list === undefined) throw badRequest('INVALID_QUERY', 'jurisdiction must be a jurisdiction code, as trust lists are registered under.');
    }
    const nodes = (await this.deps.trustLists.changesAfter(list, afterId, first)).map(({ feedId, jurisdiction: of, change }) => ({
      cursor: feedCursor(feedId),
      jurisdiction: of,
      sequenceNumber: change.sequence_number,
      change: change.change,
      recordedAt: change.recorded_at,
      document: change as unknown as Record<string, unknown>,
    }));
    return { nodes, pageInfo: feedPageInfo(nodes, first) };
  }
}
