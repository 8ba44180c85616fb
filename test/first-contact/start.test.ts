/**
 * `npm start` as a newcomer meets it: a wrong database password, a database that is not there, a
 * first start that fails after making tokens, root with the project in a 0700 home, an ordinary user
 * with a home of its own and a data folder that does not exist yet (with DATABASE_URL: test/ops/traces-and-logs.test.ts). Each run is
 * the real command in a process of its own; the test reads what the person reads: the exit code,
 * the lines printed, the files left behind.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { hashToken } from '../../lib/auth/tokens.js';
import { freePort } from '../support/free-port.js';
import { LOOPBACK_PORTS_AT_LISTEN } from '../support/stack.js';
import { newcomerEnv } from '../support/environment.js';

let folder: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Options {
  /** Run as this user. */
  as?: { uid: number; gid: number };
  /** The project folder to run in (default: this one). */
  cwd?: string;
  /** What to do once `until` has appeared, before Ctrl-C. */
  whileRunning?: (stdout: string) => Promise<void>;
}

/** Runs bin/start.ts until it exits, or until `until` appears on its output (then it is stopped with Ctrl-C's signal). */
function npmStart(env: Record<string, string>, until?: string, { as, cwd, whileRunning }: Options = {}): Promise<Run> {
  const child = spawn(process.execPath, ['bin/run.mjs', 'bin/start.ts'], { env: newcomerEnv({ ...LOOPBACK_PORTS_AT_LISTEN, ...env }), stdio: ['ignore', 'pipe', 'pipe'], cwd, ...as });
  let stdout = '';
  let stderr = '';
  let seen = false;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (!until || seen || !stdout.includes(until)) return;
    seen = true;
    // A failing check still ends the run: its error is reported with what the start printed.
    void (whileRunning?.(stdout) ?? Promise.resolve()).catch((error: unknown) => (stderr += `while running: ${String(error)}\n`)).finally(() => child.kill('SIGINT'));
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A start that hangs is a failure too: it is ended after 80 s and reported with what it printed.
  const hung = setTimeout(() => child.kill('SIGKILL'), 80_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(hung);
      resolve({ code, stdout, stderr });
    }),
  );
}

const lines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

/** The tokens in lines of `admin <token>`, `writer <token>` (indented on a terminal and by rotate, not in new-tokens.txt). */
const shownTokens = (text: string) => Object.fromEntries([...text.matchAll(/^ *(admin|writer) +(\S+)$/gm)].map((match) => [match[1]!, match[2]!]));

/** `rm -rf`: the linked project below holds some 50,000 entries, which coreutils removes in a third of the CPU fs.rm takes. */
const removeTree = (path: string) => promisify(execFile)('rm', ['-rf', '--', path]);

/**
 * What this checkout holds that a clone plus `npm ci` does not: its data folder, the benchmark tools'
 * own install (`npm run bench:install`, some 80,000 files) and git's files, which npm start never reads.
 * Linking them would cost the copy and its removal most of their time.
 */
const NOT_IN_A_CLONE = ['.data', '.git', 'bench/tools/node_modules'];

/** `source` hard-linked to `target` (`cp -al`), leaving out the `skipped` paths (relative to `source`). */
async function linkTree(source: string, target: string, skipped: readonly string[]): Promise<void> {
  const entries = await readdir(source);
  const whole = entries.filter((entry) => !skipped.some((path) => path === entry || path.startsWith(`${entry}/`))).map((entry) => join(source, entry));
  await mkdir(target);
  if (whole.length) execFileSync('cp', ['-al', ...whole, target]);
  for (const entry of entries) {
    const below = skipped.filter((path) => path.startsWith(`${entry}/`)).map((path) => path.slice(entry.length + 1));
    if (below.length) await linkTree(join(source, entry), join(target, entry), below);
  }
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'first-contact-'));
});
afterAll(() => removeTree(folder));

// Each test runs whole starts (Node loading the platform's compiled build, then PostgreSQL): 10–60 s on a busy machine.
describe('npm start', { timeout: 90_000 }, () => {
  // With DATABASE_URL, configured tokens and a data folder that does not exist yet, npm start makes the folder and runs:
  // test/ops/traces-and-logs.test.ts asserts it on the start it runs that way anyway (one start of the whole platform fewer).

  // Also the start test/ops/traces-and-logs.test.ts scanned for secrets (the same failing start, JSON
  // lines since its output is no terminal): neither the password nor a configured token is printed.
  it('with a wrong database password: one line naming the database without its password or a token, exit 1', async () => {
    // The run's PostgreSQL and a database it holds: only the password is wrong.
    const url = new URL(inject('postgresUrl'));
    url.password = 'not-the-password-42';
    const tokens = { PASSPORT_ADMIN_TOKEN: 'admin-token-for-the-test-000', PASSPORT_WRITER_TOKEN: 'writer-token-for-the-test-000' };
    const run = await npmStart({ DATABASE_URL: url.toString(), PASSPORT_DATA_DIR: join(folder, 'wrong-password'), ...tokens });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([expect.stringMatching(/^Cannot start: the database postgres(ql)?:\/\/passport:\*\*\*@127\.0\.0\.1:\d+\/\S+ refused the user name or password/)]);
    for (const secret of ['not-the-password-42', ...Object.values(tokens)]) expect(run.stdout + run.stderr).not.toContain(secret);
  });

  // One start against a port where nothing listens serves the next two tests: it configures no tokens, so it also makes them.
  const lostTokens = { dataDir: '', port: 0, run: undefined as Promise<Run> | undefined };
  const unreachableStart = () => {
    lostTokens.run ??= (async () => {
      lostTokens.dataDir = join(folder, 'lost-tokens');
      lostTokens.port = await freePort();
      return npmStart({ DATABASE_URL: `postgresql://someone:secret@127.0.0.1:${lostTokens.port}/passport`, PASSPORT_DATA_DIR: lostTokens.dataDir });
    })();
    return lostTokens.run;
  };

  it('with nothing listening at the database address: one line, exit 1', async () => {
    const run = await unreachableStart();
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([`Cannot start: the database postgresql://someone:***@127.0.0.1:${lostTokens.port}/passport refused the connection: nothing listens on that host and port.`]);
  });

  it('that fails after making tokens has shown them already, in a file of mode 0600 since its output is no terminal; npm run tokens -- rotate issues new ones', async () => {
    const run = await unreachableStart();
    const { dataDir } = lostTokens;
    expect(run.code).toBe(1);
    // Its output may be a log shipper's: the tokens are not in it, only where they are.
    const file = join(dataDir, 'new-tokens.txt');
    expect(run.stdout).toContain(`they are in ${file} (mode 0600)`);
    const shown = shownTokens(readFileSync(file, 'utf8'));
    for (const token of Object.values(shown)) expect(run.stdout + run.stderr).not.toContain(token);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(join(dataDir, 'tokens.json'), 'utf8')) as { role: string; sha256: string }[];
    expect(stored.map(({ role, sha256 }) => [role, sha256]).sort()).toEqual(
      Object.entries(shown)
        .map(([role, token]) => [role, hashToken(token)])
        .sort(),
    );

    const rotate = spawn(process.execPath, ['bin/run.mjs', 'bin/tokens.ts', 'rotate'], { env: newcomerEnv({ PASSPORT_DATA_DIR: dataDir }), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    rotate.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    expect(await new Promise((resolve) => rotate.once('exit', resolve))).toBe(0);
    const rotated = shownTokens(output);
    expect(rotated.admin).not.toBe(shown.admin);
    const restored = JSON.parse(readFileSync(join(dataDir, 'tokens.json'), 'utf8')) as { role: string; sha256: string }[];
    expect(restored.find((entry) => entry.role === 'admin')?.sha256).toBe(hashToken(rotated.admin!));
  });

  it('on a terminal prints the tokens it makes, and writes no file of them', async () => {
    const dataDir = join(folder, 'on-a-terminal');
    const port = await freePort();
    // script(1) gives the start a pseudo-terminal for its output, as a person's shell does.
    const run = await new Promise<Run>((resolve) => {
      execFile(
        'script',
        ['-qec', `${process.execPath} bin/run.mjs bin/start.ts`, '/dev/null'],
        { env: newcomerEnv({ ...LOOPBACK_PORTS_AT_LISTEN, DATABASE_URL: `postgresql://someone:secret@127.0.0.1:${port}/passport`, PASSPORT_DATA_DIR: dataDir }) },
        (error, stdout, stderr) => resolve({ code: error ? ((error.code as number | undefined) ?? null) : 0, stdout, stderr }),
      );
    });
    expect(run.code).toBe(1);
    const shown = shownTokens(run.stdout.replaceAll('\r', ''));
    const stored = JSON.parse(readFileSync(join(dataDir, 'tokens.json'), 'utf8')) as { role: string; sha256: string }[];
    expect(stored.find((entry) => entry.role === 'writer')?.sha256).toBe(hashToken(shown.writer!));
    expect(existsSync(join(dataDir, 'new-tokens.txt'))).toBe(false);
  });

  // CI runs as root, as do many servers and containers, often with the project in /root (0700).
  describe.runIf(process.getuid?.() === 0)('as root, with the project cloned into a 0700 home', () => {
    let home: string;
    let project: string;
    const placed = '/var/lib/passport-platform';
    let before: string[] | undefined;
    beforeAll(async () => {
      home = join(folder, 'root-home');
      await mkdir(home);
      await chmod(home, 0o700);
      project = join(home, 'project');
      // The project as a clone plus `npm ci` leaves it (hard links: the same files, reached only through the closed home).
      await linkTree(process.cwd(), project, NOT_IN_A_CLONE);
      before = await readdir(placed).catch(() => undefined);
    });
    // What these starts placed for the postgres user is theirs to remove: the clusters of data folders in
    // this file's folder, and a copy of the binaries (only this file's project closes them off). What
    // other installations, and the files running beside this one as root, placed there is left.
    afterAll(async () => {
      const ours = async (entry: string) =>
        !before?.includes(entry) && (entry.startsWith('binaries-') || (await readFile(join(placed, entry, 'data-folder'), 'utf8').catch(() => '')).startsWith(`${folder}/`));
      for (const entry of await readdir(placed).catch(() => [])) if (await ours(entry)) await removeTree(join(placed, entry));
      if (!before && (await readdir(placed).catch(() => [''])).length === 0) await removeTree(placed);
    });

    const runningOn = (stdout: string) => ({
      trust: /^ {2}trust REST +(\S+)/m.exec(stdout)![1]!,
      cluster: /^ {2}Database +embedded PostgreSQL in (\S+)$/m.exec(stdout)![1]!,
    });
    const node = { id: 'root-home-authority', kind: 'authority' };
    // The trust graph is the platform admin's to write.
    const postNode = (trust: string, admin: string) =>
      fetch(`${trust}/nodes`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify(node) });
    /** PostgreSQL processes still running on that cluster. */
    const postgresOn = (cluster: string) => {
      try {
        return execFileSync('pgrep', ['-f', '--', `-D ${cluster}`], { encoding: 'utf8' }).trim();
      } catch {
        return '';
      }
    };

    it('npm start runs: cluster and binaries placed where the postgres user reaches them, health 200, a write with the printed token, Ctrl-C stops PostgreSQL too', async () => {
      let seen: { status: number; created?: number; cluster?: string } = { status: 0 };
      const run = await npmStart({ EMBEDDED_PG_PORT: String(await freePort()) }, 'Press Ctrl-C to stop.', {
        cwd: project,
        whileRunning: async (stdout) => {
          const { trust, cluster } = runningOn(stdout);
          const admin = shownTokens(readFileSync(join(project, '.data', 'new-tokens.txt'), 'utf8')).admin!;
          seen = { status: (await fetch(`${trust}/healthz`)).status, created: (await postNode(trust, admin)).status, cluster };
        },
      });
      expect(run.stderr).toBe('');
      expect(run.code, run.stdout).toBe(0);
      expect(seen).toEqual({ status: 200, created: 201, cluster: expect.stringMatching(new RegExp(`^${placed}/cluster-[0-9a-f]{16}/postgres$`)) });
      // The cluster is the postgres user's, in a root-owned folder that says whose it is; tokens and the key stay in the project.
      expect((await stat(join(seen.cluster!, 'PG_VERSION'))).uid).toBe(Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })));
      expect(readFileSync(join(seen.cluster!, '..', 'data-folder'), 'utf8')).toBe(`${join(project, '.data')}\n`);
      expect(existsSync(join(project, '.data', 'tokens.json'))).toBe(true);
      expect(existsSync(join(project, '.data', 'postgres'))).toBe(false);
      expect(postgresOn(seen.cluster!)).toBe('');
    });

    it('the next npm start reuses the same cluster: what was written is still there', async () => {
      let seen: { again?: number; cluster?: string; nodes?: string[] } = {};
      const admin = 'admin-token-for-the-root-test';
      // Its own admin token (configured, so the first run's printed one is not needed here).
      const run = await npmStart({ EMBEDDED_PG_PORT: String(await freePort()), PASSPORT_ADMIN_TOKEN: admin }, 'Press Ctrl-C to stop.', {
        cwd: project,
        whileRunning: async (stdout) => {
          const { trust, cluster } = runningOn(stdout);
          const graph = (await (await fetch(`${trust}/graph`)).json()) as { nodes: { id: string }[] };
          seen = { cluster, nodes: graph.nodes.map((found) => found.id), again: (await postNode(trust, admin)).status };
        },
      });
      expect(run.stderr).toBe('');
      expect(run.code, run.stdout).toBe(0);
      expect(seen.nodes).toContain(node.id);
      expect(seen.again).toBe(200);
      expect(seen.cluster).toMatch(new RegExp(`^${placed}/cluster-[0-9a-f]{16}/postgres$`));
      expect(postgresOn(seen.cluster!)).toBe('');
    });

    it('where nothing can be placed for the postgres user either: one sentence saying what to do, exit 1, nothing made', async () => {
      const closed = join(folder, 'closed-0700');
      await mkdir(closed);
      await chmod(closed, 0o700);
      const dataDir = join(home, 'data');
      const run = await npmStart({ PASSPORT_DATA_DIR: dataDir, PASSPORT_ROOT_POSTGRES_DIR: join(closed, 'place'), EMBEDDED_PG_PORT: String(await freePort()) }, undefined, { cwd: project });
      expect(run.code).toBe(1);
      expect(lines(run.stderr)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^As root, the embedded PostgreSQL runs as the postgres user, who cannot enter ${home} \\(closed to other users\\) to reach its binaries .* and ${closed}/place, where they would be placed for it, cannot be made or entered: run npm start as an ordinary user`,
          ),
        ),
      ]);
      expect(existsSync(dataDir)).toBe(false);
      expect(await readdir(closed)).toEqual([]);
    });
  });

  // As an ordinary user PostgreSQL runs as that user; root makes one (nobody) to try it.
  it.runIf(process.getuid?.() === 0)('as an ordinary user (nobody): runs on its embedded PostgreSQL, which it owns, and stops on Ctrl-C', async () => {
    const uid = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }));
    // The test's own folder is 0700 (mkdtemp): opened so that nobody can reach its home in it.
    await chmod(folder, 0o755);
    const home = join(folder, 'nobody-home');
    await mkdir(home);
    await chown(home, uid, gid);
    await chmod(home, 0o700);
    const dataDir = join(home, 'data');
    const run = await npmStart({ HOME: home, PASSPORT_DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(await freePort()) }, 'Press Ctrl-C to stop.', { as: { uid, gid } });
    expect(run.stdout, run.stderr).toContain('Passport services are running.');
    expect(run.code).toBe(0);
    expect((await stat(join(dataDir, 'postgres', 'PG_VERSION'))).uid).toBe(uid);
  });
});
