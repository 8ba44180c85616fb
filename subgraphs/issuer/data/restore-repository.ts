/**
 * The platform's restores, as npm run restore records them, unacknowledged (migration
 * 20261206051720_restores): appends are refused while one is, until an admin acknowledges it.
 */
import { recordInTransaction } from '../../../lib/audit/admin-log.js';
import type { PrismaClient } from '../../../prisma/issuer/generated/client.js';

export interface RestoreRecord {
  id: bigint;
  restoredAt: Date;
  snapshotAt: Date | null;
  backup: string | null;
  passports: number;
  acknowledgedAt: Date | null;
  acknowledgedBy: string | null;
}

export class RestoreRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Acknowledges every unacknowledged restore, in one statement (two admins at once acknowledge each
   * restore once), with the admin log's entry in the same transaction; returns them, oldest first.
   * None: nothing was written.
   */
  acknowledge(by: string, at: Date): Promise<RestoreRecord[]> {
    return this.prisma.$transaction(async (tx) => {
      const acknowledged = await tx.restore.updateManyAndReturn({ where: { acknowledgedAt: null }, data: { acknowledgedAt: at, acknowledgedBy: by } });
      if (acknowledged.length) await recordInTransaction(tx);
      return acknowledged.sort((a, b) => (a.id < b.id ? -1 : 1));
    });
  }
}
