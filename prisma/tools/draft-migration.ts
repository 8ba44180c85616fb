/**
 * The work of `npm run db:migration` (prisma/tools/new-migration.ts): the SQL that takes a database
 * with every committed migration of a service to the service's current Prisma schema. The WebAssembly
 * engine cannot open a shadow database for the CLI's data-loss check, so a scratch database of our
 * own plays that part: the committed migrations are applied to it, the engine diffs it against the
 * schema, and it is dropped. A module of its own so that a test can run it for every service in one
 * process (test/foundation/migrations.test.ts), the engine loaded once.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { SchemaName } from '../../lib/config/services.js';
import { deployMigrations } from '../../lib/db/migrate.js';
import { ensureDatabase, parseDatabaseUrl } from '../../lib/db/postgres.js';
import { openSchemaEngine } from './wasm-engine.js';

/**
 * The next migration's SQL for `service`, whose database is `targetUrl` (only its server is used:
 * the scratch database sits beside it); undefined when the committed migrations already match the schema.
 */
export async function draftMigration(service: SchemaName, targetUrl: string): Promise<string | undefined> {
  const schemaFile = join(dirname(fileURLToPath(import.meta.url)), '..', service, 'schema.prisma');
  const target = new URL(targetUrl);
  const scratchName = `${parseDatabaseUrl(target.toString()).database}_migration_${process.pid}_${service}`;
  const scratch = new URL(target);
  scratch.pathname = `/${scratchName}`;

  async function dropScratch(): Promise<void> {
    const admin = new pg.Client({ connectionString: Object.assign(new URL(target), { pathname: '/postgres', search: '' }).toString() });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS "${scratchName}" WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  }

  await ensureDatabase(scratch.toString());
  try {
    await deployMigrations(service, scratch.toString());
    const content = await readFile(schemaFile, 'utf8');
    const { engine, close } = await openSchemaEngine({ url: scratch.toString(), datamodels: [[schemaFile, content]] });
    let script: string | null;
    try {
      const files = [{ path: schemaFile, content }];
      const result = await engine.diff({
        from: { tag: 'schemaDatasource', files, configDir: dirname(schemaFile) },
        to: { tag: 'schemaDatamodel', files },
        script: true,
        exitCode: null,
        filters: { externalTables: [], externalEnums: [] },
      });
      script = result.stdout;
    } finally {
      await close();
    }
    return !script || script.trim() === '' || script.includes('-- This is an empty migration.') ? undefined : script;
  } finally {
    await dropScratch();
  }
}
