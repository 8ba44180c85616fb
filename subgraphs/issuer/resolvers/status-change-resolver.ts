/**
 * Passports' status changes as their subscribers read them: the gateway serves
 * Subscription.passportStatusChanges (gateway/live/) by reading this query after each subscriber's
 * cursor, so the replay and the live changes are the same rows, read with the subscriber's
 * credentials and its selection.
 */
import { Arg, Field, FieldResolver, ID, Int, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { feedCursor, MAX_FEED_PAGE } from '../../../lib/db/change-feed.js';
import { PageInfo } from '../../../lib/graphql/common-types.js';
import { ListSize } from '../../../lib/graphql/cost.js';
import { checkFeedPageSize, FEED_PAGE_SIZE, feedPageInfo } from '../../../lib/graphql/feed-page.js';
import type { StatusChangeRow } from '../data/status-changes.js';
import { Passport } from '../schema/types.js';
import { type IssuerService, MAX_STATUS_CHANGE_PASSPORTS } from '../service/issuer-service.js';

/** The subscription the gateway serves from this query (lib/graphql/live-feeds.ts). */
export const PASSPORT_STATUS_CHANGES_SUBSCRIPTION = `
extend type Subscription {
  "Each change of status made by an event, of the passports of \`operator\`, of the passports named by \`passportIds\` (at most ${MAX_STATUS_CHANGE_PASSPORTS}), of both, or of every passport when neither is given, in the order they were committed: with \`after\`, first every change after that cursor (none missed, none twice), then each new one. Changes made before the feed existed (migration 20261206120000) are not in it; a passport's creation is no change."
  passportStatusChanges(operator: ID, passportIds: [ID!], after: String): PassportStatusChange!
}
`;

@ObjectType('PassportStatusChange', { description: "A change of a passport's status, made by an event of its log." })
export class PassportStatusChange {
  @Field(() => String, { description: 'Where a subscription resumes after this change (`after:`): its place in the feed, in decimal.' })
  cursor!: string;

  @Field(() => ID)
  passportId!: string;

  @Field(() => ID, { description: "The passport's operator." })
  operator!: string;

  @Field(() => Int, { description: 'The sequence number of the event that made the change.' })
  seq!: number;

  @Field(() => String)
  from!: string;

  @Field(() => String)
  to!: string;

  @Field(() => Date)
  recordedAt!: Date;

  static from(row: StatusChangeRow): PassportStatusChange {
    return Object.assign(new PassportStatusChange(), {
      cursor: feedCursor(row.id),
      passportId: row.passportId,
      operator: row.operator,
      seq: row.seq,
      from: row.fromStatus,
      to: row.toStatus,
      recordedAt: row.recordedAt,
    });
  }
}

@ObjectType('PassportStatusChangePage', { description: 'A page of status changes, in the order they were committed.' })
export class PassportStatusChangePage {
  @Field(() => [PassportStatusChange])
  nodes!: PassportStatusChange[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}

@Resolver(() => PassportStatusChange)
export class StatusChangeResolver {
  constructor(private readonly issuer: IssuerService) {}

  @ListSize({ slicingArguments: ['first'], sizedFields: ['nodes'] })
  @Query(() => PassportStatusChangePage, {
    description: `Up to \`first\` (at most ${MAX_FEED_PAGE}) status changes of the passports of \`operator\`, of the passports named, of both, or of every passport, after the cursor \`after\` (from the first without one), in the order they were committed. What Subscription.passportStatusChanges delivers.`,
  })
  async passportStatusChangesAfter(
    @Arg('operator', () => ID, { nullable: true }) operator: string | null,
    @Arg('passportIds', () => [ID], { nullable: true }) passportIds: string[] | null,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('first', () => Int, { nullable: true, defaultValue: 10, description: FEED_PAGE_SIZE }) first: number,
  ): Promise<PassportStatusChangePage> {
    checkFeedPageSize(first);
    const nodes = (await this.issuer.statusChangesAfter({ operator, passportIds }, after, first)).map((row) => PassportStatusChange.from(row));
    return Object.assign(new PassportStatusChangePage(), { nodes, pageInfo: feedPageInfo(nodes, first) });
  }

  @FieldResolver(() => Passport, { description: 'The passport as it is now (not as of the change).' })
  async passport(@Root() change: PassportStatusChange): Promise<Passport> {
    const row = await this.issuer.findPassport(change.passportId);
    // Passports are never deleted.
    return Passport.from(row!);
  }
}
