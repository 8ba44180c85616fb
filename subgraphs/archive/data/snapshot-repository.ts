/**
 * Snapshots and their bytes in PostgreSQL. The archive bytes are kept once, as fixed-size chunks
 * (`snapshot_chunk`), each with its own SHA-512 so that a changed or lost chunk is noticed when it
 * is read; the snapshot row holds the whole archive's digest and its notarization.
 */
import { createHash } from 'node:crypto';
import { recordInTransaction } from '../../../lib/audit/admin-log.js';
import { appendToFeed, feedCursor } from '../../../lib/db/change-feed.js';
import type { PrismaClient } from '../../../prisma/archive/generated/client.js';

/** Chunks of 1 MiB: large enough that a 10,000-event bag is a handful of rows, small enough to page. */
export const SNAPSHOT_CHUNK_SIZE = 1024 * 1024;

/** A stored snapshot, without its bytes. */
export interface SnapshotRecord {
  id: string;
  passportId: string;
  createdAt: Date;
  size: number;
  sha512: string;
  tagmanifestSha512: string;
  payloadOxum: string;
  chunkSize: number;
  chunkCount: number;
  notarization: Record<string, unknown>;
  notaryKid: string;
}

/** The feed of new snapshots (lib/db/change-feed.ts): keyed by passport id, the cursor is the snapshot's feed id. */
export const PASSPORT_SNAPSHOTS_FEED = 'passport-snapshots';

/** What is known of a snapshot only once all its bytes have gone by. */
export type SealedSnapshot = Omit<SnapshotRecord, 'id' | 'chunkSize' | 'chunkCount'>;

/** A snapshot's stored bytes differ from what was written: a chunk is missing or its digest is wrong. */
export class StoredBytesCorrupt extends Error {
  constructor(
    readonly snapshotId: string,
    readonly seq: number,
    reason: string,
  ) {
    super(`chunk ${seq} of snapshot ${snapshotId} ${reason}`);
    this.name = 'StoredBytesCorrupt';
  }
}

/** Position in the list of snapshots, ordered by creation time, then id. */
export interface SnapshotCursor {
  createdAt: Date;
  id: string;
}

export interface SnapshotQuery {
  passportId?: string;
  /** Only snapshots that existed at this instant. */
  at?: Date;
  after?: SnapshotCursor;
  limit: number;
}

type SnapshotRow = Omit<SnapshotRecord, 'notarization'> & { notarization: unknown; feedId?: bigint };

// The feed id is the feed's (snapshotsAfter), not part of a record.
const toRecord = ({ feedId: _feedId, ...row }: SnapshotRow): SnapshotRecord => ({ ...row, notarization: row.notarization as Record<string, unknown> });

/** PostgreSQL text cannot hold NUL: no stored id contains one, and a query with one would fail. */
const storable = (text: string) => !text.includes('\u0000');

export class SnapshotRepository {
  /** `changeChannel`: the service's change channel (lib/db/change-feed.ts), notified of each new snapshot. */
  constructor(
    private readonly prisma: PrismaClient,
    private readonly changeChannel: string,
    readonly chunkSize = SNAPSHOT_CHUNK_SIZE,
  ) {}

  /**
   * Stores a snapshot in one transaction: the bytes as they are read, chunk by chunk, then the row
   * that `seal` makes once the last byte is written (it may sign the digest). If reading, sealing or
   * any write fails, nothing is stored. Memory holds one chunk at a time.
   */
  async create(id: string, bytes: AsyncIterable<Uint8Array>, seal: (chunkCount: number) => SealedSnapshot): Promise<SnapshotRecord> {
    return this.prisma.$transaction(
      async (tx) => {
        let seq = 0;
        for await (const chunk of rechunk(bytes, this.chunkSize)) {
          await tx.snapshotChunk.create({ data: { snapshotId: id, seq, bytes: chunk, sha512: sha512(chunk) } });
          seq += 1;
        }
        const sealed = seal(seq);
        await recordInTransaction(tx);
        // Last: the feed's order lock is held from the row's feed id to the commit, which the notice waits for.
        const row = await appendToFeed(
          tx,
          { channel: this.changeChannel, feed: PASSPORT_SNAPSHOTS_FEED },
          () => tx.snapshot.create({ data: { ...sealed, id, chunkSize: this.chunkSize, chunkCount: seq, notarization: sealed.notarization as object } }),
          (created) => ({ key: created.passportId, cursor: feedCursor(created.feedId) }),
        );
        return toRecord(row);
      },
      // A large passport takes a while to write; the default 5 s would abort it halfway.
      { timeout: 10 * 60_000 },
    );
  }

  async find(id: string): Promise<SnapshotRecord | undefined> {
    if (!storable(id)) return undefined;
    const row = await this.prisma.snapshot.findUnique({ where: { id } });
    return row ? toRecord(row) : undefined;
  }

  /** The snapshots with these ids, in no particular order; unknown ids are left out. */
  async findMany(ids: readonly string[]): Promise<SnapshotRecord[]> {
    const rows = await this.prisma.snapshot.findMany({ where: { id: { in: ids.filter(storable) } } });
    return rows.map(toRecord);
  }

  /** Every snapshot of these passports, oldest first: one query however many passports. */
  async ofPassports(passportIds: readonly string[]): Promise<SnapshotRecord[]> {
    const ids = passportIds.filter(storable);
    if (ids.length === 0) return [];
    const rows = await this.prisma.snapshot.findMany({ where: { passportId: { in: ids } }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    return rows.map(toRecord);
  }

  /** Up to `first` snapshots of a passport after the one of feed id `afterId`, in the order they were committed, each with its feed id. */
  async snapshotsAfter(passportId: string, afterId: bigint, first: number): Promise<{ feedId: bigint; record: SnapshotRecord }[]> {
    if (!storable(passportId)) return [];
    const rows = await this.prisma.snapshot.findMany({ where: { passportId, feedId: { gt: afterId } }, orderBy: { feedId: 'asc' }, take: first });
    return rows.map((row) => ({ feedId: row.feedId, record: toRecord(row) }));
  }

  /** Up to `limit` snapshots after the cursor, oldest first. */
  async list(query: SnapshotQuery): Promise<SnapshotRecord[]> {
    const { after } = query;
    if ((query.passportId !== undefined && !storable(query.passportId)) || (after && !storable(after.id))) return [];
    const rows = await this.prisma.snapshot.findMany({
      where: {
        ...(query.passportId === undefined ? {} : { passportId: query.passportId }),
        ...(query.at === undefined ? {} : { createdAt: { lte: query.at } }),
        ...(after ? { OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }] } : {}),
      },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: query.limit,
    });
    return rows.map(toRecord);
  }

  /**
   * Chunks `from` … `from + count - 1` of a snapshot (fewer at the end), each checked against its
   * digest. Throws `StoredBytesCorrupt` when one is missing or altered.
   */
  async chunks(snapshot: Pick<SnapshotRecord, 'id' | 'chunkCount'>, from: number, count: number): Promise<Uint8Array[]> {
    const end = Math.min(from + count, snapshot.chunkCount);
    if (from >= end) return [];
    const rows = await this.prisma.snapshotChunk.findMany({
      where: { snapshotId: snapshot.id, seq: { gte: from, lt: end } },
      orderBy: { seq: 'asc' },
    });
    return Array.from({ length: end - from }, (_, index) => {
      const seq = from + index;
      const row = rows[index];
      if (!row || row.seq !== seq) throw new StoredBytesCorrupt(snapshot.id, seq, 'is missing');
      if (!Buffer.from(sha512(row.bytes)).equals(Buffer.from(row.sha512))) throw new StoredBytesCorrupt(snapshot.id, seq, 'does not match its digest');
      return row.bytes;
    });
  }
}

/** Regroups a byte stream into chunks of exactly `size` bytes, the last one shorter. */
export async function* rechunk(source: AsyncIterable<Uint8Array>, size: number): AsyncGenerator<Uint8Array<ArrayBuffer>> {
  let buffer = new Uint8Array(size);
  let filled = 0;
  for await (const piece of source) {
    let offset = 0;
    while (offset < piece.byteLength) {
      const taken = Math.min(size - filled, piece.byteLength - offset);
      buffer.set(piece.subarray(offset, offset + taken), filled);
      filled += taken;
      offset += taken;
      if (filled === size) {
        yield buffer;
        buffer = new Uint8Array(size);
        filled = 0;
      }
    }
  }
  if (filled > 0) yield buffer.slice(0, filled);
}

function sha512(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(createHash('sha512').update(bytes).digest());
}
