/**
 * What every service has, whatever its domain: its Prisma client, its signing keys, its admin log
 * and its signed health status.
 */
import { AdminLog, type AdminLogClient } from '../audit/admin-log.js';
import type { ServiceName } from '../config/services.js';
import { signJson } from '../crypto/index.js';
import { openPrismaClient, StatementCounter, type PrismaClientClass } from '../db/prisma.js';
import { parseDatabaseUrl } from '../db/postgres.js';
import type { KeyEncryptionKeys } from '../keys/kek.js';
import { KeyStore } from '../keys/key-store.js';
import { prismaKeyRepository, type KeyStoreClient } from '../keys/prisma-key-repository.js';
import type { KeyVault } from '../keys/key-vault.js';
import { KEY_PURPOSES, SERVICE_KEY_PURPOSE } from '../keys/purposes.js';
import { Pkcs11KeyVault, pkcs11Settings } from '../keys/pkcs11-vault.js';
import { SealedKeyVault } from '../keys/sealed-vault.js';
import { serverTracer } from '../ops/tracing.js';

export interface ServicePrismaClient extends KeyStoreClient, AdminLogClient {
  $executeRawUnsafe(query: string): Promise<number>;
  $disconnect(): Promise<void>;
}

export interface ServiceKernel<P extends ServicePrismaClient> {
  name: ServiceName;
  prisma: P;
  /** The PostgreSQL schema the service's tables live in, for raw SQL (e.g. SELECT … FOR UPDATE). */
  schema: string;
  keys: KeyStore;
  adminLog: AdminLog;
  /** SQL statements sent so far (for tests: what a request costs). */
  statements: StatementCounter;
  /** Liveness as signed JSON; `status` is `ok`, or `unavailable` when the database does not answer. */
  health(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export const PLATFORM_VERSION = '0.1.0';

export async function openServiceKernel<P extends ServicePrismaClient>(name: ServiceName, Client: PrismaClientClass<P>, databaseUrl: string, kek: KeyEncryptionKeys): Promise<ServiceKernel<P>> {
  // A PKCS#11 token when one is configured (docs/KEYS.md), else keys sealed under the KEK.
  const pkcs11 = pkcs11Settings();
  const vault: KeyVault = pkcs11 ? new Pkcs11KeyVault(name, pkcs11) : new SealedKeyVault(name, kek);
  const statements = new StatementCounter();
  const prisma = openPrismaClient(Client, databaseUrl, 10, statements, serverTracer(name));
  const keys = await KeyStore.open(prismaKeyRepository(prisma), vault, KEY_PURPOSES[name]).catch(async (error: unknown) => {
    vault.close?.();
    await prisma.$disconnect();
    throw error;
  });
  return {
    name,
    prisma,
    schema: parseDatabaseUrl(databaseUrl).schema,
    keys,
    adminLog: new AdminLog(prisma),
    statements,
    async health() {
      const database = await prisma.$executeRawUnsafe('SELECT 1').then(
        () => 'ok',
        () => 'unreachable',
      );
      return signJson({ service: name, status: database === 'ok' ? 'ok' : 'unavailable', database, version: PLATFORM_VERSION, checked_at: new Date().toISOString() }, keys.signer(SERVICE_KEY_PURPOSE));
    },
    close: async () => {
      await prisma.$disconnect();
      vault.close?.();
    },
  };
}
