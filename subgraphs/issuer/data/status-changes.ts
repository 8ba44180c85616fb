/**
 * The status changes of passports, appended in the transaction of the event that made each, and read
 * after a cursor by operator or by passports (Subscription.passportStatusChanges). The table's id is
 * the cursor, drawn under the feed's order lock (lib/db/change-feed.ts), so ids commit in order.
 */
import { appendToFeed, feedCursor } from '../../../lib/db/change-feed.js';
import { Prisma, type PrismaClient } from '../../../prisma/issuer/generated/client.js';

/** The feed of passports' status changes, keyed by operator. */
export const PASSPORT_STATUS_FEED = 'passport-status';
/** The same changes notified under their passport's id, which wakes the subscriptions to a set of passports (lib/graphql/live-feeds.ts). */
export const PASSPORT_STATUS_BY_PASSPORT_FEED = 'passport-status-by-passport';

export interface StatusChangeRow {
  id: bigint;
  passportId: string;
  operator: string;
  seq: number;
  fromStatus: string;
  toStatus: string;
  recordedAt: Date;
}

/** Whose status changes are read: those of an operator's passports, of the passports named, of both, or (neither) of every passport. */
export interface StatusChangeScope {
  operator?: string;
  passportIds?: readonly string[];
}

export class StatusChanges {
  readonly #table: Prisma.Sql;

  constructor(
    private readonly prisma: PrismaClient,
    schema: string,
    private readonly channel: string,
  ) {
    this.#table = Prisma.raw(`"${schema.replaceAll('"', '""')}"."passport_status_change"`);
  }

  /** Records a change in the event's transaction, last before its commit, and notifies the operator's key. */
  async record(tx: Prisma.TransactionClient, change: Omit<StatusChangeRow, 'id'>): Promise<void> {
    await appendToFeed(
      tx,
      { channel: this.channel, feed: PASSPORT_STATUS_FEED },
      () =>
        tx.$queryRaw<{ id: bigint }[]>(Prisma.sql`
        INSERT INTO ${this.#table} (passport_id, operator, seq, from_status, to_status, recorded_at)
        VALUES (${change.passportId}, ${change.operator}, ${change.seq}, ${change.fromStatus}, ${change.toStatus}, ${change.recordedAt}::timestamptz)
        RETURNING id`),
      ([inserted]) => ({
        key: change.operator,
        cursor: feedCursor(inserted!.id),
        at: change.recordedAt.getTime(),
        also: [{ feed: PASSPORT_STATUS_BY_PASSPORT_FEED, key: change.passportId }],
      }),
    );
  }

  /** Up to `first` changes in the scope after the change of id `afterId`, in commit order. */
  async after(scope: StatusChangeScope, afterId: bigint, first: number): Promise<StatusChangeRow[]> {
    const where = [
      ...(scope.operator === undefined ? [] : [Prisma.sql`operator = ${scope.operator}`]),
      ...(scope.passportIds === undefined ? [] : [Prisma.sql`passport_id = ANY(${[...scope.passportIds]}::text[])`]),
      Prisma.sql`id > ${afterId}`,
    ];
    const rows = await this.prisma.$queryRaw<{ id: bigint; passport_id: string; operator: string; seq: number; from_status: string; to_status: string; recorded_at: Date }[]>(Prisma.sql`
      SELECT id, passport_id, operator, seq, from_status, to_status, recorded_at FROM ${this.#table}
      WHERE ${Prisma.join(where, ' AND ')} ORDER BY id LIMIT ${first}`);
    return rows.map((row) => ({
      id: row.id,
      passportId: row.passport_id,
      operator: row.operator,
      seq: row.seq,
      fromStatus: row.from_status,
      toStatus: row.to_status,
      recordedAt: row.recorded_at,
    }));
  }
}
