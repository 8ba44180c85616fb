/**
 * A passport's events as its subscribers read them: the gateway serves Subscription.passportEvents
 * (gateway/live/) by reading this query after each subscriber's cursor, so the replay and the live
 * events are the same rows, read with the subscriber's credentials and its selection.
 */
import { Arg, FieldResolver, ID, Int, Query, Resolver, Root } from 'type-graphql';
import { MAX_FEED_PAGE } from '../../../lib/db/change-feed.js';
import { ListSize } from '../../../lib/graphql/cost.js';
import { checkFeedPageSize, FEED_PAGE_SIZE, feedPageInfo } from '../../../lib/graphql/feed-page.js';
import type { IssuerService } from '../service/issuer-service.js';
import { Passport, PassportEvent, PassportEventPage } from '../schema/types.js';

/** The subscription the gateway serves from this query; composed into the supergraph (lib/graphql/live-feeds.ts). */
export const PASSPORT_EVENTS_SUBSCRIPTION = `
type Subscription {
  "Each event appended to a passport's log, in log order: with \`after\`, first every event after that cursor (none missed, none twice), then each new one as it is appended. Served by the gateway over graphql-ws and GraphQL over SSE; the selection may reach every field of the graph, e.g. the passport's verdict or its snapshots."
  passportEvents(passportId: ID!, after: String): PassportEvent!
}
`;

@Resolver(() => PassportEvent)
export class PassportEventResolver {
  constructor(private readonly issuer: IssuerService) {}

  @ListSize({ slicingArguments: ['first'], sizedFields: ['nodes'] })
  @Query(() => PassportEventPage, {
    nullable: true,
    description: `Up to \`first\` (at most ${MAX_FEED_PAGE}) events of a passport's log after the cursor \`after\` (from the first without one), in log order; null for an unknown passport. What Subscription.passportEvents delivers.`,
  })
  async passportEventsAfter(
    @Arg('passportId', () => ID) passportId: string,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('first', () => Int, { nullable: true, defaultValue: 10, description: FEED_PAGE_SIZE }) first: number,
  ): Promise<PassportEventPage | null> {
    checkFeedPageSize(first);
    const rows = await this.issuer.eventsAfter(passportId, after, first);
    if (!rows) return null;
    const nodes = rows.map((row) => PassportEvent.from(passportId, row));
    return Object.assign(new PassportEventPage(), { nodes, pageInfo: feedPageInfo(nodes, first) });
  }

  @FieldResolver(() => Passport, { description: 'The passport as it is now (not as of the event).' })
  async passport(@Root() event: PassportEvent): Promise<Passport> {
    const row = await this.issuer.findPassport(event.passportId);
    // Passports are never deleted.
    return Passport.from(row!);
  }
}
