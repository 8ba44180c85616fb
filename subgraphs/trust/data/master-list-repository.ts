/** The witnessed master list in PostgreSQL: its entries and the witness set; each a single-row write. */
import { validateMasterListEntry, validateWitnessSet, success, type MasterListEntry, type TrustResult, type WitnessSet } from '../domain/index.js';
import { recordInTransaction } from '../../../lib/audit/admin-log.js';
import type { PrismaClient } from '../../../prisma/trust/generated/client.js';
import { asJson, storable, TRANSACTION_OPTIONS } from './storage.js';

export interface StoredWitnessSet extends WitnessSet {
  readonly recorded_at: string;
}

export class MasterListRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async witnessSet(): Promise<StoredWitnessSet | undefined> {
    const row = await this.prisma.witnessSet.findFirst({ orderBy: { id: 'desc' } });
    return row ? { m: row.m, keys: row.keys as unknown as WitnessSet['keys'], recorded_at: row.recordedAt.toISOString() } : undefined;
  }

  async masterListEntries(): Promise<MasterListEntry[]> {
    const rows = await this.prisma.masterListEntry.findMany({ orderBy: { id: 'asc' } });
    return rows.map((row) => ({ id: row.id, body: row.body as MasterListEntry['body'], cosignatures: row.cosignatures as unknown as MasterListEntry['cosignatures'] }));
  }

  async replaceWitnessSet(input: unknown): Promise<TrustResult<StoredWitnessSet>> {
    const checked = validateWitnessSet(input);
    if (!checked.ok) return checked;
    const fit = storable(checked.value, 'INVALID_WITNESS_SET');
    if (!fit.ok) return fit;
    const row = await this.prisma.$transaction(async (tx) => {
      const created = await tx.witnessSet.create({ data: { m: checked.value.m, keys: asJson(checked.value.keys) } });
      await recordInTransaction(tx);
      return created;
    }, TRANSACTION_OPTIONS);
    return success({ ...checked.value, recorded_at: row.recordedAt.toISOString() });
  }

  /** Stores the entry, replacing one of the same id; `created` says whether there was none. */
  async upsertMasterListEntry(input: unknown): Promise<TrustResult<{ entry: MasterListEntry; created: boolean }>> {
    const checked = validateMasterListEntry(input);
    if (!checked.ok) return checked;
    const fit = storable(checked.value, 'INVALID_MASTER_LIST_ENTRY');
    if (!fit.ok) return fit;
    const { id, body, cosignatures } = checked.value;
    const created = await this.prisma.$transaction(async (tx) => {
      // Inserted unless the id is taken (no race between a read and the insert), else replaced.
      const inserted = await tx.masterListEntry.createMany({ data: [{ id, body: asJson(body), cosignatures: asJson(cosignatures) }], skipDuplicates: true });
      if (inserted.count === 0) await tx.masterListEntry.update({ where: { id }, data: { body: asJson(body), cosignatures: asJson(cosignatures) } });
      await recordInTransaction(tx);
      return inserted.count === 1;
    }, TRANSACTION_OPTIONS);
    return success({ entry: checked.value, created });
  }
}
