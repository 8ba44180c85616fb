/**
 * Backup and restore of the four services' schemas (docs/OPERATIONS.md, "Backup and restore").
 *
 * A backup is a logical export: every table of the four schemas read with `COPY … TO STDOUT` in ONE
 * repeatable-read, read-only transaction, so it is one consistent snapshot while writes go on. No
 * `pg_dump` is used: the embedded PostgreSQL ships none, and Debian's client (15) refuses a 17 server.
 * A restore applies the backup's own migrations to an empty database and loads the tables with
 * `COPY … FROM STDIN`, all in one transaction: it lands whole or not at all.
 *
 * The file is gzip over frames, each `<kind> <length>\n<payload>`: `manifest` (JSON) first, then per
 * table `table` (JSON), `data` (COPY text, any number) and `end` (JSON row count), and last `sha256`,
 * the digest of every byte before it. A file without that last frame, or whose digest differs, is
 * refused before anything is written.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { createGunzip, createGzip, type Gzip } from 'node:zlib';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { tokensFile } from '../auth/tokens.js';
import { isKekId, kekFile, KeyCustodyError, readKekFile } from '../keys/kek.js';
import { replaceFile, writeChunks } from '../files.js';
import { clusterUrl, dataDirectory, readEmbeddedCluster, serviceDatabaseUrl } from '../config/database.js';
import { loadRuntimeConfig } from '../config/runtime.js';
import { SERVICES, type ServiceName } from '../config/services.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { deployServices, type Migration, migrationsDirectory, PRISMA_MIGRATION_LOCK, prepareSchema, readMigrations, runMigration } from './migrate.js';
import { clientConfig, parseDatabaseUrl } from './postgres.js';

/** Why a backup or restore cannot go on; its message is one sentence for the operator. */
export class BackupError extends Error {
  override name = 'BackupError';
}

const MAGIC = 'passport-backup 1\n';

export interface TableManifest {
  name: string;
  columns: string[];
}

export interface ServiceManifest {
  /** The PostgreSQL schema the service's tables were read from (restored into the target's own). */
  schema: string;
  /** Applied migrations, by name order, with the SHA-256 of each file as Prisma records it. */
  migrations: { name: string; checksum: string }[];
  /** Tables in an order that loads parents before the rows that refer to them. */
  tables: TableManifest[];
  /** Sequences (bigserial columns) and the value each had, so a restore hands out no number twice. */
  sequences: { name: string; lastValue: string; isCalled: boolean }[];
}

export interface BackupManifest {
  format: 1;
  project: { name: string; version: string };
  /** When the snapshot was taken (the transaction's start). */
  snapshotAt: string;
  postgres: { version: string; versionNum: number };
  /**
   * The key-encryption keys (their ids, never the keys) the backup's signing keys are sealed under:
   * a restored platform starts only with a KEK file that holds them.
   */
  kekIds: string[];
  services: Record<ServiceName, ServiceManifest>;
  /** The token hashes of the data folder's tokens file, when it has one (hashes only, never tokens). */
  tokenHashes?: unknown;
}

export interface BackupResult {
  manifest: BackupManifest;
  bytes: number;
  rows: number;
}

const PROJECT = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string; version: string };

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;
const qualified = (schema: string, table: string) => `${quote(schema)}.${quote(table)}`;

// ---------------------------------------------------------------------------------------------
// Where the schemas are

interface Database {
  /** The database holding the four schemas, without a schema. */
  target: ReturnType<typeof parseDatabaseUrl>;
  schemas: Record<ServiceName, string>;
  /** Each service's URL, with its schema. */
  urls: Record<ServiceName, string>;
}

/** The one database that holds every service's schema, or the sentence saying they are apart. */
function locate(baseUrl: string | undefined, env: NodeJS.ProcessEnv): Database {
  const urls = SERVICES.map((service) => serviceDatabaseUrl(service, baseUrl ? { ...env, DATABASE_URL: baseUrl } : env));
  const targets = urls.map(parseDatabaseUrl);
  const where = (target: (typeof targets)[number]) => `${target.host}:${target.port}/${target.database}`;
  if (new Set(targets.map(where)).size > 1) {
    throw new BackupError(
      'The services’ schemas are in different databases, and one snapshot spans one database: point DATABASE_URL (or every <SERVICE>_DATABASE_URL) at the one database holding all four.',
    );
  }
  const byService = <T>(values: T[]) => Object.fromEntries(SERVICES.map((service, i) => [service, values[i]!])) as Record<ServiceName, T>;
  return { target: targets[0]!, schemas: byService(targets.map((target) => target.schema)), urls: byService(urls) };
}

/**
 * Runs `work` against the configured database: DATABASE_URL (or the per-service URLs), else the
 * embedded cluster of the data folder, which is used as it runs under `npm start` or, when it is
 * not running, started for the command and stopped after it; `create` makes the cluster of a fresh
 * data folder (a restore's).
 */
async function withDatabase<T>(env: NodeJS.ProcessEnv, create: boolean, work: (database: Database) => Promise<T>): Promise<T> {
  const external = env.DATABASE_URL || SERVICES.every((service) => env[`${service.toUpperCase()}_DATABASE_URL`]);
  if (external) return work(locate(undefined, env));
  const cluster = readEmbeddedCluster(env);
  if (!cluster && !create) {
    throw new BackupError(`No platform database in ${dataDirectory(env)}: set PASSPORT_DATA_DIR to the data folder of the platform, or DATABASE_URL to its database.`);
  }
  if (cluster && (await answers(clusterUrl(cluster)))) return work(locate(clusterUrl(cluster), env));
  const postgres = await startEmbeddedPostgres({ dataDir: dataDirectory(env), port: loadRuntimeConfig(env).embeddedPort });
  try {
    return await work(locate(postgres.url, env));
  } finally {
    await postgres.stop();
  }
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client(clientConfig(parseDatabaseUrl(url), parseDatabaseUrl(url).database));
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function connect(database: Database): Promise<pg.Client> {
  const client = new pg.Client(clientConfig(database.target, database.target.database));
  await client.connect();
  // A backup of a large database is one long transaction; the services' own timeouts do not apply to it.
  await client.query('SET statement_timeout = 0; SET idle_in_transaction_session_timeout = 0');
  return client;
}

// ---------------------------------------------------------------------------------------------
// Frames

/** Writes frames into gzip, hashing the uncompressed bytes, with the stream's back-pressure. */
class FrameWriter {
  readonly #hash = createHash('sha256');
  readonly #gzip = createGzip();
  bytes = 0;

  constructor() {
    this.#gzip.setMaxListeners(0);
  }

  get output(): Gzip {
    return this.#gzip;
  }

  async frame(kind: string, payload: Buffer | string): Promise<void> {
    const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
    await this.#raw(Buffer.concat([Buffer.from(`${kind} ${body.length}\n`), body]));
  }

  async start(): Promise<void> {
    await this.#raw(Buffer.from(MAGIC));
  }

  /** The digest frame and the end of the stream. */
  async finish(): Promise<void> {
    const digest = this.#hash.digest('hex');
    this.#gzip.end(`sha256 ${digest.length}\n${digest}`);
  }

  async #raw(bytes: Buffer): Promise<void> {
    this.#hash.update(bytes);
    if (!this.#gzip.write(bytes)) await new Promise((resolve) => this.#gzip.once('drain', resolve));
  }
}

interface Frame {
  kind: string;
  payload: Buffer;
}

/** The frames of a backup file, checking its digest at the last one; a damaged file throws BackupError. */
async function* readFrames(file: string): AsyncGenerator<Frame> {
  const damaged = (why: string) => new BackupError(`${file} is not a whole backup (${why}): use an intact copy of the file.`);
  if (!existsSync(file)) throw new BackupError(`No backup file at ${file}: name a file written by npm run backup.`);
  const source = createReadStream(file);
  const input = source.pipe(createGunzip());
  // pipe() does not pass a read error on; the loop below reports it.
  source.on('error', (error) => input.destroy(error));
  const hash = createHash('sha256');
  let buffer: Buffer = Buffer.alloc(0);
  const chunks = input[Symbol.asyncIterator]();
  /** At least `n` bytes in the buffer, or false at the end of the stream. */
  const fill = async (n: number): Promise<boolean> => {
    while (buffer.length < n) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (error) {
        throw damaged((error as Error).message);
      }
      if (next.done) return false;
      buffer = buffer.length ? Buffer.concat([buffer, next.value]) : next.value;
    }
    return true;
  };
  const take = (n: number) => {
    const taken = buffer.subarray(0, n);
    buffer = buffer.subarray(n);
    return taken;
  };
  if (!(await fill(MAGIC.length)) || take(MAGIC.length).toString() !== MAGIC) throw damaged('it does not start as a passport backup');
  hash.update(MAGIC);
  for (;;) {
    let newline = buffer.indexOf(10);
    while (newline < 0 && buffer.length < 64) {
      if (!(await fill(buffer.length + 1))) throw damaged('it ends before its checksum');
      newline = buffer.indexOf(10);
    }
    const header = /^([a-z0-9]+) (\d+)$/.exec(buffer.subarray(0, Math.max(newline, 0)).toString());
    if (newline < 0 || !header) throw damaged('a frame header is malformed');
    const length = Number(header[2]);
    if (!(await fill(newline + 1 + length))) throw damaged('it ends inside a frame');
    const head = take(newline + 1);
    const payload = take(length);
    if (header[1] === 'sha256') {
      if (payload.toString() !== hash.digest('hex')) throw damaged('its checksum does not match its content');
      if (await fill(1)) throw damaged('bytes follow its checksum');
      return;
    }
    hash.update(head).update(payload);
    yield { kind: header[1]!, payload };
  }
}

// ---------------------------------------------------------------------------------------------
// Backup

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
  const services = {} as Record<ServiceName, ServiceManifest>;
  const kekIds = new Set<string>();
  for (const service of SERVICES) {
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
 * Writes one consistent snapshot of the four schemas to `file`, replaced whole when complete
 * (lib/files.ts replaceFile: a staging file no planted link can redirect, mode 0600).
 */
export async function backup(file: string, env: NodeJS.ProcessEnv = process.env): Promise<BackupResult> {
  return withDatabase(env, false, async (database) => {
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

/** Every table of the four schemas into `writer`, in one repeatable-read transaction. */
async function writeSnapshot(client: pg.Client, database: Database, env: NodeJS.ProcessEnv, writer: FrameWriter): Promise<Omit<BackupResult, 'bytes'>> {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  const manifest = await describe(client, database, env);
  await writer.start();
  await writer.frame('manifest', JSON.stringify(manifest));
  let rows = 0;
  for (const service of SERVICES) {
    const { schema, tables } = manifest.services[service];
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

// ---------------------------------------------------------------------------------------------
// Restore

/** The manifest of a backup file, after checking the whole file against its digest. */
export async function readBackup(file: string): Promise<BackupManifest> {
  let manifest: BackupManifest | undefined;
  const expected: string[] = [];
  let open: string | undefined;
  const wrong = (why: string) => new BackupError(`${file} is not a well-formed backup (${why}): use a file written by npm run backup.`);
  // Frames are read before the digest at the end is: a damaged one must still end in the sentence.
  const parse = <T>(frame: Frame): T => {
    try {
      return JSON.parse(frame.payload.toString()) as T;
    } catch {
      throw wrong(`a ${frame.kind} frame is not JSON`);
    }
  };
  for await (const frame of readFrames(file)) {
    if (!manifest) {
      if (frame.kind !== 'manifest') throw wrong('its first frame is not the manifest');
      manifest = parse<BackupManifest>(frame);
      if (manifest.format !== 1) throw wrong(`format ${manifest.format} is not format 1`);
      for (const service of SERVICES) for (const table of manifest.services[service]?.tables ?? []) expected.push(`${service}.${table.name}`);
      expected.reverse();
    } else if (frame.kind === 'table') {
      const { service, table } = parse<{ service: string; table: string }>(frame);
      if (open || expected.pop() !== `${service}.${table}`) throw wrong(`table ${service}.${table} is out of place`);
      open = `${service}.${table}`;
    } else if (frame.kind === 'data' || frame.kind === 'end') {
      if (!open) throw wrong(`a ${frame.kind} frame stands outside a table`);
      if (frame.kind === 'end') open = undefined;
    } else throw wrong(`frame kind ${frame.kind} is unknown`);
  }
  if (!manifest || open || expected.length) throw wrong('tables are missing');
  return manifest;
}

export interface RestoreOptions {
  /** Replace the four schemas when the target already has them. */
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
 * Restores a backup into the configured database: refused when any of the four schemas exists there
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
  return withDatabase(env, true, async (database) => {
    const client = await connect(database);
    try {
      await client.query('BEGIN');
      // A start applying migrations meanwhile waits for this restore, and the reverse.
      await client.query('SELECT pg_advisory_xact_lock($1)', [PRISMA_MIGRATION_LOCK]);
      const schemas = SERVICES.map((service) => database.schemas[service]);
      const present = await client.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE nspname = ANY($1) ORDER BY nspname', [schemas]);
      if (present.rows.length && !options.force) {
        throw new BackupError(
          `The database ${database.target.host}:${database.target.port}/${database.target.database} already holds schema ${present.rows.map((row) => `"${row.nspname}"`).join(', ')}: restore into an empty database or data folder, or add --force to replace them.`,
        );
      }
      for (const { nspname } of present.rows) await client.query(`DROP SCHEMA ${quote(nspname)} CASCADE`);
      for (const service of SERVICES) {
        await client.query(`SET LOCAL search_path = ${quote(database.schemas[service])}`);
        await prepareSchema(client, database.schemas[service]);
        for (const migration of migrations[service].backup) await runMigration(client, migration);
      }
      const tables = SERVICES.flatMap((service) => manifest.services[service].tables.map((table) => ({ service, table, name: qualified(database.schemas[service], table.name) })));
      // Rows some migrations seed are replaced by the backup's; triggers would derive rows the backup already holds.
      await client.query(`TRUNCATE ${tables.map((table) => table.name).join(', ')}`);
      for (const table of tables) await client.query(`ALTER TABLE ${table.name} DISABLE TRIGGER USER`);
      const rows = await load(client, file, manifest, database);
      for (const service of SERVICES) {
        for (const sequence of manifest.services[service].sequences) {
          await client.query('SELECT setval($1::regclass, $2::bigint, $3)', [qualified(database.schemas[service], sequence.name), sequence.lastValue, sequence.isCalled]);
        }
      }
      // Deferred foreign keys are checked now: ALTER TABLE refuses a table with checks pending.
      await client.query('SET CONSTRAINTS ALL IMMEDIATE');
      for (const table of tables) await client.query(`ALTER TABLE ${table.name} ENABLE TRIGGER USER`);
      // As the next start would apply them, so that what follows finds the schemas of this version.
      for (const service of SERVICES) {
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
  return withDatabase(env, false, async (database) => {
    const client = await connect(database);
    try {
      const schemas = SERVICES.map((service) => database.schemas[service]);
      const present = await client.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE nspname = ANY($1)', [schemas]);
      const missing = schemas.filter((schema) => !present.rows.some((row) => row.nspname === schema));
      if (missing.length) {
        throw new BackupError(
          `The database ${database.target.host}:${database.target.port}/${database.target.database} holds no schema ${missing.map((schema) => `"${schema}"`).join(', ')}: mark a database restored from a dump of the platform, or restore a backup file with npm run restore -- <file>.`,
        );
      }
      for (const outcome of await deployServices(SERVICES.map((service) => ({ service, url: database.urls[service] })))) {
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

type CheckoutMigrations = Record<ServiceName, { backup: Migration[]; later: Migration[] }>;

/**
 * The backup's migrations as this checkout has them, and the ones it has beyond them; or the sentence
 * saying it cannot restore the backup.
 */
async function checkoutMigrations(manifest: BackupManifest): Promise<CheckoutMigrations> {
  const result = {} as CheckoutMigrations;
  for (const service of SERVICES) {
    const checkout = await readMigrations(migrationsDirectory(service));
    const available = new Map(checkout.map((migration) => [migration.name, migration]));
    const backup = manifest.services[service].migrations.map(({ name, checksum }) => {
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
      const { service, table } = JSON.parse(frame.payload.toString()) as { service: ServiceName; table: string };
      const columns = manifest.services[service].tables.find((candidate) => candidate.name === table)!.columns;
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
