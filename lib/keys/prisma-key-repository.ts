import { recordInTransaction, type AdminLogClient } from '../audit/admin-log.js';
import type { PublicJwk, SigningAlgorithm } from '../crypto/index.js';
import type { KeyRepository, StoredKey } from './key-store.js';

/** The `SigningKey` model every service's Prisma schema declares, as its client returns it. */
interface SigningKeyRow {
  kid: string;
  purpose: string;
  alg: string;
  publicJwk: unknown;
  secretKey: Uint8Array;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  revocationReason: string | null;
}

interface SigningKeyDelegate {
  findMany(args: { orderBy: { createdAt: 'asc' } }): Promise<SigningKeyRow[]>;
  create(args: { data: Omit<SigningKeyRow, 'publicJwk' | 'secretKey'> & { publicJwk: object; secretKey: Uint8Array<ArrayBuffer> } }): Promise<unknown>;
  update(args: { where: { kid: string }; data: Partial<Pick<SigningKeyRow, 'expiresAt' | 'revokedAt' | 'revocationReason'>> }): Promise<unknown>;
}

/** The part of a service's generated Prisma client the key store needs. */
export interface KeyStoreClient {
  signingKey: SigningKeyDelegate;
  $transaction<T>(run: (client: { signingKey: SigningKeyDelegate } & AdminLogClient) => Promise<T>): Promise<T>;
}

function toStoredKey(row: SigningKeyRow): StoredKey {
  return { ...row, alg: row.alg as SigningAlgorithm, publicJwk: row.publicJwk as PublicJwk, secretKey: new Uint8Array(row.secretKey) };
}

function toRow(key: StoredKey) {
  return { ...key, publicJwk: key.publicJwk as object, secretKey: new Uint8Array(key.secretKey) };
}

export function prismaKeyRepository(client: KeyStoreClient): KeyRepository {
  return {
    all: async () => (await client.signingKey.findMany({ orderBy: { createdAt: 'asc' } })).map(toStoredKey),
    add: async (key) => {
      await client.signingKey.create({ data: toRow(key) });
    },
    rotate: (next, retiredKid, at) =>
      client.$transaction(async (tx) => {
        await tx.signingKey.update({ where: { kid: retiredKid }, data: { expiresAt: at } });
        await tx.signingKey.create({ data: toRow(next) });
        await recordInTransaction(tx);
      }),
    revoke: (kid, at, reason) =>
      client.$transaction(async (tx) => {
        await tx.signingKey.update({ where: { kid }, data: { revokedAt: at, revocationReason: reason } });
        await recordInTransaction(tx);
      }),
  };
}
