/**
 * Restore of a backup file (lib/db/backup-file.ts) into an empty database or data folder
 * (docs/OPERATIONS.md, "Backup and restore"): the backup's own migrations applied to it and the
 * tables loaded with `COPY … FROM STDIN`, all in one transaction, so it lands whole or not at all;
 * and the same hold on appends for a database restored by other means (`markRestored`).
 */
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { tokensFile } from '../auth/tokens.js';
import { isKekId, kekFile, KeyCustodyError, readKekFile } from '../keys/kek.js';
import { replaceFile, writeChunks } from '../files.js';
import { dataDirectory } from '../config/database.js';
import { DATABASE_SCHEMAS, type SchemaName, SERVICES } from '../config/services.js';
import { type BackupManifest, BackupError, readBackup, readFrames } from './backup-file.js';
import { connect, type Database, qualified, quote, withBackupDatabase } from './backup-database.js';
import { deployServices, type Migration, migrationsDirectory, PRISMA_MIGRATION_LOCK, prepareSchema, readMigrations, runMigration } from './migrate.js';

export interface RestoreOptions {
  /** Replace the five schemas when the target already has them. */
  force?: boolean;
}

/** Each restored passport's log size, so that its clients can be told which sequence numbers are gone. */
export interface RestoredHeads {
  passports: number;
  /** Up to HEADS_LISTED passports, by id: listed in the restore's output. */
  listed?: { id: string; logSize: number }[];
  /** More: the CSV file (passport_id, log_size, last_seq) they were written to, in the data folder. */
  file?: string;
}

export interface RestoreResult {
  manifest: BackupManifest;
  rows: number;
  /** What became of the backup's token hashes: written to the tokens file, the same as there, or kept out. */
  tokens: 'written' | 'same' | 'kept' | 'none';
  /** The key-encryption keys the restored signing keys are sealed under, all held by the KEK file. */
  kekIds: string[];
  heads: RestoredHeads;
}

/** Passports whose heads the restore's output lists; with more, they go to a file. */
export const HEADS_LISTED = 20;

/**
 * Restores a backup into the configured database: refused when any of the five schemas exists there
 * (unless `force`, which replaces them) or when the KEK file lacks a key-encryption key the backup's
 * signing keys are sealed under, checked whole before anything is written, then applied in one
 * transaction: the backup's migrations, every table's rows, the sequences, the migrations this
 * checkout has beyond the backup's, the trust graph's rows adopted, and the restore recorded, which
 * holds appends until an admin acknowledges it.
 */
export async function restore(file: string, options: RestoreOptions = {}, env: NodeJS.ProcessEnv = process.env): Promise<RestoreResult> {
  const manifest = await readBackup(file);
  const migrations = await checkoutMigrations(manifest);
  const kekIds = heldKeyEncryptionKeys(manifest, env);
  return withBackupDatabase(env, true, async (database) => {
    const client = await connect(database);
    try {
      await client.query('BEGIN');
      // A start applying migrations meanwhile waits for this restore, and the reverse.
      await client.query('SELECT pg_advisory_xact_lock($1)', [PRISMA_MIGRATION_LOCK]);
      const schemas = DATABASE_SCHEMAS.map((schema) => database.schemas[schema]);
      const present = await client.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE nspname = ANY($1) ORDER BY nspname', [schemas]);
      if (present.rows.length && !options.force) {
        throw new BackupError(
          `The database ${database.target.host}:${database.target.port}/${database.target.database} already holds schema ${present.rows.map((row) => `"${row.nspname}"`).join(', ')}: restore into an empty database or data folder, or add --force to replace them.`,
        );
      }
      for (const { nspname } of present.rows) await client.query(`DROP SCHEMA ${quote(nspname)} CASCADE`);
      for (const service of DATABASE_SCHEMAS) {
        await client.query(`SET LOCAL search_path = ${quote(database.schemas[service])}`);
        await prepareSchema(client, database.schemas[service]);
        for (const migration of migrations[service].backup) await runMigration(client, migration);
      }
      const tables = DATABASE_SCHEMAS.flatMap((service) => (manifest.services[service]?.tables ?? []).map((table) => ({ service, table, name: qualified(database.schemas[service], table.name) })));
      // Rows some migrations seed are replaced by the backup's; triggers would derive rows the backup already holds.
      await client.query(`TRUNCATE ${tables.map((table) => table.name).join(', ')}`);
      for (const table of tables) await client.query(`ALTER TABLE ${table.name} DISABLE TRIGGER USER`);
      const rows = await load(client, file, manifest, database);
      for (const service of DATABASE_SCHEMAS) {
        for (const sequence of manifest.services[service]?.sequences ?? []) {
          await client.query('SELECT setval($1::regclass, $2::bigint, $3)', [qualified(database.schemas[service], sequence.name), sequence.lastValue, sequence.isCalled]);
        }
      }
      // Deferred foreign keys are checked now: ALTER TABLE refuses a table with checks pending.
      await client.query('SET CONSTRAINTS ALL IMMEDIATE');
      for (const table of tables) await client.query(`ALTER TABLE ${table.name} ENABLE TRIGGER USER`);
      // As the next start would apply them, so that what follows finds the schemas of this version
      // (a backup made before the identity store gets all of its migrations: the default operator).
      for (const service of DATABASE_SCHEMAS) {
        await client.query(`SET LOCAL search_path = ${quote(database.schemas[service])}`);
        for (const migration of migrations[service].later) await runMigration(client, migration);
      }
      const passports = await settleRestore(client, database, { snapshotAt: manifest.snapshotAt, backup: resolve(file) });
      await client.query('COMMIT');
      // Fresh statistics, so the first queries after a restore are planned as before it.
      await client.query(`ANALYZE ${tables.map((table) => table.name).join(', ')}`);
      return { manifest, rows, tokens: await restoreTokens(manifest, options, env), kekIds, heads: await restoredHeads(client, database, passports, env) };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      await client.end();
    }
  });
}

/**
 * The backup's key-encryption keys, when the KEK file holds them all; else the sentence naming the
 * ones it lacks, before anything is written. Keys a PKCS#11 token holds are the token's to open.
 */
function heldKeyEncryptionKeys(manifest: BackupManifest, env: NodeJS.ProcessEnv): string[] {
  const needed = manifest.kekIds.filter(isKekId);
  if (!needed.length) return needed;
  const file = kekFile(env);
  let held: string[] = [];
  try {
    held = readKekFile(file).ids;
  } catch (error) {
    if (!(error instanceof KeyCustodyError)) throw error;
    // A file there that holds no key in the expected form: its own sentence says what is wrong.
    if (existsSync(file)) throw new BackupError(error.message);
  }
  const missing = needed.filter((id) => !held.includes(id));
  if (missing.length) {
    throw new BackupError(
      `The backup's signing keys are sealed under key-encryption key ${missing.join(' and ')}, which ${existsSync(file) ? `${file} does not hold` : `no file at ${file} holds`}: put the key-encryption key file kept apart from the backups there (or set PASSPORT_KEK_FILE to it) and restore again.`,
    );
  }
  return needed;
}

/**
 * The last steps of a restore, in its transaction: the trust graph's rows adopted by this cluster
 * (migration 20261206051700_trust_adopt_foreign_rows says why), and the restore recorded in the
 * issuer's schema, unacknowledged, which holds appends until an admin acknowledges it (migration
 * 20261206051720_restores). Returns the passports restored.
 */
async function settleRestore(client: pg.ClientBase, database: Database, restored: { snapshotAt: string | null; backup: string | null }): Promise<number> {
  await client.query(`SELECT ${qualified(database.schemas.trust, 'trust_adopt_foreign_rows')}(true)`);
  const issuer = database.schemas.issuer;
  const recorded = await client.query<{ passports: number }>(
    `INSERT INTO ${qualified(issuer, 'restore')} (snapshot_at, backup, passports) SELECT $1, $2, count(*) FROM ${qualified(issuer, 'passport')} RETURNING passports`,
    [restored.snapshotAt, restored.backup],
  );
  return recorded.rows[0]!.passports;
}

/**
 * What a restore does beyond loading the rows, for a database restored by other means (pg_restore
 * of a pg_dump, docs/OPERATIONS.md): this checkout's migrations applied, as a start would, then in
 * one transaction the trust graph's rows adopted and the restore recorded, which holds appends
 * until an admin acknowledges it. Returns the passports' heads, as `restore` does.
 */
export async function markRestored(env: NodeJS.ProcessEnv = process.env): Promise<RestoredHeads> {
  return withBackupDatabase(env, false, async (database) => {
    const client = await connect(database);
    try {
      // The identity store may be missing (a dump made before it existed): the migrations below make it.
      const schemas = SERVICES.map((service) => database.schemas[service]);
      const present = await client.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE nspname = ANY($1)', [schemas]);
      const missing = schemas.filter((schema) => !present.rows.some((row) => row.nspname === schema));
      if (missing.length) {
        throw new BackupError(
          `The database ${database.target.host}:${database.target.port}/${database.target.database} holds no schema ${missing.map((schema) => `"${schema}"`).join(', ')}: mark a database restored from a dump of the platform, or restore a backup file with npm run restore -- <file>.`,
        );
      }
      for (const outcome of await deployServices(DATABASE_SCHEMAS.map((service) => ({ service, url: database.urls[service] })))) {
        if (outcome.status === 'rejected') throw new BackupError(`The restored schemas could not be brought to this version: ${(outcome.reason as Error).message}.`);
      }
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [PRISMA_MIGRATION_LOCK]);
      const passports = await settleRestore(client, database, { snapshotAt: null, backup: null });
      await client.query('COMMIT');
      return await restoredHeads(client, database, passports, env);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      await client.end();
    }
  });
}

/** Each restored passport's log size: listed when they are few, else written to a CSV file in the data folder. */
async function restoredHeads(client: pg.ClientBase, database: Database, passports: number, env: NodeJS.ProcessEnv): Promise<RestoredHeads> {
  const table = qualified(database.schemas.issuer, 'passport');
  if (passports <= HEADS_LISTED) {
    const listed = await client.query<{ id: string; logSize: number }>(`SELECT id, log_size AS "logSize" FROM ${table} ORDER BY id`);
    return { passports, listed: listed.rows };
  }
  const file = join(dataDirectory(env), `restored-heads-${new Date().toISOString().replaceAll(':', '-')}.csv`);
  await replaceFile(file, (handle) =>
    writeChunks(
      handle,
      client.query(copyTo(`COPY (SELECT id AS passport_id, log_size, CASE WHEN log_size > 0 THEN log_size - 1 END AS last_seq FROM ${table} ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)`)),
    ),
  );
  return { passports, file };
}

type CheckoutMigrations = Record<SchemaName, { backup: Migration[]; later: Migration[] }>;

/**
 * The backup's migrations as this checkout has them, and the ones it has beyond them; or the sentence
 * saying it cannot restore the backup.
 */
async function checkoutMigrations(manifest: BackupManifest): Promise<CheckoutMigrations> {
  const result = {} as CheckoutMigrations;
  for (const service of DATABASE_SCHEMAS) {
    const checkout = await readMigrations(migrationsDirectory(service));
    const available = new Map(checkout.map((migration) => [migration.name, migration]));
    const backup = (manifest.services[service]?.migrations ?? []).map(({ name, checksum }) => {
      const migration = available.get(name);
      if (!migration || migration.checksum !== checksum) {
        throw new BackupError(
          `The backup's ${service} migration ${name} is ${migration ? 'different' : 'missing'} in this checkout: restore with the version that made the backup (${manifest.project.version}) or a later one.`,
        );
      }
      return migration;
    });
    result[service] = { backup, later: checkout.filter((migration) => !backup.includes(migration)) };
  }
  return result;
}

/** Streams every table's rows from the file into the target with COPY FROM; returns the rows loaded. */
async function load(client: pg.Client, file: string, manifest: BackupManifest, database: Database): Promise<number> {
  let rows = 0;
  let copy: ReturnType<typeof copyFrom> | undefined;
  let done: Promise<void> | undefined;
  let current = '';
  for await (const frame of readFrames(file)) {
    if (frame.kind === 'table') {
      const { service, table } = JSON.parse(frame.payload.toString()) as { service: SchemaName; table: string };
      const columns = manifest.services[service]!.tables.find((candidate) => candidate.name === table)!.columns;
      current = `${service}.${table}`;
      copy = client.query(copyFrom(`COPY ${qualified(database.schemas[service], table)} (${columns.map(quote).join(', ')}) FROM STDIN`));
      done = finished(copy);
      // Awaited at the table's end; a failure before it surfaces through the write below.
      done.catch(() => {});
    } else if (frame.kind === 'data') {
      if (!copy!.write(frame.payload)) await once(copy!, 'drain');
    } else if (frame.kind === 'end') {
      copy!.end();
      await done;
      const expected = (JSON.parse(frame.payload.toString()) as { rows: number }).rows;
      if (copy!.rowCount !== expected) throw new BackupError(`Table ${current} loaded ${copy!.rowCount} rows where the backup holds ${expected}: use an intact backup.`);
      rows += expected;
    }
  }
  return rows;
}

/** Puts the backup's token hashes into the tokens file: when it is missing, or with force; atomically. */
async function restoreTokens(manifest: BackupManifest, options: RestoreOptions, env: NodeJS.ProcessEnv): Promise<RestoreResult['tokens']> {
  if (manifest.tokenHashes === undefined) return 'none';
  const file = tokensFile(env);
  const text = `${JSON.stringify(manifest.tokenHashes, null, 2)}\n`;
  let existing: string | undefined;
  try {
    existing = readFileSync(file, 'utf8');
  } catch {
    existing = undefined;
  }
  if (existing !== undefined && JSON.stringify(JSON.parse(existing)) === JSON.stringify(manifest.tokenHashes)) return 'same';
  if (existing !== undefined && !options.force) return 'kept';
  await replaceFile(file, (handle) => handle.writeFile(text));
  return 'written';
}
