/**
 * One embedded PostgreSQL for the whole test run. A template database with every service's
 * migrations is made once; each test file clones it into a database of its own. The commands'
 * compiled build (bin/run.mjs) is brought up to date first, so that child processes started side by
 * side do not each build it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { withSchema } from '../../lib/config/database.js';
import { DATABASE_SCHEMAS } from '../../lib/config/services.js';
import { startEmbeddedPostgres } from '../../lib/db/embedded-postgres.js';
import { deployMigrations } from '../../lib/db/migrate.js';

export const TEMPLATE_DATABASE = 'passport_template';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

export { freePort } from './free-port.js';
import { freePort } from './free-port.js';

export default async function setup(project: TestProject) {
  execFileSync(process.execPath, [join(import.meta.dirname, '..', '..', 'bin', 'run.mjs'), '--build'], { stdio: 'inherit' });
  const dataDir = await mkdtemp(join(tmpdir(), 'passport-test-'));
  // The run's cluster is thrown away at its end: no fsync (on this machine's disk ~3 ms each commit waits for).
  const postgres = await startEmbeddedPostgres({ dataDir, port: await freePort(), durable: false });
  const admin = new pg.Client({ connectionString: postgres.url.replace(/\/[^/]*$/, '/postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await admin.end();
  const template = postgres.url.replace(/\/[^/]*$/, `/${TEMPLATE_DATABASE}`);
  for (const schema of DATABASE_SCHEMAS) await deployMigrations(schema, withSchema(template, schema));
  project.provide('postgresUrl', postgres.url);
  return async () => {
    await postgres.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
}
