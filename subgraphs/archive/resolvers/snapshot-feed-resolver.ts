/**
 * A passport's new snapshots as their subscribers read them: the gateway serves
 * Subscription.passportSnapshots (gateway/live/) by reading this query after each subscriber's
 * cursor, so the replay and the live snapshots are the same rows, read with the subscriber's
 * credentials and its selection.
 */
import { Arg, Field, ID, Int, ObjectType, Query, Resolver } from 'type-graphql';
import { feedCursor, MAX_FEED_PAGE } from '../../../lib/db/change-feed.js';
import { PageInfo } from '../../../lib/graphql/common-types.js';
import { ListSize } from '../../../lib/graphql/cost.js';
import { FEED_PAGE_SIZE, feedPageInfo, readWindow } from '../../../lib/graphql/feed-page.js';
import type { SnapshotRepository } from '../data/snapshot-repository.js';
import { Snapshot } from '../schema/snapshot.js';

/** The subscription the gateway serves from this query (lib/graphql/live-feeds.ts). */
export const PASSPORT_SNAPSHOTS_SUBSCRIPTION = `
type Subscription {
  "Each snapshot the archive stores of a passport, in the order they were committed: with \`after\`, first every snapshot after that cursor (none missed, none twice), then each new one. Served by the gateway over graphql-ws and GraphQL over SSE; the selection may reach every field of the graph, e.g. the passport's status."
  passportSnapshots(passportId: ID!, after: String): ArchivedSnapshot!
}
`;

@ObjectType('ArchivedSnapshot', { description: "A snapshot as the feed of a passport's snapshots delivers it." })
export class ArchivedSnapshot {
  @Field(() => String, { description: 'Where a subscription resumes after this snapshot (`after:`): its place in the feed, in decimal.' })
  cursor!: string;

  @Field(() => Snapshot)
  snapshot!: Snapshot;
}

@ObjectType('ArchivedSnapshotPage', { description: "A page of a passport's snapshots, in the order they were committed." })
export class ArchivedSnapshotPage {
  @Field(() => [ArchivedSnapshot])
  nodes!: ArchivedSnapshot[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}

@Resolver(() => ArchivedSnapshot)
export class SnapshotFeedResolver {
  constructor(private readonly repository: SnapshotRepository) {}

  @ListSize({ slicingArguments: ['first'], sizedFields: ['nodes'] })
  @Query(() => ArchivedSnapshotPage, {
    description: `Up to \`first\` (at most ${MAX_FEED_PAGE}) snapshots of a passport after the cursor \`after\` (from the first without one), in the order they were committed. What Subscription.passportSnapshots delivers.`,
  })
  async passportSnapshotsAfter(
    @Arg('passportId', () => ID) passportId: string,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('first', () => Int, { nullable: true, defaultValue: 10, description: FEED_PAGE_SIZE }) first: number,
  ): Promise<ArchivedSnapshotPage> {
    const afterId = readWindow(after, first, 'snapshot');
    const nodes = (await this.repository.snapshotsAfter(passportId, afterId, first)).map(({ feedId, record }) =>
      Object.assign(new ArchivedSnapshot(), { cursor: feedCursor(feedId), snapshot: Snapshot.from(record) }),
    );
    return Object.assign(new ArchivedSnapshotPage(), { nodes, pageInfo: feedPageInfo(nodes, first) });
  }
}
