/** Thin resolvers over the snapshot service and repository; errors leave as RFC 9457 problems. */
import { Cost, ListSize } from '../../../lib/graphql/cost.js';
import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { RequestContext } from '../../../lib/graphql/context.js';
import { PageInfo } from '../../../lib/graphql/common-types.js';
import { badRequest, ProblemError } from '../../../lib/problem.js';
import { StoredBytesCorrupt, type SnapshotCursor, type SnapshotRepository } from '../data/snapshot-repository.js';
import { Snapshot, SnapshotConnection } from '../schema/snapshot.js';
import type { SnapshotService } from '../service/snapshot-service.js';

export const MAX_SNAPSHOT_PAGE = 100;
/** At most 8 chunks (8 MiB of archive) per request keeps every answer, and whoever relays it, bounded. */
export const MAX_CHUNKS_PER_REQUEST = 8;
/** What reading one chunk (1 MiB) from the database and sending it base64 through the gateway costs (lib/graphql/cost.ts). */
const CHUNK_WEIGHT = 3000;

export interface SnapshotResolverDependencies {
  snapshots: SnapshotService;
  repository: SnapshotRepository;
}

export function encodeCursor(cursor: SnapshotCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt.toISOString(), cursor.id])).toString('base64url');
}

export function decodeCursor(text: string): SnapshotCursor {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    const at = new Date(createdAt as string);
    if (typeof createdAt === 'string' && typeof id === 'string' && !id.includes('\u0000') && !Number.isNaN(at.getTime())) return { createdAt: at, id };
  } catch {
    // Reported below like any other malformed cursor.
  }
  throw badRequest('INVALID_CURSOR', 'after must be a cursor from a previous page.');
}

@Resolver(() => Snapshot)
export class SnapshotResolver {
  constructor(private readonly dependencies: SnapshotResolverDependencies) {}

  @Query(() => Snapshot, { name: 'snapshot', nullable: true, description: 'One snapshot, or null when there is none with this id.' })
  async snapshot(@Arg('id', () => ID) id: string): Promise<Snapshot | null> {
    const record = await this.dependencies.repository.find(id);
    return record ? Snapshot.from(record) : null;
  }

  @ListSize({ slicingArguments: ['first'], sizedFields: ['nodes'], assumedSize: 20, requireOneSlicingArgument: false })
  @Query(() => SnapshotConnection, { name: 'snapshots', description: 'Snapshots, oldest first, optionally of one passport and as they existed at an instant.' })
  async snapshots(
    @Arg('passportId', () => ID, { nullable: true }) passportId: string | null,
    @Arg('at', () => Date, { nullable: true, description: 'Only snapshots that existed at this instant.' }) at: Date | null,
    @Arg('first', () => Int, { nullable: true, defaultValue: 20, description: `Page size, 1 to ${MAX_SNAPSHOT_PAGE}.` }) first: number,
    @Arg('after', () => String, { nullable: true, description: 'endCursor of the previous page.' }) after: string | null,
  ): Promise<SnapshotConnection> {
    if (first < 1 || first > MAX_SNAPSHOT_PAGE) throw badRequest('INVALID_QUERY', `first must be between 1 and ${MAX_SNAPSHOT_PAGE}.`);
    const records = await this.dependencies.repository.list({
      ...(passportId === null ? {} : { passportId }),
      ...(at === null ? {} : { at }),
      ...(after === null ? {} : { after: decodeCursor(after) }),
      limit: first + 1,
    });
    const page = records.slice(0, first);
    const last = page[page.length - 1];
    return Object.assign(new SnapshotConnection(), { nodes: page.map(Snapshot.from), pageInfo: PageInfo.of(last && records.length > first ? encodeCursor(last) : null) });
  }

  @Authorized('writer')
  // Gathers the passport through the graph (its events and verdict among it) and bags it.
  @Cost(10_000)
  @Mutation(() => Snapshot, {
    name: 'createSnapshot',
    description: 'Snapshots a passport of the caller’s operator (any, for the platform admin): gathers it through the graph, stores its bag and the notarization of the bag in one transaction.',
  })
  async createSnapshot(@Arg('passportId', () => ID) passportId: string, @Ctx() context: RequestContext): Promise<Snapshot> {
    return Snapshot.from(await this.dependencies.snapshots.create(passportId, context.principal!));
  }

  @Cost(CHUNK_WEIGHT)
  @ListSize({ slicingArguments: ['count'] })
  @FieldResolver(() => [String], {
    description: `Chunks from..from+count-1 of the archive (at most ${MAX_CHUNKS_PER_REQUEST}), each base64 (RFC 4648 §4); fewer at the end.`,
  })
  async chunks(@Root() snapshot: Snapshot, @Arg('from', () => Int) from: number, @Arg('count', () => Int) count: number): Promise<string[]> {
    if (from < 0 || from > snapshot.chunkCount) throw badRequest('INVALID_CHUNK_RANGE', `from must be between 0 and ${snapshot.chunkCount}.`);
    if (count < 1 || count > MAX_CHUNKS_PER_REQUEST) throw badRequest('INVALID_CHUNK_RANGE', `count must be between 1 and ${MAX_CHUNKS_PER_REQUEST}.`);
    try {
      const chunks = await this.dependencies.repository.chunks(snapshot, from, count);
      return chunks.map((chunk) => Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('base64'));
    } catch (error) {
      if (!(error instanceof StoredBytesCorrupt)) throw error;
      console.error(`[archive] ${error.message}`);
      throw new ProblemError(500, 'SNAPSHOT_CORRUPT', `The stored bytes of snapshot ${snapshot.id} fail their fixity check; they are not served.`, { snapshot_id: snapshot.id });
    }
  }
}
