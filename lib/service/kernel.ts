/**
 * What every service has, whatever its domain: its Prisma client, its signing keys, its admin log
 * and its signed health status.
 */
import { AdminLog, type AdminLogClient } from '../audit/admin-log.js';
import { RefusalLog } from '../audit/refusal-log.js';
import type { ServiceName } from '../config/services.js';
import { signJson } from '../crypto/index.js';
import { openPrismaClient, StatementCounter, type PrismaClientClass } from '../db/prisma.js';
import { parseDatabaseUrl, takesNewConnections } from '../db/postgres.js';
import type { KeyEncryptionKeys } from '../keys/kek.js';
import { KeyStore } from '../keys/key-store.js';
import { prismaKeyRepository, type KeyStoreClient } from '../keys/prisma-key-repository.js';
import type { KeyVault } from '../keys/key-vault.js';
import { KEY_PURPOSES, SERVICE_KEY_PURPOSE } from '../keys/purposes.js';
import { Pkcs11KeyVault, pkcs11Settings } from '../keys/pkcs11-vault.js';
import { SealedKeyVault } from '../keys/sealed-vault.js';
import { serverTracer } from '../ops/tracing.js';
import { migrationsDirectory, readMigrations } from '../db/migrate.js';
import type { DomainMetrics, ServerMetrics } from '../ops/metrics.js';
import { NotReady, type ReadinessCheck } from '../ops/operations.js';

export interface ServicePrismaClient extends KeyStoreClient, AdminLogClient {
  $executeRawUnsafe(query: string): Promise<number>;
  $queryRawUnsafe<T = unknown>(query: string): Promise<T>;
  $disconnect(): Promise<void>;
}

export interface ServiceKernel<P extends ServicePrismaClient> {
  name: ServiceName;
  prisma: P;
  /** The PostgreSQL schema the service's tables live in, for raw SQL (e.g. SELECT … FOR UPDATE). */
  schema: string;
  keys: KeyStore;
  adminLog: AdminLog;
  /** Refused requests, itemised or counted (lib/audit/refusal-log.ts). */
  refusals: RefusalLog;
  /** SQL statements sent so far (for tests: what a request costs). */
  statements: StatementCounter;
  /** What the service counts of its domain's outcomes (lib/ops/metrics.ts). */
  metrics: DomainMetrics;
  /** Ready: the database answers, every committed migration is applied, the signing keys are unsealed. */
  readiness: Record<string, ReadinessCheck>;
  /** Liveness as signed JSON; `status` is `ok`, or `unavailable` when the database does not answer. */
  health(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export const PLATFORM_VERSION = '0.1.0';

export async function openServiceKernel<P extends ServicePrismaClient>(
  name: ServiceName,
  Client: PrismaClientClass<P>,
  databaseUrl: string,
  kek: KeyEncryptionKeys,
  metrics: ServerMetrics,
): Promise<ServiceKernel<P>> {
  // A PKCS#11 token when one is configured (docs/KEYS.md), else keys sealed under the KEK.
  const pkcs11 = pkcs11Settings();
  const vault: KeyVault = pkcs11 ? new Pkcs11KeyVault(name, pkcs11) : new SealedKeyVault(name, kek);
  // With METRICS=off statements are counted (tests read the count) but not timed.
  const statements = new StatementCounter(metrics.enabled ? (sql, seconds, failed) => metrics.databaseQueryDone(sql, seconds, failed) : undefined);
  let unwatchPool = () => {};
  const tracer = serverTracer(name);
  const prisma = openPrismaClient(Client, databaseUrl, 10, {
    statements,
    ...(tracer ? { tracer } : {}),
    watch: (pool) => {
      unwatchPool = metrics.watchPool(pool);
    },
  });
  const schema = parseDatabaseUrl(databaseUrl).schema;
  const committed = (await readMigrations(migrationsDirectory(name))).map((migration) => migration.name);
  const keys = await KeyStore.open(prismaKeyRepository(prisma), vault, KEY_PURPOSES[name]).catch(async (error: unknown) => {
    vault.close?.();
    await prisma.$disconnect();
    throw error;
  });
  const refusals = new RefusalLog(prisma);
  return {
    name,
    prisma,
    schema,
    keys,
    adminLog: new AdminLog(prisma),
    refusals,
    statements,
    metrics: metrics.domain,
    readiness: {
      async database() {
        const [applied, fresh] = await Promise.all([
          prisma
            .$queryRawUnsafe<{ migration_name: string }[]>(`SELECT migration_name FROM "${schema}"._prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`)
            .catch(() => undefined),
          takesNewConnections(databaseUrl),
        ]);
        if (!applied) throw new NotReady('PostgreSQL does not answer');
        // The pool's open connections may still answer while no new one can be made.
        if (!fresh) throw new NotReady('PostgreSQL takes no new connection');
        const names = new Set(applied.map((row) => row.migration_name));
        const pending = committed.filter((migration) => !names.has(migration));
        if (pending.length) throw new NotReady(`${pending.length} migration(s) not applied`);
      },
      async keys() {
        // Opening the key store unsealed every key; a service key to sign with is what is needed to serve.
        try {
          keys.signer(SERVICE_KEY_PURPOSE);
        } catch {
          throw new NotReady('no unsealed service key');
        }
      },
    },
    async health() {
      const database = await prisma.$executeRawUnsafe('SELECT 1').then(
        () => 'ok',
        () => 'unreachable',
      );
      return signJson({ service: name, status: database === 'ok' ? 'ok' : 'unavailable', database, version: PLATFORM_VERSION, checked_at: new Date().toISOString() }, keys.signer(SERVICE_KEY_PURPOSE));
    },
    close: async () => {
      unwatchPool();
      try {
        await refusals.close();
      } finally {
        await prisma.$disconnect();
        vault.close?.();
      }
    },
  };
}
