/**
 * `npm run db:migration -- <service> <name>`: writes the next migration of a service — the SQL that
 * takes a database with every committed migration to the service's current Prisma schema — as
 * `prisma migrate dev --create-only` would (the diff against a scratch database: prisma/tools/draft-migration.ts).
 * Apply the result with `npm start` or `npm run db:migrate`. This authoring step alone uses Prisma's
 * schema engine (its WebAssembly build, a devDependency, through its JavaScript API); applying
 * migrations never does.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serviceDatabaseUrl } from '../../lib/config/database.js';
import { DATABASE_SCHEMAS, isSchemaName } from '../../lib/config/services.js';
import { migrationsDirectory } from '../../lib/db/migrate.js';
import { draftMigration } from './draft-migration.js';

const [service = '', name = ''] = process.argv.slice(2);
if (!isSchemaName(service) || !/^[a-z0-9_]+$/.test(name)) {
  console.error(`usage: npm run db:migration -- <${DATABASE_SCHEMAS.join('|')}> <name_in_snake_case>`);
  process.exit(2);
}

const script = await draftMigration(service, serviceDatabaseUrl(service));
if (script === undefined) {
  console.log(`${service}: the committed migrations already match prisma/${service}/schema.prisma; nothing to write.`);
} else {
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const directory = join(migrationsDirectory(service), `${stamp}_${name}`);
  await mkdir(directory);
  await writeFile(join(directory, 'migration.sql'), script);
  console.log(`${service}: wrote ${directory}/migration.sql`);
}
