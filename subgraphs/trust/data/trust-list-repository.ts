/**
 * Trust lists in PostgreSQL: each list's changes, numbered in sequence. A list's changes are
 * serialized by a lock on its row, so sequence numbers never repeat or skip.
 */
import {
  normalizeJurisdiction,
  registerTrustList,
  failure,
  success,
  trustListAt,
  upsertTrustListEntry,
  type TrustList,
  type TrustListChange,
  type TrustListEntry,
  type TrustResult,
} from '../domain/index.js';
import { recordInTransaction } from '../../../lib/audit/admin-log.js';
import { appendToFeed, feedCursor } from '../../../lib/db/change-feed.js';
import type { PrismaClient } from '../../../prisma/trust/generated/client.js';
import { asJson, isUniqueViolation, now, storable, type Transaction, TRANSACTION_OPTIONS } from './storage.js';

/** The feed of trust-list changes (lib/db/change-feed.ts): keyed by jurisdiction, the cursor is the change's feed id. */
export const TRUST_LIST_CHANGES_FEED = 'trust-list-changes';

export class TrustListRepository {
  /** `changeChannel`: the service's change channel (lib/db/change-feed.ts), notified of each change recorded. */
  constructor(
    private readonly prisma: PrismaClient,
    private readonly changeChannel: string,
  ) {}

  /** Up to `first` changes (of one jurisdiction's list, or of every list) after the one of feed id `afterId`, in the order they were committed, each with its feed id. */
  async changesAfter(jurisdiction: string | undefined, afterId: bigint, first: number): Promise<{ feedId: bigint; jurisdiction: string; change: TrustListChange }[]> {
    const rows = await this.prisma.trustListChange.findMany({
      where: { ...(jurisdiction === undefined ? {} : { jurisdiction }), feedId: { gt: afterId } },
      orderBy: { feedId: 'asc' },
      take: first,
      select: { feedId: true, jurisdiction: true, document: true },
    });
    return rows.map((row) => ({ feedId: row.feedId, jurisdiction: row.jurisdiction, change: row.document as unknown as TrustListChange }));
  }

  /** Records a change last in its transaction: under the feed's order lock, held to the commit, which the notice waits for. */
  async #recordChange(tx: Transaction, jurisdiction: string, change: TrustListChange): Promise<void> {
    await appendToFeed(
      tx,
      { channel: this.changeChannel, feed: TRUST_LIST_CHANGES_FEED },
      () => tx.trustListChange.create({ data: changeRow(jurisdiction, change), select: { feedId: true } }),
      (row) => ({ key: jurisdiction, cursor: feedCursor(row.feedId) }),
    );
  }

  /** Every list's history, by jurisdiction. */
  async trustListHistories(): Promise<Map<string, TrustListChange[]>> {
    const rows = await this.prisma.trustListChange.findMany({ orderBy: [{ jurisdiction: 'asc' }, { sequenceNumber: 'asc' }] });
    const histories = new Map<string, TrustListChange[]>();
    for (const row of rows) {
      const history = histories.get(row.jurisdiction) ?? [];
      history.push(row.document as unknown as TrustListChange);
      histories.set(row.jurisdiction, history);
    }
    return histories;
  }

  async trustListHistory(jurisdiction: string): Promise<TrustListChange[]> {
    return loadTrustListHistory(this.prisma, jurisdiction);
  }

  async registerTrustList(input: unknown): Promise<TrustResult<TrustList>> {
    const jurisdiction = normalizeJurisdiction((input as { jurisdiction?: unknown } | null)?.jurisdiction);
    const history = jurisdiction ? await this.trustListHistory(jurisdiction) : [];
    const registered = registerTrustList(history, input, now());
    if (!registered.ok) return registered;
    const fit = storable(registered.value, 'INVALID_TRUST_LIST');
    if (!fit.ok) return fit;
    const change = registered.value;
    if (change.change !== 'registration') throw new Error('a registration records a registration change');
    try {
      await this.prisma.$transaction(async (tx) => {
        await tx.trustList.create({ data: { jurisdiction: change.jurisdiction, framework: change.framework, sequenceNumber: change.sequence_number } });
        await recordInTransaction(tx);
        await this.#recordChange(tx, change.jurisdiction, change);
      }, TRANSACTION_OPTIONS);
    } catch (error) {
      // Another request registered the same jurisdiction between the read and the write.
      if (isUniqueViolation(error)) return failure('TRUST_LIST_EXISTS', `the trust list of ${change.jurisdiction} is already registered`);
      throw error;
    }
    return success(trustListAt([change])!);
  }

  /** Upserts one entry under a lock on the list's row; an unchanged restatement records nothing. */
  upsertTrustListEntry(jurisdiction: string, input: unknown): Promise<TrustResult<{ list: TrustList; entry: TrustListEntry; changed: boolean; created: boolean }>> {
    return this.prisma.$transaction(async (tx) => {
      // A no-op update takes the row lock that orders concurrent changes of this list.
      const locked = await tx.trustList.updateMany({ where: { jurisdiction }, data: { sequenceNumber: { increment: 0 } } });
      if (locked.count === 0) return failure('UNKNOWN_TRUST_LIST', `no trust list is registered for ${jurisdiction}`);
      const history = await loadTrustListHistory(tx, jurisdiction);
      const upserted = upsertTrustListEntry(history, input, now());
      if (!upserted.ok) return upserted;
      const fit = storable(upserted.value.change, 'INVALID_ENTRY');
      if (!fit.ok) return fit;
      const { change, list, created } = upserted.value;
      if (change) {
        await tx.trustList.update({ where: { jurisdiction }, data: { sequenceNumber: change.sequence_number } });
        await recordInTransaction(tx);
        await this.#recordChange(tx, jurisdiction, change);
      }
      const id = (input as { id: string }).id;
      return success({ list, entry: list.entries.find((entry) => entry.id === id)!, changed: change !== undefined, created });
    }, TRANSACTION_OPTIONS);
  }
}

async function loadTrustListHistory(db: Pick<PrismaClient, 'trustListChange'> | Transaction, jurisdiction: string): Promise<TrustListChange[]> {
  const rows = await db.trustListChange.findMany({ where: { jurisdiction }, orderBy: { sequenceNumber: 'asc' } });
  return rows.map((row) => row.document as unknown as TrustListChange);
}

function changeRow(jurisdiction: string, change: TrustListChange) {
  return { jurisdiction, sequenceNumber: change.sequence_number, recordedAt: new Date(change.recorded_at), document: asJson(change) };
}
