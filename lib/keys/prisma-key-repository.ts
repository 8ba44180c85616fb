import { recordInTransaction, type AdminLogClient } from '../audit/admin-log.js';
import type { PublicJwk, SigningAlgorithm } from '../crypto/index.js';
import type { KeyRepository, StoredKey } from './key-store.js';

/** The `SigningKey` model every service's Prisma schema declares, as its client returns it. */
/** A signing_key row as Prisma reads it (and lib/keys/custody-check.ts by SQL, under the same names). */
export interface SigningKeyRow {
  kid: string;
  purpose: string;
  /** Only the issuer's keys sign for operators; other services' rows have no such column. */
  operator?: string | null;
  alg: string;
  publicJwk: unknown;
  sealedKey: Uint8Array | null;
  kekId: string | null;
  plaintextKey: Uint8Array | null;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  revocationReason: string | null;
}

type SigningKeyData = Omit<SigningKeyRow, 'publicJwk' | 'sealedKey' | 'plaintextKey'> & { publicJwk: object; sealedKey: Uint8Array<ArrayBuffer> };

interface SigningKeyDelegate {
  findMany(args: { orderBy: { createdAt: 'asc' } }): Promise<SigningKeyRow[]>;
  create(args: { data: SigningKeyData }): Promise<unknown>;
  update(args: {
    where: { kid: string };
    data: Partial<Pick<SigningKeyRow, 'expiresAt' | 'revokedAt' | 'revocationReason' | 'kekId'>> & { sealedKey?: Uint8Array<ArrayBuffer>; plaintextKey?: null };
  }): Promise<unknown>;
}

/** The part of a service's generated Prisma client the key store needs. */
export interface KeyStoreClient {
  signingKey: SigningKeyDelegate;
  $transaction<T>(run: (client: { signingKey: SigningKeyDelegate } & AdminLogClient) => Promise<T>): Promise<T>;
}

export function toStoredKey(row: SigningKeyRow): StoredKey {
  return {
    kid: row.kid,
    purpose: row.purpose,
    operator: row.operator ?? null,
    alg: row.alg as SigningAlgorithm,
    publicJwk: row.publicJwk as PublicJwk,
    custody: row.sealedKey && row.kekId ? { holder: row.kekId, bytes: new Uint8Array(row.sealedKey) } : null,
    plaintextKey: row.plaintextKey ? new Uint8Array(row.plaintextKey) : null,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt,
    revocationReason: row.revocationReason,
  };
}

function toRow(key: StoredKey): SigningKeyData {
  if (!key.custody) throw new Error(`signing key ${key.kid} is stored sealed or not at all`);
  return {
    kid: key.kid,
    purpose: key.purpose,
    ...(key.operator === null ? {} : { operator: key.operator }),
    alg: key.alg,
    publicJwk: key.publicJwk as object,
    sealedKey: new Uint8Array(key.custody.bytes),
    kekId: key.custody.holder,
    createdAt: key.createdAt,
    expiresAt: key.expiresAt,
    revokedAt: key.revokedAt,
    revocationReason: key.revocationReason,
  };
}

export function prismaKeyRepository(client: KeyStoreClient): KeyRepository {
  return {
    all: async () => (await client.signingKey.findMany({ orderBy: { createdAt: 'asc' } })).map(toStoredKey),
    add: (...keys) =>
      client.$transaction(async (tx) => {
        for (const key of keys) await tx.signingKey.create({ data: toRow(key) });
      }),
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
    storeCustody: (records) =>
      client.$transaction(async (tx) => {
        for (const { kid, custody } of records) {
          await tx.signingKey.update({ where: { kid }, data: { sealedKey: new Uint8Array(custody.bytes), kekId: custody.holder, plaintextKey: null } });
        }
        await recordInTransaction(tx);
      }),
  };
}
