/**
 * The platform's database for a command that an operator runs beside the platform or while it is
 * stopped (`npm run keys`, `npm run db:migrate`): DATABASE_URL (or every <SERVICE>_DATABASE_URL) as
 * configured; else the embedded cluster of the data folder, used as `npm start` runs it or, when
 * nothing runs it, started for the command and stopped after it.
 */
import { clusterUrl, dataDirectory, readEmbeddedCluster } from '../config/database.js';
import { loadRuntimeConfig } from '../config/runtime.js';
import { DATABASE_SCHEMAS } from '../config/services.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { connectionFailure } from './postgres.js';

/** The data folder holds no embedded cluster and no database is configured; its message says what to set. */
export class NoPlatformDatabase extends Error {
  override name = 'NoPlatformDatabase';
}

/**
 * Runs `work` with an environment whose DATABASE_URL leads to the platform's database (see above).
 * `create`: a data folder without a cluster gets one (a restore's), on the configured port.
 */
export async function withPlatformDatabase<T>(work: (env: NodeJS.ProcessEnv) => Promise<T>, env: NodeJS.ProcessEnv = process.env, { create = false } = {}): Promise<T> {
  if (env.DATABASE_URL || DATABASE_SCHEMAS.every((schema) => env[`${schema.toUpperCase()}_DATABASE_URL`])) return work(env);
  const cluster = readEmbeddedCluster(env);
  if (!cluster && !create) {
    throw new NoPlatformDatabase(`No platform database in ${dataDirectory(env)}: set PASSPORT_DATA_DIR to the data folder of the platform (npm start makes it), or DATABASE_URL to its database.`);
  }
  if (cluster && !(await connectionFailure(clusterUrl(cluster)))) return work({ ...env, DATABASE_URL: clusterUrl(cluster) });
  // The port it ran on last, unless another is configured.
  const port = cluster && !env.EMBEDDED_PG_PORT ? cluster.port : loadRuntimeConfig(env).embeddedPort;
  const postgres = await startEmbeddedPostgres({ dataDir: dataDirectory(env), port });
  try {
    return await work({ ...env, DATABASE_URL: postgres.url });
  } finally {
    await postgres.stop();
  }
}
