/**
 * `npm run db:migrate [-- <service>…]`: applies the committed migrations of the named services (all
 * four by default) to the configured database (DATABASE_URL, <SERVICE>_DATABASE_URL or the embedded
 * cluster, which must be running), as `npm start` does before serving.
 */
import { serviceDatabaseUrl } from '../lib/config/database.js';
import { isServiceName, SERVICES } from '../lib/config/services.js';
import { deployMigrations } from '../lib/db/migrate.js';

const named = process.argv.slice(2);
const unknown = named.filter((name) => !isServiceName(name));
if (unknown.length) {
  console.error(`unknown service ${unknown.join(', ')}; usage: npm run db:migrate [-- <${SERVICES.join('|')}>…]`);
  process.exit(2);
}
for (const service of named.length ? named.filter(isServiceName) : SERVICES) {
  const applied = await deployMigrations(service, serviceDatabaseUrl(service));
  console.log(`${service}: ${applied.length ? `applied ${applied.join(', ')}` : 'up to date'}`);
}
