import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { cp, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { withSchema } from '../../lib/config/database.js';
import { DATABASE_SCHEMAS, SERVICES, type SchemaName } from '../../lib/config/services.js';
import { applyMigrations, deployMigrations, deployServices, MigrationError, migrationsDirectory, readMigrations } from '../../lib/db/migrate.js';
import { bitAt } from '../../lib/formats/vc/index.js';
import { draftMigration } from '../../prisma/tools/draft-migration.js';
import { openSchemaEngine } from '../../prisma/tools/wasm-engine.js';
import { createTestDatabase, sqlSessions } from '../support/database.js';
import { scratchFolder } from '../support/scratch-folder.js';
import { processEnv } from '../support/environment.js';

const execFileAsync = promisify(execFile);
// One connection per database for the tests' own statements (each new connection costs PostgreSQL ~34 ms of CPU).
const { sql, end: endSql } = sqlSessions();
afterAll(endSql);
// The migration folders the tests copy and change; removed when the file ends, failing or not.
const scratch = scratchFolder('migrations-');

const committedMigrations = (service: SchemaName) =>
  readdirSync(migrationsDirectory(service), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

describe('migrations', () => {
  it('apply to an empty database, each service (and the identity store) in its own schema, and only once', async () => {
    const url = await createTestDatabase({ empty: true });
    for (const service of DATABASE_SCHEMAS) {
      expect(await deployMigrations(service, withSchema(url, service))).toEqual(committedMigrations(service));
      expect(await deployMigrations(service, withSchema(url, service))).toEqual([]);
    }
    const tables = await sql<{ table_schema: string; table_name: string }>(url, `SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema = ANY($1)`, [DATABASE_SCHEMAS]);
    for (const service of SERVICES) {
      const own = tables.rows.filter((row) => row.table_schema === service).map((row) => row.table_name);
      expect(own).toEqual(expect.arrayContaining(['_prisma_migrations', 'signing_key', 'admin_log']));
    }
    const identity = tables.rows.filter((row) => row.table_schema === 'identity').map((row) => row.table_name);
    expect(identity.sort()).toEqual(['_prisma_migrations', 'access_token', 'operator']);
    expect((await sql(url, 'SELECT id, status FROM identity.operator')).rows).toEqual([{ id: 'default', status: 'active' }]);
    const stray = await sql(url, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`);
    expect(stray.rowCount).toBe(0);
  });

  // What `npm run db:migration` runs (prisma/tools/draft-migration.ts), here in this process for each
  // service but trust (Prisma's engine loaded once); for trust the command itself runs it, below. The
  // work's scratch databases sit beside the one it is given, which it does not touch: one serves all.
  let drafts: Promise<string> | undefined;
  const draftsServer = () => (drafts ??= createTestDatabase({ empty: true }));
  it.each(DATABASE_SCHEMAS.filter((service) => service !== 'trust'))('of %s match its Prisma schema exactly (npm run db:migration finds nothing to write)', async (service) => {
    expect(await draftMigration(service, withSchema(await draftsServer(), service))).toBeUndefined();
  });

  it('of trust match its Prisma schema exactly: `npm run db:migration`, the command, finds nothing to write and writes nothing', async () => {
    const url = await draftsServer();
    const run = await execFileAsync(process.execPath, ['bin/run.mjs', 'prisma/tools/new-migration.ts', 'trust', 'drift_check'], {
      encoding: 'utf8',
      env: processEnv({ DATABASE_URL: url }),
    });
    expect(run.stdout).toBe('trust: the committed migrations already match prisma/trust/schema.prisma; nothing to write.\n');
    expect(committedMigrations('trust').filter((name) => name.endsWith('_drift_check'))).toEqual([]);
  });

  it('are applied by `npm run db:migrate` to the configured database, and a second run finds them up to date', async () => {
    const url = await createTestDatabase({ empty: true });
    const run = (...args: string[]) => execFileAsync(process.execPath, ['bin/run.mjs', 'bin/migrate.ts', ...args], { encoding: 'utf8', env: processEnv({ DATABASE_URL: url }) });
    const first = await run();
    for (const service of DATABASE_SCHEMAS) expect(first.stdout).toContain(`${service}: applied ${committedMigrations(service).join(', ')}`);
    expect((await run('trust')).stdout).toBe('trust: up to date\n');
    await expect(run('trust', 'nonsense')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('unknown service nonsense') });
  });

  it('read and write the records Prisma itself reads and writes: a database Prisma migrated upgrades, and Prisma then finds nothing to apply', async () => {
    const url = withSchema(await createTestDatabase({ empty: true }), 'issuer');
    const all = committedMigrations('issuer');
    const first = await mkdtemp(join(scratch, 'migrations-'));
    await cp(join(migrationsDirectory('issuer'), all[0]!), join(first, all[0]!), { recursive: true });
    expect(await applyWithPrismaEngine(url, first)).toEqual([all[0]]);
    expect(await deployMigrations('issuer', url)).toEqual(all.slice(1));
    expect(await applyWithPrismaEngine(url, migrationsDirectory('issuer'))).toEqual([]);
    const records = await sql<{ migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number }>(
      url,
      'SELECT migration_name, checksum, finished_at, applied_steps_count FROM issuer._prisma_migrations ORDER BY migration_name',
    );
    const files = await readMigrations(migrationsDirectory('issuer'));
    expect(records.rows.map((row) => [row.migration_name, row.checksum, row.applied_steps_count])).toEqual(files.map((file) => [file.name, file.checksum, 1]));
    expect(records.rows.every((row) => row.finished_at instanceof Date)).toBe(true);
  });

  it('give passports made before status lists an index each and the revocation and suspension bits of their status', async () => {
    const url = withSchema(await createTestDatabase({ empty: true }), 'issuer');
    const all = committedMigrations('issuer');
    const upTo = all.indexOf(all.find((name) => name.endsWith('_status_lists'))!);
    const before = await mkdtemp(join(scratch, 'migrations-'));
    for (const name of all.slice(0, upTo)) await cp(join(migrationsDirectory('issuer'), name), join(before, name), { recursive: true });
    expect(await applyMigrations(url, before)).toEqual(all.slice(0, upTo));
    for (const [id, status] of [
      ['p-active', 'active'],
      ['p-suspended', 'suspended'],
      ['p-revoked', 'revoked'],
    ]) {
      await sql(
        url,
        `INSERT INTO issuer.passport (id, identity, digital_link, granularity, type_ref_id, type_ref_version, config_vector, capability_class, claims, status, core, log_size, frontier, log_head)
         VALUES ($1, $1, $1, 'item', 'm', 1, '{}', 'trace', '{}', $2, '{}', 0, '{}', '{}')`,
        [id, status],
      );
    }
    expect(await deployMigrations('issuer', url)).toEqual(all.slice(upTo));
    const indexes = new Map((await sql<{ id: string; status_index: number }>(url, 'SELECT id, status_index FROM issuer.passport')).rows.map((row) => [row.id, row.status_index]));
    expect(new Set(indexes.values()).size).toBe(3);
    const lists = await sql<{ purpose: string; list: number; bits: Buffer }>(url, 'SELECT purpose, list, bits FROM issuer.status_list ORDER BY purpose');
    expect(lists.rows.map((row) => [row.purpose, row.list, row.bits.length])).toEqual([
      ['revocation', 0, 16384],
      ['suspension', 0, 16384],
    ]);
    const [revocation, suspension] = lists.rows.map((row) => new Uint8Array(row.bits));
    const bits = (list: Uint8Array) => [...indexes.entries()].filter(([, index]) => bitAt(list, index)).map(([id]) => id);
    expect(bits(revocation!)).toEqual(['p-revoked']);
    expect(bits(suspension!)).toEqual(['p-suspended']);
    expect(revocation!.reduce((count, byte) => count + (byte === 0 ? 0 : 1), 0)).toBe(1);
  });

  it('started twice at once against one schema apply each migration once', async () => {
    const url = withSchema(await createTestDatabase({ empty: true }), 'registry');
    const runs = await Promise.all([deployMigrations('registry', url), deployMigrations('registry', url), deployMigrations('registry', url)]);
    expect(runs.flat().sort()).toEqual(committedMigrations('registry'));
    const records = await sql(url, 'SELECT migration_name FROM registry._prisma_migrations');
    expect(records.rowCount).toBe(committedMigrations('registry').length);
  });

  it('leave nothing of a failing migration behind, name it, and apply it once it is fixed', async () => {
    const url = withSchema(await createTestDatabase({ empty: true }), 'scratch');
    const directory = await mkdtemp(join(scratch, 'migrations-'));
    const write = async (name: string, text: string) => {
      await mkdir(join(directory, name), { recursive: true });
      await writeFile(join(directory, name, 'migration.sql'), text);
    };
    await write('20260101000000_first', 'CREATE TABLE "first" ("id" TEXT PRIMARY KEY);');
    await write('20260102000000_second', 'CREATE TABLE "second" ("id" TEXT PRIMARY KEY);\nINSERT INTO "second" VALUES (NULL);');
    await expect(applyMigrations(url, directory)).rejects.toThrow(/migration 20260102000000_second failed and was rolled back: .*null value/);
    const tables = async () =>
      (await sql<{ table_name: string }>(url, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'scratch' ORDER BY table_name`)).rows.map((row) => row.table_name);
    expect(await tables()).toEqual(['_prisma_migrations', 'first']);
    expect((await sql(url, 'SELECT migration_name FROM scratch._prisma_migrations')).rows).toEqual([{ migration_name: '20260101000000_first' }]);

    await write('20260102000000_second', 'CREATE TABLE "second" ("id" TEXT PRIMARY KEY);\nINSERT INTO "second" VALUES (\'one\');');
    expect(await applyMigrations(url, directory)).toEqual(['20260102000000_second']);
    expect(await tables()).toEqual(['_prisma_migrations', 'first', 'second']);

    await write('20260101000000_first', 'CREATE TABLE "first" ("id" TEXT PRIMARY KEY, "note" TEXT);');
    await write('20260103000000_third', 'CREATE TABLE "third" ("id" TEXT PRIMARY KEY);');
    await expect(applyMigrations(url, directory)).rejects.toThrow(/migration 20260101000000_first was changed after it was applied/);
    expect(await tables()).toEqual(['_prisma_migrations', 'first', 'second']);
  });

  it("of the four services at a start share one session, each in its own schema, and one service's failure leaves the others applied", async () => {
    const url = await createTestDatabase({ empty: true });
    await deployMigrations('trust', withSchema(url, 'trust'));
    await sql(url, `INSERT INTO trust._prisma_migrations (id, checksum, migration_name, started_at) VALUES ('5b0c2f4e-8a61-4d3b-9e27-0c1d2e3f4a5b', 'x', '20991231000000_broken', now())`);
    const sessions = new Map<string, number>();
    const outcomes = await deployServices(
      SERVICES.map((service) => ({
        service,
        url: withSchema(url, service),
        afterwards: async (client) => {
          sessions.set(service, (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
        },
      })),
    );
    for (const [index, service] of SERVICES.entries()) {
      if (service === 'trust')
        expect(outcomes[index]).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: expect.stringMatching(/20991231000000_broken failed earlier in schema "trust"/) }) });
      else expect(outcomes[index]).toEqual({ status: 'fulfilled', value: committedMigrations(service) });
    }
    expect(sessions.size).toBe(SERVICES.length - 1);
    expect(new Set(sessions.values()).size).toBe(1);
    for (const service of SERVICES) {
      const records = await sql<{ count: number }>(url, `SELECT count(*)::int AS count FROM ${service}._prisma_migrations WHERE finished_at IS NOT NULL`);
      expect(records.rows[0]!.count, service).toBe(committedMigrations(service).length);
    }
  });

  it('refuse to go on past a migration Prisma recorded as failed', async () => {
    const url = withSchema(await createTestDatabase({ empty: true }), 'trust');
    await deployMigrations('trust', url);
    await sql(url, `INSERT INTO trust._prisma_migrations (id, checksum, migration_name, started_at) VALUES ('a3e1c7a2-1d5e-4a0e-9c1b-3f7e2f0c9d11', 'x', '20991231000000_broken', now())`);
    await expect(deployMigrations('trust', url)).rejects.toBeInstanceOf(MigrationError);
    await expect(deployMigrations('trust', url)).rejects.toThrow(/20991231000000_broken failed earlier/);
  });
});

/** Prisma's own schema engine (its WebAssembly build) applying a migrations folder, as `prisma migrate deploy` does. */
async function applyWithPrismaEngine(url: string, directory: string): Promise<string[]> {
  const { engine, close } = await openSchemaEngine({ url });
  try {
    const migrations = await readMigrations(directory);
    const output = await engine.applyMigrations({
      migrationsList: {
        baseDir: directory,
        lockfile: { path: 'migration_lock.toml', content: 'provider = "postgresql"\n' },
        shadowDbInitScript: '',
        migrationDirectories: migrations.map((migration) => ({ path: migration.name, migrationFile: { path: 'migration.sql', content: { tag: 'ok' as const, value: migration.sql } } })),
      },
      filters: { externalTables: [], externalEnums: [] },
    });
    return output.appliedMigrationNames;
  } finally {
    await close();
  }
}
