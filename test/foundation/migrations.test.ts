import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { withSchema } from '../../lib/config/database.js';
import { SERVICES } from '../../lib/config/services.js';
import { deployMigrations, migrationsDirectory } from '../../prisma/engine/migrate.js';
import { createTestDatabase, sql } from '../support/database.js';

const execFileAsync = promisify(execFile);

const committedMigrations = (service: (typeof SERVICES)[number]) =>
  readdirSync(migrationsDirectory(service), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

describe('migrations', () => {
  it('apply to an empty database, each service in its own schema, and only once', async () => {
    const url = await createTestDatabase({ empty: true });
    for (const service of SERVICES) {
      expect(await deployMigrations(service, withSchema(url, service))).toEqual(committedMigrations(service));
      expect(await deployMigrations(service, withSchema(url, service))).toEqual([]);
    }
    const tables = await sql<{ table_schema: string; table_name: string }>(url, `SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema = ANY($1)`, [SERVICES]);
    for (const service of SERVICES) {
      const own = tables.rows.filter((row) => row.table_schema === service).map((row) => row.table_name);
      expect(own).toEqual(expect.arrayContaining(['_prisma_migrations', 'signing_key', 'admin_log']));
    }
    const stray = await sql(url, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`);
    expect(stray.rowCount).toBe(0);
  });

  it.concurrent.each(SERVICES)('of %s match its Prisma schema exactly (npm run db:migration finds nothing to write)', async (service) => {
    const url = await createTestDatabase({ empty: true });
    const run = await execFileAsync(process.execPath, ['--import', 'tsx', 'prisma/engine/new-migration.ts', service, 'drift_check'], {
      encoding: 'utf8',
      env: { ...process.env, DATABASE_URL: url },
    });
    expect(run.stdout).toContain('nothing to write');
  });

  it('are what `prisma migrate deploy` and `migrate status` of the Prisma CLI apply and report, without Prisma binaries', async () => {
    const url = await createTestDatabase({ empty: true });
    const prisma = (...args: string[]) =>
      spawnSync(process.execPath, ['prisma/engine/prisma.mjs', ...args, '--config', 'prisma/issuer/prisma.config.ts'], {
        encoding: 'utf8',
        env: { ...process.env, ISSUER_DATABASE_URL: withSchema(url, 'issuer') },
      });
    const deploy = prisma('migrate', 'deploy');
    expect(deploy.status, deploy.stderr).toBe(0);
    expect(deploy.stdout).toContain('migrations have been successfully applied');
    const status = prisma('migrate', 'status');
    expect(status.status, status.stderr).toBe(0);
    expect(status.stdout).toContain('Database schema is up to date');
    const applied = await sql<{ migration_name: string }>(url, 'SELECT migration_name FROM issuer._prisma_migrations ORDER BY migration_name');
    expect(applied.rows.map((row) => row.migration_name)).toEqual(committedMigrations('issuer'));
  });
});
