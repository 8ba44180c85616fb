/**
 * A PostgreSQL server of Debian's own packages (postgresql-15), a cluster of a test's own: for what
 * needs PostgreSQL's client tools of the server's major version, pg_dump and pg_restore, which the
 * embedded PostgreSQL (17) ships none of and Debian's client (15) refuses to use against.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';

export const DEBIAN_POSTGRES_BIN = '/usr/lib/postgresql/15/bin';

const run = promisify(execFile);

/** As root, PostgreSQL runs as the postgres user (it refuses root), the package's own. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

export class DebianPostgres {
  private constructor(
    private readonly folder: string,
    private readonly user: { uid: number; gid: number } | undefined,
    readonly port: number,
  ) {}

  /** A new cluster (initdb), started on a free loopback port, with an empty database `passport` of the user `passport`. */
  static async start(name: string): Promise<DebianPostgres> {
    return (await DebianPostgres.startSeveral([name]))[0]!;
  }

  /**
   * New clusters as `start` makes one, started side by side. initdb runs once: its cluster, never
   * started, is copied for the others, the same files a second initdb would write (~1 CPU s each).
   */
  static async startSeveral(names: readonly string[]): Promise<DebianPostgres[]> {
    const user = serverUser();
    const servers = await Promise.all(
      names.map(async (name) => {
        const folder = await mkdtemp(join(tmpdir(), `passport-${name}-`));
        if (user) await chown(folder, user.uid, user.gid);
        return new DebianPostgres(folder, user, await freePort());
      }),
    );
    const [first, ...others] = servers;
    await first!.#command('initdb', ['-D', first!.#data, '-U', 'passport', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await Promise.all(others.map((server) => run('cp', ['-a', first!.#data, server.#data], { ...user })));
    await Promise.all(
      servers.map(async (server) => {
        await server.#command('pg_ctl', [
          '-D',
          server.#data,
          '-l',
          join(server.folder, 'log'),
          '-w',
          'start',
          '-o',
          `-p ${server.port} -k ${server.folder} -c listen_addresses=127.0.0.1 -c fsync=off`,
        ]);
        await server.sql('postgres', 'CREATE DATABASE passport');
      }),
    );
    return servers;
  }

  get #data(): string {
    return join(this.folder, 'data');
  }

  /** The URL of a database of this server, as the platform takes it. */
  url(database = 'passport'): string {
    return `postgresql://passport@127.0.0.1:${this.port}/${database}`;
  }

  async sql(database: string, text: string): Promise<pg.QueryResult> {
    const client = new pg.Client({ connectionString: this.url(database) });
    await client.connect();
    try {
      return await client.query(text);
    } finally {
      await client.end();
    }
  }

  /** One of the package's commands (initdb, pg_ctl, pg_dump, pg_restore), as the server's user. */
  async #command(name: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
    return run(join(DEBIAN_POSTGRES_BIN, name), args, { cwd: this.folder, ...this.user, timeout: 120_000 });
  }

  /** A client command (pg_dump, pg_restore) of the server's version, run as the caller. */
  client(name: 'pg_dump' | 'pg_restore', args: string[]): Promise<{ stdout: string; stderr: string }> {
    return run(join(DEBIAN_POSTGRES_BIN, name), args, { timeout: 120_000 });
  }

  /** Stopped, and its folder removed. */
  async remove(): Promise<void> {
    await this.#command('pg_ctl', ['-D', this.#data, '-m', 'fast', '-w', 'stop']).catch(() => {});
    await rm(this.folder, { recursive: true, force: true });
  }
}
