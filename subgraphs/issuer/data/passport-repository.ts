/**
 * Passports and their event logs in PostgreSQL.
 *
 * An append locks the passport row (SELECT … FOR UPDATE) and reads from it everything the next
 * event needs: status, Merkle frontier and the last event. So appends to one passport queue on
 * that row and form one chain, appends to different passports never wait on each other, and an
 * append costs O(log n) whatever the length of the log.
 */
import { recordInTransaction } from '../../../lib/audit/admin-log.js';
import { refuseUnlessOwner } from '../../../lib/auth/operators.js';
import { changeChannel, changePayload } from '../../../lib/db/change-feed.js';
import { activeTraceparent } from '../../../lib/ops/tracing.js';
import { Prisma, type PrismaClient } from '../../../prisma/issuer/generated/client.js';
import { StatusChanges } from './status-changes.js';
import { canonicalize, type Signer } from '../../../lib/crypto/index.js';
import {
  appendEvent,
  hashFromHex,
  hashToHex,
  signLogHead,
  statusBits,
  statusPosition,
  EMPTY_FRONTIER,
  LIVE_STATUSES,
  STATUS_LIST_BYTES,
  STATUS_PURPOSES,
  eventCursor,
  type EventActor,
  type EventRecord,
  type LogState,
  type PassportStatus,
  type SignedLogHead,
  type StatusPurpose,
} from '../domain/index.js';

/** PostgreSQL's set_bit counts from the least significant bit of each byte; the lists' entry 0 is the most significant. */
const postgresBit = (entry: number) => (entry >> 3) * 8 + 7 - (entry & 7);

export interface PassportRow {
  id: string;
  operator: string;
  identity: string;
  digitalLink: string;
  granularity: string;
  typeRefId: string;
  typeRefVersion: number;
  configVector: Prisma.JsonValue;
  capabilityClass: string;
  profileId: string | null;
  claims: Prisma.JsonValue;
  status: string;
  core: Prisma.JsonValue;
  logSize: number;
  frontier: string[];
  lastEvent: string | null;
  logHead: Prisma.JsonValue;
  emptyLogHead: Prisma.JsonValue | null;
  latestPack: string | null;
  latestPackAt: Date | null;
  statusIndex: number;
  createdAt: Date;
  updatedAt: Date;
  predecessorId: string | null;
  liveBeforeRule: boolean;
}

/**
 * The columns of a passport's summary: what its small fields (id, status, log size, type, pack,
 * predecessor) and its signing keys (the signed head, the pack) are read from. Six hundred bytes
 * against the whole row's two and a half kilobytes of JSON and more (core, config vector, the empty
 * log's head, last event, frontier), whose reading and mapping is most of what a batch of passports
 * costs when only the summary is asked for.
 */
const SUMMARY_COLUMNS = {
  id: true,
  operator: true,
  status: true,
  logSize: true,
  capabilityClass: true,
  latestPack: true,
  latestPackAt: true,
  typeRefId: true,
  typeRefVersion: true,
  predecessorId: true,
  logHead: true,
} as const satisfies Prisma.PassportSelect;

export type PassportSummaryRow = Pick<PassportRow, keyof typeof SUMMARY_COLUMNS>;

/** Every column of a passport row, named as PassportRow names it, for statements written in SQL. */
const PASSPORT_COLUMNS = Prisma.raw(
  Object.entries({
    id: 'id',
    operator: 'operator',
    identity: 'identity',
    digitalLink: 'digital_link',
    granularity: 'granularity',
    typeRefId: 'type_ref_id',
    typeRefVersion: 'type_ref_version',
    configVector: 'config_vector',
    capabilityClass: 'capability_class',
    profileId: 'profile_id',
    claims: 'claims',
    status: 'status',
    core: 'core',
    logSize: 'log_size',
    frontier: 'frontier',
    lastEvent: 'last_event',
    logHead: 'log_head',
    emptyLogHead: 'empty_log_head',
    latestPack: 'latest_pack',
    latestPackAt: 'latest_pack_at',
    statusIndex: 'status_index',
    createdAt: 'created_at',
    updatedAt: 'updated_at',
    predecessorId: 'predecessor_id',
    liveBeforeRule: 'live_before_rule',
  } satisfies Record<keyof PassportRow, string>)
    .map(([field, column]) => `${column} AS "${field}"`)
    .join(', '),
);

/** The feed of a passport's events (lib/db/change-feed.ts): keyed by passport id, the cursor is the event's. */
export const PASSPORT_EVENTS_FEED = 'passport-events';

/** A stored event as a subscriber reads it. */
export interface StoredEventRow {
  seq: number;
  type: string;
  recordedAt: Date;
  canonical: string;
}

/** A creation refused by the one-live-passport rule: the live passport of each identity that has one, by its position among the passports to create. */
export class LivePassportExists extends Error {
  constructor(readonly live: ReadonlyMap<number, { id: string; status: string }>) {
    super(`passports ${[...live.values()].map((passport) => passport.id).join(', ')} are live`);
  }
}

/** A unique index refused a statement written in SQL (Prisma's P2010, the driver's 23505). */
const isUniqueViolation = (error: unknown) =>
  error instanceof Prisma.PrismaClientKnownRequestError && (error.meta?.driverAdapterError as { cause?: { originalCode?: string } } | undefined)?.cause?.originalCode === '23505';

/** Newest first; the id breaks a tie of creation times. */
const NEWEST_FIRST = [{ createdAt: 'desc' }, { id: 'desc' }] as const satisfies Prisma.PassportOrderByWithRelationInput[];

export interface NewPassport {
  id: string;
  /** The operator that creates and owns it. */
  operator: string;
  identity: string;
  digitalLink: string;
  granularity: string;
  typeRef: { id: string; version: number };
  configVector: object;
  capabilityClass: string;
  profileId: string | null;
  claims: object;
  status: PassportStatus;
  core: object;
  /** The disclosures of the members the profile restricts, whose digests `configVector` (the committed manifest) holds. */
  disclosures?: readonly Omit<StoredDisclosure, 'passportId'>[];
}

/** A restricted member as stored, apart from the passport's public columns. */
export interface StoredDisclosure {
  passportId: string;
  digest: string;
  audience: string;
  disclosure: string;
}

/** What a pack is minted from, read under the row lock. */
export interface PackSourceRow {
  id: string;
  /** The operator that owns it. */
  operator: string;
  digitalLink: string;
  typeRef: { id: string; version: number };
  configVector: unknown;
  capabilityClass: string;
  status: string;
  logHead: SignedLogHead;
  lastEvent: EventRecord | undefined;
}

/** One status list as stored: its bits and when one last changed. */
export interface StatusListRow {
  bits: Uint8Array;
  updatedAt: Date;
}

/**
 * Who writes to a passport: the operator it acts for (null: the platform itself, which may write to
 * any), and the signer of the passport's owner for a purpose, which refuses by throwing (a suspended
 * owner, one not yet delegated).
 */
export interface PassportWriter {
  operator: string | null;
  signer(owner: string, purpose: 'event' | 'carrier'): Promise<Signer>;
}

/** The row as an append sees it, locked, and the restore that holds appends, if one does. */
interface LockedRow {
  operator: string;
  status: string;
  status_index: number;
  log_size: number;
  frontier: string[] | null;
  last_event: string | null;
  unacknowledged_restore: { restored_at: string; snapshot_at: string | null } | null;
}

/**
 * An append refused because the platform was restored and no admin has acknowledged it yet
 * (migration 20261206051720_restores): the next event would take a sequence number a client may
 * already hold, signed over another event, from before the restore.
 */
export class RestoreUnacknowledged extends Error {
  constructor(readonly restore: { restoredAt: string; snapshotAt: string | null }) {
    super(`restored at ${restore.restoredAt}, unacknowledged`);
  }
}

export class PassportRepository {
  readonly #table: Prisma.Sql;
  readonly #events: Prisma.Sql;
  readonly #statusLists: Prisma.Sql;
  readonly #restores: Prisma.Sql;
  /** The service's change channel, notified with each event appended. */
  readonly changeChannel: string;
  /** The status changes the events make (Subscription.passportStatusChanges). */
  readonly statusChanges: StatusChanges;

  constructor(
    private readonly prisma: PrismaClient,
    schema: string,
  ) {
    const qualified = (table: string) => Prisma.raw(`"${schema.replaceAll('"', '""')}"."${table}"`);
    this.#table = qualified('passport');
    this.#events = qualified('passport_event');
    this.#statusLists = qualified('status_list');
    this.#restores = qualified('restore');
    this.changeChannel = changeChannel(schema);
    this.statusChanges = new StatusChanges(prisma, schema, this.changeChannel);
  }

  /** Makes the lists of every purpose that new status indexes fall in, all clear, unless they exist. */
  async #ensureStatusLists(tx: Prisma.TransactionClient, statusIndexes: readonly number[], now: Date): Promise<void> {
    const lists = [...new Set(statusIndexes.map((index) => statusPosition(index).list))];
    await tx.$executeRaw(Prisma.sql`
      INSERT INTO ${this.#statusLists} (purpose, list, bits, updated_at)
      SELECT purpose, l.list, decode(repeat('00', ${STATUS_LIST_BYTES}), 'hex'), ${now.toISOString()}::timestamptz
      FROM unnest(${[...STATUS_PURPOSES]}::text[]) AS purpose CROSS JOIN unnest(${lists}::int[]) AS l(list)
      WHERE NOT EXISTS (SELECT 1 FROM ${this.#statusLists} s WHERE s.list = l.list AND s.purpose = 'revocation')
      ON CONFLICT DO NOTHING`);
  }

  /** Sets or clears a passport's bit in the lists whose bit its status change moves (rare: lifecycle events only). */
  async #writeStatusBits(tx: Prisma.TransactionClient, statusIndex: number, from: PassportStatus, to: PassportStatus, now: Date): Promise<void> {
    const before = statusBits(from);
    const after = statusBits(to);
    const { list, entry } = statusPosition(statusIndex);
    for (const purpose of STATUS_PURPOSES) {
      if (before[purpose] === after[purpose]) continue;
      const value = after[purpose] ? 1 : 0;
      // Concurrent appends to passports of one list queue on its row; updated_at never goes back.
      await tx.$executeRaw(Prisma.sql`
        INSERT INTO ${this.#statusLists} (purpose, list, bits, updated_at)
        VALUES (${purpose}, ${list}, set_bit(decode(repeat('00', ${STATUS_LIST_BYTES}), 'hex'), ${postgresBit(entry)}, ${value}), ${now.toISOString()}::timestamptz)
        ON CONFLICT (purpose, list) DO UPDATE
        SET bits = set_bit(${this.#statusLists}.bits, ${postgresBit(entry)}, ${value}),
            updated_at = GREATEST(${this.#statusLists}.updated_at, EXCLUDED.updated_at)`);
    }
  }

  /** A status list, or null when no passport's index falls in it. */
  async statusList(purpose: StatusPurpose, list: number): Promise<StatusListRow | null> {
    const row = await this.prisma.statusList.findUnique({ where: { purpose_list: { purpose, list } } });
    return row ? { bits: new Uint8Array(row.bits), updatedAt: row.updatedAt } : null;
  }

  /**
   * Creates passports, each with an empty log and the signed head of that empty log, all or none, in
   * one transaction of three statements whatever their number: the newest passport of each identity,
   * one multi-row insert, the status lists their indexes fall in. The one-live-passport rule holds
   * for each: refused (LivePassportExists, naming every identity that has a live passport) while an
   * identity has one; otherwise the identity's newest passport, revoked or at end of life, becomes
   * its predecessor. The identities must be distinct. The partial unique index decides a race: of two
   * creations at once, the second to commit fails on it (or on the predecessor's one successor), and
   * is answered with the passports that won. Returns the rows in the order given.
   */
  async create(passports: readonly NewPassport[], headSigner: Signer, now: Date): Promise<PassportRow[]> {
    const heads = passports.map((passport) => signLogHead(passport.id, EMPTY_FRONTIER, headSigner, now));
    const column = <T>(value: (passport: NewPassport, position: number) => T) => passports.map(value);
    try {
      return await this.prisma.$transaction(
        async (tx) => {
          const newest = await this.#newestOf(tx, passports);
          const live = new Map([...newest].filter(([, passport]) => LIVE_STATUSES.includes(passport.status as PassportStatus)));
          if (live.size > 0) throw new LivePassportExists(live);
          // One statement over arrays, one per column: Prisma's createManyAndReturn took a second for 1,000 rows (docs/benchmarks/onboarding.md).
          const created = await tx.$queryRaw<PassportRow[]>(Prisma.sql`
            INSERT INTO ${this.#table} (id, operator, identity, digital_link, granularity, type_ref_id, type_ref_version, config_vector, capability_class, profile_id,
                                        claims, status, core, log_size, frontier, last_event, log_head, empty_log_head, predecessor_id, created_at, updated_at)
            SELECT id, operator, identity, digital_link, granularity, type_ref_id, type_ref_version, config_vector, capability_class, profile_id,
                   claims, status, core, 0, '{}', NULL, log_head, log_head, predecessor_id, ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz
            FROM unnest(${column((passport) => passport.id)}::text[], ${column((passport) => passport.operator)}::text[], ${column((passport) => passport.identity)}::text[],
                        ${column((passport) => passport.digitalLink)}::text[], ${column((passport) => passport.granularity)}::text[], ${column((passport) => passport.typeRef.id)}::text[],
                        ${column((passport) => passport.typeRef.version)}::int[], ${column((passport) => JSON.stringify(passport.configVector))}::jsonb[],
                        ${column((passport) => passport.capabilityClass)}::text[], ${column((passport) => passport.profileId)}::text[], ${column((passport) => JSON.stringify(passport.claims))}::jsonb[],
                        ${column((passport) => passport.status)}::text[], ${column((passport) => JSON.stringify(passport.core))}::jsonb[], ${heads.map((head) => JSON.stringify(head))}::jsonb[],
                        ${column((_, position) => newest.get(position)?.id ?? null)}::text[])
              AS n(id, operator, identity, digital_link, granularity, type_ref_id, type_ref_version, config_vector, capability_class, profile_id, claims, status, core, log_head, predecessor_id)
            RETURNING ${PASSPORT_COLUMNS}`);
          const disclosures = passports.flatMap((passport) => (passport.disclosures ?? []).map(({ digest, audience, disclosure }) => ({ passportId: passport.id, digest, audience, disclosure })));
          if (disclosures.length > 0) await tx.passportDisclosure.createMany({ data: disclosures });
          await this.#ensureStatusLists(
            tx,
            created.map((row) => row.statusIndex),
            now,
          );
          await recordInTransaction(tx);
          const byId = new Map(created.map((row) => [row.id, row]));
          return passports.map((passport) => byId.get(passport.id)!);
        },
        { timeout: 30_000 },
      );
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      // The winners of the race are live unless they were ended in the meantime: the client may try again.
      const live = new Map([...(await this.#newestOf(this.prisma, passports))].filter(([, passport]) => LIVE_STATUSES.includes(passport.status as PassportStatus)));
      if (live.size > 0) throw new LivePassportExists(live);
      throw error;
    }
  }

  /** The newest passport (rule-counted) of each passport's identity that has one, by the passport's position: one statement. */
  async #newestOf(client: Pick<PrismaClient, '$queryRaw'>, passports: readonly NewPassport[]): Promise<Map<number, { id: string; status: string }>> {
    const rows = await client.$queryRaw<{ i: bigint; id: string; status: string }[]>(Prisma.sql`
      SELECT DISTINCT ON (q.i) q.i, p.id, p.status
      FROM unnest(${passports.map((passport) => passport.digitalLink)}::text[], ${passports.map((passport) => passport.granularity)}::text[]) WITH ORDINALITY AS q(digital_link, granularity, i)
      JOIN ${this.#table} p ON p.digital_link = q.digital_link AND p.granularity = q.granularity AND NOT p.live_before_rule
      ORDER BY q.i, p.created_at DESC, p.id DESC`);
    return new Map(rows.map((row) => [Number(row.i) - 1, { id: row.id, status: row.status }]));
  }

  /**
   * Every passport of an identity: the live one first (rule-counted before any kept from before the
   * rule), then the others newest first.
   */
  async ofIdentity(digitalLink: string, granularity: string): Promise<PassportRow[]> {
    const rows = await this.prisma.passport.findMany({ where: { digitalLink, granularity }, orderBy: [...NEWEST_FIRST] });
    const rank = (row: PassportRow) => (LIVE_STATUSES.includes(row.status as PassportStatus) ? (row.liveBeforeRule ? 1 : 0) : 2);
    return rows.sort((a, b) => rank(a) - rank(b));
  }

  findSuccessor(id: string): Promise<PassportRow | null> {
    return this.prisma.passport.findUnique({ where: { predecessorId: id } });
  }

  findMany(ids: readonly string[]): Promise<PassportRow[]> {
    return this.prisma.passport.findMany({ where: { id: { in: [...ids] } } });
  }

  /** The disclosures of these passports in these audiences, in one statement. */
  disclosuresOf(passportIds: readonly string[], audiences: readonly string[]): Promise<StoredDisclosure[]> {
    if (passportIds.length === 0 || audiences.length === 0) return Promise.resolve([]);
    return this.prisma.passportDisclosure.findMany({ where: { passportId: { in: [...passportIds] }, audience: { in: [...audiences] } }, orderBy: { digest: 'asc' } });
  }

  /** The summary columns of these passports (those that exist), in one statement. */
  findSummaries(ids: readonly string[]): Promise<PassportSummaryRow[]> {
    return this.prisma.passport.findMany({ where: { id: { in: [...ids] } }, select: SUMMARY_COLUMNS });
  }

  /** Which keys signed the events of these passports, and when first and last: one query for them all. */
  async eventKeyRanges(passportIds: readonly string[]): Promise<{ passportId: string; kid: string; first: Date; last: Date }[]> {
    if (passportIds.length === 0) return [];
    const groups = await this.prisma.passportEvent.groupBy({
      by: ['passportId', 'kid'],
      where: { passportId: { in: [...passportIds] } },
      _min: { recordedAt: true },
      _max: { recordedAt: true },
    });
    return groups.map((group) => ({ passportId: group.passportId, kid: group.kid, first: group._min.recordedAt!, last: group._max.recordedAt! }));
  }

  /**
   * The canonical signed texts of the first `logSize` events of each log, in sequence order: the log
   * as a head of that size covers it. Events are only ever appended, so this is the log of a passport
   * row read earlier even when appends have committed since (a reader never gets a head and a longer
   * log). One statement for them all, however many logs a request reads.
   */
  async eventTexts(logs: readonly { passportId: string; logSize: number }[]): Promise<string[][]> {
    if (logs.length === 0) return [];
    const rows = await this.prisma.$queryRaw<{ i: bigint; canonical: string }[]>(Prisma.sql`
      SELECT q.i, e.canonical
      FROM unnest(${logs.map((log) => log.passportId)}::text[], ${logs.map((log) => log.logSize)}::int[]) WITH ORDINALITY AS q(passport_id, size, i)
      JOIN ${this.#events} e ON e.passport_id = q.passport_id AND e.seq < q.size
      ORDER BY q.i, e.seq`);
    const texts = logs.map((): string[] => []);
    for (const row of rows) texts[Number(row.i) - 1]!.push(row.canonical);
    return texts;
  }

  /**
   * Up to `first` events of a passport's log after sequence number `afterSeq`, in sequence order;
   * undefined when the passport does not exist. One statement: the passport's existence and the
   * range of the primary key (passport_id, seq).
   */
  async eventsAfter(passportId: string, afterSeq: number, first: number): Promise<StoredEventRow[] | undefined> {
    const rows = await this.prisma.$queryRaw<{ seq: number | null; type: string | null; recorded_at: Date | null; canonical: string | null }[]>(Prisma.sql`
      SELECT e.seq, e.type, e.recorded_at, e.canonical
      FROM ${this.#table} p
      LEFT JOIN LATERAL (
        SELECT seq, type, recorded_at, canonical FROM ${this.#events}
        WHERE passport_id = p.id AND seq > ${afterSeq} ORDER BY seq LIMIT ${first}
      ) e ON true
      WHERE p.id = ${passportId}
      ORDER BY e.seq`);
    if (rows.length === 0) return undefined;
    return rows.filter((row) => row.seq !== null).map((row) => ({ seq: row.seq!, type: row.type!, recordedAt: row.recorded_at!, canonical: row.canonical! }));
  }

  /**
   * Each log as it stood at `at`, within its first `logSize` events (the head of a row read before):
   * the canonical signed texts of the events recorded up to then, in sequence order, and the signed
   * head kept with the last of them (null for an event appended before heads were kept). One
   * statement for them all; for each, one scan of the primary key's range for its passport
   * (passport_id, seq), no other index to maintain at each append: recorded_at never goes back
   * along a log, so the events up to `at` are a prefix of it, and only they are sent.
   */
  async logsAt(questions: readonly { passportId: string; at: Date; logSize: number }[]): Promise<{ texts: string[]; lastHead: SignedLogHead | undefined }[]> {
    if (questions.length === 0) return [];
    const rows = await this.prisma.$queryRaw<{ i: bigint; canonical: string; log_head: string | null }[]>(Prisma.sql`
      SELECT q.i, e.canonical, CASE WHEN lead(e.seq) OVER (PARTITION BY q.i ORDER BY e.seq) IS NULL THEN e.log_head::text END AS log_head
      FROM unnest(${questions.map((question) => question.passportId)}::text[], ${questions.map((question) => question.at.toISOString())}::timestamptz[], ${questions.map((question) => question.logSize)}::int[])
        WITH ORDINALITY AS q(passport_id, at, size, i)
      JOIN ${this.#events} e ON e.passport_id = q.passport_id AND e.seq < q.size AND e.recorded_at <= q.at
      ORDER BY q.i, e.seq`);
    const logs = questions.map(() => ({ texts: [] as string[], lastHead: undefined as SignedLogHead | undefined }));
    for (const row of rows) {
      const log = logs[Number(row.i) - 1]!;
      log.texts.push(row.canonical);
      log.lastHead = row.log_head == null ? undefined : (JSON.parse(row.log_head) as SignedLogHead);
    }
    return logs;
  }

  /**
   * Appends one event atomically: under the row lock, the domain's appendEvent judges it against the
   * stored state (rule I6, payload schema) and signs it, and the event, the new frontier and the new
   * signed head are written together. A refusal throws, which rolls back and changes nothing; so does
   * an unacknowledged restore (RestoreUnacknowledged), and so does another operator's passport
   * (refuseUnlessOwner). Returns undefined when the passport does not exist.
   */
  async append(
    passportId: string,
    input: { type: string; payload: unknown; actor?: EventActor },
    writer: PassportWriter,
  ): Promise<{ event: EventRecord; head: SignedLogHead; status: PassportStatus } | undefined> {
    return this.prisma.$transaction(
      async (tx) => {
        // The restore's hold is read in the statement that locks the row: no statement more per append.
        const locked = await tx.$queryRaw<LockedRow[]>(Prisma.sql`
          SELECT operator, status, status_index, log_size, frontier, last_event,
                 (SELECT json_build_object('restored_at', restored_at, 'snapshot_at', snapshot_at) FROM ${this.#restores}
                   WHERE acknowledged_at IS NULL ORDER BY id LIMIT 1) AS unacknowledged_restore
          FROM ${this.#table} WHERE id = ${passportId} FOR UPDATE`);
        const row = locked[0];
        if (!row) return undefined;
        refuseUnlessOwner(writer, { kind: 'passport', id: passportId, owner: row.operator });
        const held = row.unacknowledged_restore;
        if (held) throw new RestoreUnacknowledged({ restoredAt: held.restored_at, snapshotAt: held.snapshot_at });
        const eventSigner = await writer.signer(row.operator, 'event');
        const state: LogState = {
          passport_id: passportId,
          status: row.status as PassportStatus,
          ...(row.last_event === null ? {} : { last: JSON.parse(row.last_event) as EventRecord }),
          frontier: { size: row.log_size, hashes: (row.frontier ?? []).map((hex) => hashFromHex(hex)!) },
        };
        // The clock is read under the lock, so recorded_at never goes back along the chain.
        const now = new Date();
        const { event, state: next } = appendEvent(state, input, eventSigner, now);
        const head = signLogHead(passportId, next.frontier, eventSigner, now);
        const canonical = canonicalize(event);
        // The event row, the passport row and the change notice (delivered at commit, to wake the
        // passport's subscribers) in one statement: one round trip under the lock.
        const notice = changePayload({ feed: PASSPORT_EVENTS_FEED, key: passportId, cursor: eventCursor(event.seq), at: now.getTime(), trace: activeTraceparent() });
        await tx.$executeRaw(Prisma.sql`
          WITH appended AS (
            INSERT INTO ${this.#events} (passport_id, seq, type, recorded_at, kid, canonical, log_head)
            VALUES (${passportId}, ${event.seq}, ${event.type}, ${event.recorded_at}::timestamptz, ${event.kid}, ${canonical}, ${JSON.stringify(head)}::jsonb)
          )
          UPDATE ${this.#table}
          SET status = ${next.status},
              log_size = ${next.frontier.size},
              frontier = ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(next.frontier.hashes.map(hashToHex))}::jsonb)),
              last_event = ${canonical},
              log_head = ${JSON.stringify(head)}::jsonb,
              updated_at = ${event.recorded_at}::timestamptz
          FROM (SELECT pg_notify(${this.changeChannel}, ${notice})) AS notified
          WHERE id = ${passportId}`);
        if (next.status !== state.status) await this.#writeStatusBits(tx, row.status_index, state.status, next.status, now);
        await recordInTransaction(tx);
        // Last: the feed's order lock is held from here to the commit.
        if (next.status !== state.status) {
          await this.statusChanges.record(tx, { passportId, operator: row.operator, seq: event.seq, fromStatus: state.status, toStatus: next.status, recordedAt: now });
        }
        return { event, head, status: next.status };
      },
      { timeout: 30_000 },
    );
  }

  /**
   * Mints under the row lock, so the pack is made from one consistent head and status; `mint`
   * throws to refuse (nothing is recorded), as another operator's passport does (refuseUnlessOwner).
   * Returns undefined when the passport does not exist.
   */
  async mintPack<T extends { text: string }>(passportId: string, writer: PassportWriter, mint: (row: PackSourceRow, signer: Signer, now: Date) => T): Promise<T | undefined> {
    return this.prisma.$transaction(
      async (tx) => {
        const locked = await tx.$queryRaw<
          {
            operator: string;
            digital_link: string;
            type_ref_id: string;
            type_ref_version: number;
            config_vector: string;
            capability_class: string;
            status: string;
            log_head: string;
            last_event: string | null;
          }[]
        >(
          Prisma.sql`SELECT operator, digital_link, type_ref_id, type_ref_version, config_vector::text AS config_vector, capability_class, status, log_head::text AS log_head, last_event
                     FROM ${this.#table} WHERE id = ${passportId} FOR UPDATE`,
        );
        const row = locked[0];
        if (!row) return undefined;
        refuseUnlessOwner(writer, { kind: 'passport', id: passportId, owner: row.operator });
        const signer = await writer.signer(row.operator, 'carrier');
        const now = new Date();
        const pack = mint(
          {
            id: passportId,
            operator: row.operator,
            digitalLink: row.digital_link,
            typeRef: { id: row.type_ref_id, version: row.type_ref_version },
            configVector: JSON.parse(row.config_vector) as unknown,
            capabilityClass: row.capability_class,
            status: row.status,
            logHead: JSON.parse(row.log_head) as SignedLogHead,
            lastEvent: row.last_event === null ? undefined : (JSON.parse(row.last_event) as EventRecord),
          },
          signer,
          now,
        );
        await tx.$executeRaw(Prisma.sql`UPDATE ${this.#table} SET latest_pack = ${pack.text}, latest_pack_at = ${now.toISOString()}::timestamptz WHERE id = ${passportId}`);
        await recordInTransaction(tx);
        return pack;
      },
      { timeout: 30_000 },
    );
  }
}
