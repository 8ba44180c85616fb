/**
 * `npm run db:migration -- <service> <name>`: writes the next migration of a service — the SQL that
 * takes a database with every committed migration to the service's current Prisma schema — as
 * `prisma migrate dev --create-only` would. The WebAssembly engine cannot open a shadow database
 * for the CLI's data-loss check, so a scratch database of our own plays that part: the committed
 * migrations are applied to it, the engine diffs it against the schema, and it is dropped.
 * Apply the result with `npm start` or `npm run db:migrate`. This authoring step alone uses Prisma's
 * schema engine (its WebAssembly build, a devDependency, through its JavaScript API); applying
 * migrations never does.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { serviceDatabaseUrl } from '../../lib/config/database.js';
import { isServiceName, SERVICES } from '../../lib/config/services.js';
import { deployMigrations, migrationsDirectory } from '../../lib/db/migrate.js';
import { openSchemaEngine } from './wasm-engine.js';
import { ensureDatabase, parseDatabaseUrl } from '../../lib/db/postgres.js';

const [service = '', name = ''] = process.argv.slice(2);
if (!isServiceName(service) || !/^[a-z0-9_]+$/.test(name)) {
  console.error(`usage: npm run db:migration -- <${SERVICES.join('|')}> <name_in_snake_case>`);
  process.exit(2);
}

const schemaFile = join(dirname(fileURLToPath(import.meta.url)), '..', service, 'schema.prisma');
const target = new URL(serviceDatabaseUrl(service));
const scratchName = `${parseDatabaseUrl(target.toString()).database}_migration_${process.pid}`;
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
  if (!script || script.trim() === '' || script.includes('-- This is an empty migration.')) {
    console.log(`${service}: the committed migrations already match prisma/${service}/schema.prisma; nothing to write.`);
  } else {
    const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
    const directory = join(migrationsDirectory(service), `${stamp}_${name}`);
    await mkdir(directory);
    await writeFile(join(directory, 'migration.sql'), script);
    console.log(`${service}: wrote ${directory}/migration.sql`);
  }
} finally {
  await dropScratch();
}
