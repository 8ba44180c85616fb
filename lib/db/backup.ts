/**
 * Backup of the four services' schemas and the identity store's (docs/OPERATIONS.md, "Backup and
 * restore"): a logical export, every table of the five schemas read with `COPY … TO STDOUT` in ONE repeatable-read, read-only
 * transaction, so it is one consistent snapshot while writes go on, written as a backup file
 * (lib/db/backup-file.ts). No `pg_dump` is used: the embedded PostgreSQL ships none, and Debian's
 * client (15) refuses a 17 server. Restoring it: lib/db/restore.ts.
 */
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { tokensFile } from '../auth/tokens.js';
import { replaceFile, writeChunks } from '../files.js';
import { DATABASE_SCHEMAS } from '../config/services.js';
import { type BackupManifest, BackupError, FrameWriter, type TableManifest } from './backup-file.js';
import { connect, type Database, qualified, quote, withBackupDatabase } from './backup-database.js';

export interface BackupResult {
  manifest: BackupManifest;
  bytes: number;
  rows: number;
}

const PROJECT = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string; version: string };

/** Tables of a schema, parents before the tables whose foreign keys refer to them. */
async function tablesOf(client: pg.Client, schema: string): Promise<TableManifest[]> {
  const tables = await client.query<{ name: string; columns: string[] }>(
    `SELECT c.relname AS name, array_agg(a.attname::text ORDER BY a.attnum) AS columns
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname <> '_prisma_migrations'
      GROUP BY c.relname ORDER BY c.relname`,
    [schema],
  );
  const references = await client.query<{ child: string; parent: string }>(
    `SELECT c.relname AS child, p.relname AS parent
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE k.contype = 'f' AND n.nspname = $1 AND k.conrelid <> k.confrelid`,
    [schema],
  );
  const ordered: TableManifest[] = [];
  const placed = new Set<string>();
  let pending = tables.rows;
  while (pending.length) {
    const ready = pending.filter((table) => references.rows.every((ref) => ref.child !== table.name || placed.has(ref.parent) || !pending.some((other) => other.name === ref.parent)));
    if (!ready.length) throw new BackupError(`The foreign keys of schema "${schema}" form a cycle, so no load order exists: break the cycle with a deferrable constraint.`);
    for (const table of ready) {
      ordered.push({ name: table.name, columns: table.columns });
      placed.add(table.name);
    }
    pending = pending.filter((table) => !placed.has(table.name));
  }
  return ordered;
}

async function describe(client: pg.Client, database: Database, env: NodeJS.ProcessEnv): Promise<BackupManifest> {
  const facts = await client.query<{ version: string; num: string; at: Date }>("SELECT current_setting('server_version') AS version, current_setting('server_version_num') AS num, now() AS at");
  const services = {} as BackupManifest['services'];
  const kekIds = new Set<string>();
  for (const service of DATABASE_SCHEMAS) {
    const schema = database.schemas[service];
    const tables = await tablesOf(client, schema);
    if (!tables.length) throw new BackupError(`Schema "${schema}" of the ${service} service holds no table: point the backup at the platform's database (it starts with the migrations applied).`);
    // As pg_dump does: no migration may drop or alter a table while it is read.
    await client.query(`LOCK TABLE ${tables.map((table) => qualified(schema, table.name)).join(', ')} IN ACCESS SHARE MODE`);
    const migrations = await client.query<{ name: string; checksum: string }>(
      `SELECT migration_name AS name, checksum FROM ${qualified(schema, '_prisma_migrations')} WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
    );
    const sequenceNames = await client.query<{ name: string }>(
      "SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'S' ORDER BY c.relname",
      [schema],
    );
    const sequences = [];
    for (const { name } of sequenceNames.rows) {
      // Sequences stand outside the snapshot: their value now is at or past the snapshot's, which is safe.
      const value = await client.query<{ last_value: string; is_called: boolean }>(`SELECT last_value::text, is_called FROM ${qualified(schema, name)}`);
      sequences.push({ name, lastValue: value.rows[0]!.last_value, isCalled: value.rows[0]!.is_called });
    }
    if (tables.some((table) => table.name === 'signing_key')) {
      const keks = await client.query<{ kek_id: string }>(`SELECT DISTINCT kek_id FROM ${qualified(schema, 'signing_key')} WHERE kek_id IS NOT NULL`);
      for (const { kek_id } of keks.rows) kekIds.add(kek_id);
    }
    services[service] = { schema, migrations: migrations.rows, tables, sequences };
  }
  const tokens = tokensFile(env);
  let tokenHashes: unknown;
  try {
    tokenHashes = JSON.parse(readFileSync(tokens, 'utf8'));
  } catch {
    tokenHashes = undefined;
  }
  return {
    format: 1,
    project: { name: PROJECT.name, version: PROJECT.version },
    snapshotAt: facts.rows[0]!.at.toISOString(),
    postgres: { version: facts.rows[0]!.version, versionNum: Number(facts.rows[0]!.num) },
    kekIds: [...kekIds].sort(),
    services,
    ...(tokenHashes === undefined ? {} : { tokenHashes }),
  };
}

/**
 * Writes one consistent snapshot of the five schemas to `file`, replaced whole when complete
 * (lib/files.ts replaceFile: a staging file no planted link can redirect, mode 0600).
 */
export async function backup(file: string, env: NodeJS.ProcessEnv = process.env): Promise<BackupResult> {
  return withBackupDatabase(env, false, async (database) => {
    const client = await connect(database);
    try {
      let result: Omit<BackupResult, 'bytes'> | undefined;
      await replaceFile(file, async (handle) => {
        const writer = new FrameWriter();
        // Written as gzip gives it; the handle stays open for replaceFile to sync and check before the rename.
        const written = writeChunks(handle, writer.output);
        // Awaited on success below; on failure the file is removed and this outcome does not matter.
        written.catch(() => {});
        try {
          result = await writeSnapshot(client, database, env, writer);
          await written;
        } catch (error) {
          writer.output.destroy();
          throw error;
        }
      });
      return { ...result!, bytes: (await stat(file)).size };
    } finally {
      await client.end();
    }
  });
}

/** Every table of the five schemas into `writer`, in one repeatable-read transaction. */
async function writeSnapshot(client: pg.Client, database: Database, env: NodeJS.ProcessEnv, writer: FrameWriter): Promise<Omit<BackupResult, 'bytes'>> {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  const manifest = await describe(client, database, env);
  await writer.start();
  await writer.frame('manifest', JSON.stringify(manifest));
  let rows = 0;
  for (const service of DATABASE_SCHEMAS) {
    const { schema, tables } = manifest.services[service]!;
    for (const table of tables) {
      await writer.frame('table', JSON.stringify({ service, table: table.name }));
      const copy = client.query(copyTo(`COPY ${qualified(schema, table.name)} (${table.columns.map(quote).join(', ')}) TO STDOUT`));
      // COPY sends a message per row: gathered into frames of about 64 KiB.
      let batch: Buffer[] = [];
      let size = 0;
      for await (const chunk of copy as AsyncIterable<Buffer>) {
        batch.push(chunk);
        size += chunk.length;
        if (size >= 65_536) {
          await writer.frame('data', Buffer.concat(batch));
          batch = [];
          size = 0;
        }
      }
      if (size) await writer.frame('data', Buffer.concat(batch));
      await writer.frame('end', JSON.stringify({ rows: copy.rowCount }));
      rows += copy.rowCount;
    }
  }
  await client.query('COMMIT');
  await writer.finish();
  return { manifest, rows };
}
