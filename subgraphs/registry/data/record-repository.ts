/**
 * Registry records in PostgreSQL: one `record` row per record (its kind and current version) and
 * one immutable `record_version` row per version. Every write is one transaction; concurrent
 * writers on the same base version are decided by a compare-and-set on `record.current_version`,
 * with the (id, version) primary key as the last line of defence, so exactly one of them wins.
 */
import {
  RegistryError,
  appendVersion,
  applicableAt,
  isProfileManifestBody,
  isValidRecordId,
  parseRecordRef,
  scopeOfBody,
  supersessionChain,
  type Applicable,
  type ApplicabilityQuery,
  type JsonObject,
  type ListQuery,
  type NewVersionRequest,
  type Page,
  type RecordKind,
  type RecordStatus,
  type RecordVersion,
  type SupersessionChain,
} from '../domain/index.js';
import { pageFrom } from '../domain/listing.js';
import { recordInTransaction } from '../../../lib/audit/admin-log.js';
import { DEFAULT_OPERATOR, refuseUnlessOwner } from '../../../lib/auth/operators.js';
import { canonicalize } from '../../../lib/crypto/jcs.js';
import { Prisma, type PrismaClient } from '../../../prisma/registry/generated/client.js';

/** A stored version and the number of its record's current version. */
export interface StoredVersion extends RecordVersion {
  readonly currentVersion: number;
}

/** Why a write was refused for reasons of stored state rather than of the request's content. */
export class RecordStateError extends Error {
  constructor(
    readonly code: 'RECORD_EXISTS' | 'NOT_FOUND' | 'SEED_CONFLICT',
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'RecordStateError';
  }
}

type VersionRow = Prisma.RegistryRecordVersionGetPayload<{ include: { record: { select: { currentVersion: true } } } }>;
type ChainRow = Omit<Prisma.RegistryRecordVersionGetPayload<object>, 'body' | 'scoped'>;

const iso = (date: Date | null) => (date === null ? null : date.toISOString());

function toVersion(row: Omit<VersionRow, 'record'>): RecordVersion {
  return {
    id: row.id,
    kind: row.kind as RecordKind,
    version: row.version,
    status: row.status as RecordStatus,
    body: row.body as JsonObject,
    effectiveFrom: iso(row.effectiveFrom),
    effectiveTo: iso(row.effectiveTo),
    createdAt: row.createdAt.toISOString(),
    supersedes: row.supersedes,
  };
}

const toStored = (row: VersionRow): StoredVersion => ({ ...toVersion(row), currentVersion: row.record.currentVersion });

/** The row of a new version, as the domain built it. */
function versionRow(version: RecordVersion): Prisma.RegistryRecordVersionCreateManyInput {
  return {
    id: version.id,
    kind: version.kind,
    version: version.version,
    status: version.status,
    body: version.body as Prisma.InputJsonObject,
    effectiveFrom: version.effectiveFrom === null ? null : new Date(version.effectiveFrom),
    effectiveTo: version.effectiveTo === null ? null : new Date(version.effectiveTo),
    createdAt: new Date(version.createdAt),
    supersedes: version.supersedes,
    scoped: scopeOfBody(version.kind, version.body) !== undefined,
  };
}

type Db = PrismaClient | Prisma.TransactionClient;

/**
 * A profile manifest names a model version, protocol bindings and verification mechanisms by
 * registry id; each must be a stored record of that kind, so a profile never points nowhere.
 * Records are never deleted, so what this finds stays true.
 */
async function checkProfileReferences(db: Db, version: RecordVersion): Promise<void> {
  if (version.kind !== 'generic' || !isProfileManifestBody(version.body)) return;
  const body = version.body as { model: string; protocol_bindings?: string[]; verification_mechanisms?: string[] };
  const model = parseRecordRef(body.model);
  const stored = await db.registryRecordVersion.findUnique({ where: { id_version: model }, select: { kind: true } });
  const problems: string[] = [];
  if (stored?.kind !== 'model') problems.push(`model ${body.model} is not a stored model version`);
  const wanted = [...(body.protocol_bindings ?? []).map((id) => ({ id, kind: 'protocol_binding' })), ...(body.verification_mechanisms ?? []).map((id) => ({ id, kind: 'verification_mechanism' }))];
  if (wanted.length > 0) {
    const heads = await db.registryRecord.findMany({ where: { id: { in: wanted.map((ref) => ref.id) } }, select: { id: true, kind: true } });
    const kinds = new Map(heads.map((head) => [head.id, head.kind]));
    for (const ref of wanted) if (kinds.get(ref.id) !== ref.kind) problems.push(`${ref.id} is not a stored ${ref.kind.replaceAll('_', ' ')}`);
  }
  if (problems.length > 0) throw new RegistryError('INVALID_RECORD', `the profile manifest refers to records the registry does not hold: ${problems.join('; ')}`);
}

/**
 * Versions by (id, version), one `id IN (…)` clause per version number: a page's records are
 * mostly at a few version numbers, and PostgreSQL plans that far faster than one OR per pair.
 */
function whereRefs(refs: readonly { id: string; version: number }[]): Prisma.RegistryRecordVersionWhereInput {
  const idsByVersion = new Map<number, string[]>();
  for (const { id, version } of refs) {
    const ids = idsByVersion.get(version);
    if (ids) ids.push(id);
    else idsByVersion.set(version, [id]);
  }
  return { OR: [...idsByVersion].map(([version, ids]) => ({ version, id: { in: ids } })) };
}

const isUniqueViolation = (error: unknown) => error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';

/** Ids above every id with this prefix: ids are ASCII `[a-z0-9._-]`, all below `~` in byte order. */
const PREFIX_END = '~';

export interface SeedOutcome {
  records: number;
  versionsInserted: number;
  versionsPresent: number;
  skipped: { kind: string; id: string; reason: string }[];
}

/** Transactions that take a moment (the seed) get more than Prisma's 5 s default. */
const LONG_TRANSACTION = { timeout: 30_000 };

export class RecordRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** One version (the current one when `version` is absent) of the record `id`, if of `kind` when given. */
  async find(id: string, options: { kind?: RecordKind; version?: number | null } = {}): Promise<StoredVersion | null> {
    // No record has an id outside the syntax (nor can PostgreSQL take a NUL in a text parameter).
    if (!isValidRecordId(id)) return null;
    const row = await this.prisma.registryRecordVersion.findFirst({
      where: { id, ...(options.kind ? { kind: options.kind } : {}), ...(options.version == null ? {} : { version: options.version }) },
      orderBy: { version: 'desc' },
      include: { record: { select: { currentVersion: true } } },
    });
    return row ? toStored(row) : null;
  }

  /**
   * `find` for many questions at once (the aliased root fields of a request): the latest version
   * of each record asked without a version in one grouped query, then every version in one more.
   */
  async findEach(questions: readonly { id: string; kind?: RecordKind; version?: number | null }[]): Promise<(StoredVersion | null)[]> {
    const latestWanted = [...new Set(questions.filter((question) => question.version == null && isValidRecordId(question.id)).map((question) => question.id))];
    const latest = latestWanted.length
      ? new Map((await this.prisma.registryRecordVersion.groupBy({ by: ['id'], where: { id: { in: latestWanted } }, _max: { version: true } })).map((row) => [row.id, row._max.version]))
      : new Map<string, number | null>();
    const refs = questions.flatMap((question) => {
      const version = question.version ?? latest.get(question.id);
      return version == null ? [] : [{ id: question.id, version }];
    });
    const found = new Map((await this.findMany(refs)).map((stored) => [`${stored.id}@${stored.version}`, stored]));
    return questions.map((question) => {
      const stored = found.get(`${question.id}@${question.version ?? latest.get(question.id)}`);
      return stored && (!question.kind || stored.kind === question.kind) ? stored : null;
    });
  }

  /** Many versions at once, for entity references: one query whatever the count. */
  async findMany(refs: readonly { id: string; version: number }[]): Promise<StoredVersion[]> {
    const possible = refs.filter((ref) => isValidRecordId(ref.id));
    if (possible.length === 0) return [];
    const rows = await this.prisma.registryRecordVersion.findMany({
      where: whereRefs(possible),
      include: { record: { select: { currentVersion: true } } },
    });
    return rows.map(toStored);
  }

  /** The supersession chain of a record, or null when there is no such record (of that kind). */
  async supersession(id: string, kind?: RecordKind): Promise<SupersessionChain | null> {
    if (!isValidRecordId(id)) return null;
    const rows: ChainRow[] = await this.prisma.registryRecordVersion.findMany({
      where: { id, ...(kind ? { kind } : {}) },
      orderBy: { version: 'asc' },
      omit: { body: true, scoped: true },
    });
    if (rows.length === 0) return null;
    return supersessionChain(rows.map((row) => toVersion({ ...row, body: {}, scoped: false })));
  }

  /** A page of one kind's records at their current versions, in id (byte) order. */
  async list(kind: RecordKind, query: ListQuery): Promise<Page<StoredVersion>> {
    const id: Prisma.StringFilter = {};
    if (query.after !== null) id.gt = query.after;
    if (query.idPrefix !== null) Object.assign(id, { gte: query.idPrefix, lt: `${query.idPrefix}${PREFIX_END}` });
    const heads = await this.prisma.registryRecord.findMany({
      where: {
        kind,
        id,
        ...(query.statuses ? { status: { in: [...query.statuses] } } : {}),
        ...(query.updatedSince ? { updatedAt: { gte: new Date(query.updatedSince) } } : {}),
      },
      orderBy: { id: 'asc' },
      take: query.limit + 1,
      select: { id: true, currentVersion: true },
    });
    const page = pageFrom(heads, query.limit);
    const rows = page.items.length === 0 ? [] : await this.prisma.registryRecordVersion.findMany({ where: whereRefs(page.items.map((head) => ({ id: head.id, version: head.currentVersion }))) });
    const byId = new Map(rows.map((row) => [row.id, row]));
    // A head and its current version are written in one transaction, so every head has its version.
    return { items: page.items.map((head) => ({ ...toVersion(byId.get(head.id)!), currentVersion: head.currentVersion })), nextCursor: page.nextCursor };
  }

  /** The model and profile versions that apply, read from the versions whose window holds `at`. */
  async applicable(query: ApplicabilityQuery): Promise<Applicable[]> {
    const at = new Date(query.at);
    const rows = await this.prisma.registryRecordVersion.findMany({
      where: {
        scoped: true,
        status: { not: 'draft' },
        AND: [{ OR: [{ effectiveFrom: null }, { effectiveFrom: { lte: at } }] }, { OR: [{ effectiveTo: null }, { effectiveTo: { gt: at } }] }],
      },
    });
    return applicableAt(rows.map(toVersion), query);
  }

  /**
   * Creates a record at version 1, owned by `operator`. An id already in use, by a record of any
   * kind, is RECORD_EXISTS; two concurrent creations of one id meet at the primary key.
   */
  async create(kind: RecordKind, id: string, request: Omit<NewVersionRequest, 'expectedVersion'>, now: Date, operator: string): Promise<StoredVersion> {
    // The request is checked first (its id included, before any id reaches the database).
    const version = appendVersion(kind, id, [], { ...request, expectedVersion: 0 }, now);
    const existing = await this.prisma.registryRecord.findUnique({ where: { id }, select: { kind: true } });
    if (existing) throw recordExists(id, existing.kind);
    await checkProfileReferences(this.prisma, version);
    const { id: _id, kind: _kind, ...row } = versionRow(version);
    try {
      await this.prisma.$transaction(async (tx) => {
        await tx.registryRecord.create({
          data: {
            id,
            kind,
            currentVersion: version.version,
            status: version.status,
            operator,
            createdAt: now,
            updatedAt: now,
            versions: { create: row },
          },
        });
        await recordInTransaction(tx);
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const winner = await this.prisma.registryRecord.findUnique({ where: { id }, select: { kind: true } });
      throw recordExists(id, winner?.kind ?? kind);
    }
    return { ...version, currentVersion: version.version };
  }

  /**
   * Adds the next version to the record (kind, id). The caller's expected version must be the
   * current one: the head row is advanced only `WHERE current_version = expected`, so of two
   * writers on the same base exactly one advances it and the other gets STALE_VERSION, with
   * nothing written (its transaction rolls back). Another operator's record than the writer's is
   * refused (refuseUnlessOwner) before the request is judged.
   */
  async append(kind: RecordKind, id: string, request: NewVersionRequest, now: Date, writer: { operator: string | null }): Promise<StoredVersion> {
    if (!isValidRecordId(id)) throw new RecordStateError('NOT_FOUND', `no ${kind} record has the id ${JSON.stringify(id)}`);
    return this.prisma.$transaction(async (tx) => {
      const head = await tx.registryRecord.findUnique({ where: { id }, select: { kind: true, currentVersion: true, operator: true } });
      if (!head || head.kind !== kind) throw new RecordStateError('NOT_FOUND', `no ${kind} record has the id ${id}`);
      refuseUnlessOwner(writer, { kind: `${kind} record`, id, owner: head.operator });
      const latest = await tx.registryRecordVersion.findUniqueOrThrow({ where: { id_version: { id, version: head.currentVersion } } });
      const version = appendVersion(kind, id, [toVersion(latest)], request, now);
      await checkProfileReferences(tx, version);
      const advanced = await tx.registryRecord.updateMany({
        where: { id, currentVersion: head.currentVersion },
        data: { currentVersion: version.version, status: version.status, updatedAt: now },
      });
      if (advanced.count !== 1) throw staleVersion(id, request.expectedVersion);
      try {
        await tx.registryRecordVersion.create({ data: versionRow(version) });
      } catch (error) {
        if (isUniqueViolation(error)) throw staleVersion(id, request.expectedVersion);
        throw error;
      }
      await recordInTransaction(tx);
      return { ...version, currentVersion: version.version };
    });
  }

  /**
   * Loads versions (the sample register, the default operator's) that are not stored yet. A record whose stored versions
   * are not a prefix of the given ones (another record took its id, or its history went another
   * way) is left as it is and reported. One transaction under an advisory lock, so concurrent
   * seeds do not interleave; running it again changes nothing.
   */
  async seed(versions: readonly RecordVersion[]): Promise<SeedOutcome> {
    const byRecord = new Map<string, RecordVersion[]>();
    for (const version of versions) {
      const history = byRecord.get(version.id);
      if (history) history.push(version);
      else byRecord.set(version.id, [version]);
    }
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('registry.seed'))`;
      const outcome: SeedOutcome = { records: byRecord.size, versionsInserted: 0, versionsPresent: 0, skipped: [] };
      const stored = await tx.registryRecordVersion.findMany({ where: { id: { in: [...byRecord.keys()] } }, orderBy: [{ id: 'asc' }, { version: 'asc' }] });
      const storedById = new Map<string, typeof stored>();
      for (const row of stored) {
        const history = storedById.get(row.id);
        if (history) history.push(row);
        else storedById.set(row.id, [row]);
      }
      for (const [id, wanted] of byRecord) {
        const kind = wanted[0]!.kind;
        const present = storedById.get(id) ?? [];
        const conflict = present.find((row, index) => {
          const seeded = wanted[index];
          return !seeded || row.kind !== seeded.kind || row.status !== seeded.status || canonicalize(row.body) !== canonicalize(seeded.body);
        });
        if (conflict) {
          outcome.skipped.push({
            kind,
            id,
            reason: conflict.kind !== kind ? `the id is taken by a ${conflict.kind} record` : `the stored version ${conflict.version} differs from the sample register's`,
          });
          continue;
        }
        const missing = wanted.slice(present.length);
        outcome.versionsPresent += present.length;
        if (missing.length === 0) continue;
        const last = missing[missing.length - 1]!;
        if (present.length === 0) {
          await tx.registryRecord.create({
            data: { id, kind, currentVersion: last.version, status: last.status, operator: DEFAULT_OPERATOR, createdAt: new Date(wanted[0]!.createdAt), updatedAt: new Date(last.createdAt) },
          });
        } else {
          await tx.registryRecord.update({ where: { id }, data: { currentVersion: last.version, status: last.status, updatedAt: new Date(last.createdAt) } });
        }
        await tx.registryRecordVersion.createMany({ data: missing.map(versionRow) });
        outcome.versionsInserted += missing.length;
      }
      if (outcome.versionsInserted > 0) await recordInTransaction(tx);
      return outcome;
    }, LONG_TRANSACTION);
  }
}

function recordExists(id: string, kind: string): RecordStateError {
  return new RecordStateError('RECORD_EXISTS', `the id ${id} is taken by a ${kind} record; add a version to it instead`, { kind });
}

/** The write came second: it is refused the way the domain refuses a stale expected version. */
function staleVersion(id: string, expected: unknown): RegistryError {
  return new RegistryError('STALE_VERSION', `record ${id} gained a version concurrently; the request built on version ${String(expected)}, which is no longer current`);
}
