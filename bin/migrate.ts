/**
 * `npm run db:migrate [-- <service>…]`: applies the committed migrations of the named services and
 * identity store (all five by default) to the configured database (DATABASE_URL, <SERVICE>_DATABASE_URL or the embedded
 * cluster of the data folder, started for the command when the platform is not running), as
 * `npm start` does before serving.
 */
import { serviceDatabaseUrl } from '../lib/config/database.js';
import { DATABASE_SCHEMAS, isSchemaName } from '../lib/config/services.js';
import { deployMigrations } from '../lib/db/migrate.js';
import { NoPlatformDatabase, withPlatformDatabase } from '../lib/db/platform-database.js';
import { explainDatabaseFailure } from '../lib/db/postgres.js';

/** A database that refused the migrations, in one sentence. */
class MigrationRefused extends Error {}

const named = process.argv.slice(2);
const unknown = named.filter((name) => !isSchemaName(name));
if (unknown.length) {
  console.error(`unknown service ${unknown.join(', ')}; usage: npm run db:migrate [-- <${DATABASE_SCHEMAS.join('|')}>…]`);
  process.exit(2);
}
await withPlatformDatabase(async (env) => {
  for (const service of named.length ? named.filter(isSchemaName) : DATABASE_SCHEMAS) {
    const url = serviceDatabaseUrl(service, env);
    const applied = await deployMigrations(service, url).catch((error: unknown) => {
      const why = explainDatabaseFailure(error, url, 'Cannot migrate');
      throw why ? new MigrationRefused(why) : error;
    });
    console.log(`${service}: ${applied.length ? `applied ${applied.join(', ')}` : 'up to date'}`);
  }
}).catch((error: unknown) => {
  if (!(error instanceof NoPlatformDatabase || error instanceof MigrationRefused)) throw error;
  console.error(error.message);
  process.exit(1);
});
