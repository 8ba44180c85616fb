/**
 * `npm start` as a newcomer meets it: a data folder that does not exist yet, a wrong database
 * password, a database that is not there, a first start that fails after making tokens. Each run is
 * the real command in a process of its own; the test reads what the person reads: the exit code,
 * the lines printed, the files left behind.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../lib/auth/tokens.js';
import { createTestDatabase } from '../support/database.js';
import { freePort } from '../support/free-port.js';

const PORTS = { HOST: '127.0.0.1', FACADE_PORT: '0', GATEWAY_PORT: '0', TRUST_SUBGRAPH_PORT: '0', REGISTRY_SUBGRAPH_PORT: '0', ISSUER_SUBGRAPH_PORT: '0', ARCHIVE_SUBGRAPH_PORT: '0' };
let folder: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs bin/start.ts until it exits, or until `until` appears on its output (then it is stopped with Ctrl-C's signal). */
function npmStart(env: Record<string, string>, until?: string, as?: { uid: number; gid: number }): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts'], { env: { PATH: process.env.PATH!, ...PORTS, ...env }, stdio: ['ignore', 'pipe', 'pipe'], ...as });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (until && stdout.includes(until)) child.kill('SIGINT');
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A start that hangs is a failure too: it is ended after 60 s and reported with what it printed.
  const hung = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => child.once('exit', (code) => {
      clearTimeout(hung);
      resolve({ code, stdout, stderr });
    }),
  );
}

const lines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'first-contact-'));
});
afterAll(() => rm(folder, { recursive: true, force: true }));

describe('npm start', () => {
  it('with DATABASE_URL, configured tokens and a data folder that does not exist yet: creates it and runs', async () => {
    const dataDir = join(folder, 'not', 'there', 'yet');
    const run = await npmStart(
      { DATABASE_URL: await createTestDatabase(), PASSPORT_DATA_DIR: dataDir, PASSPORT_ADMIN_TOKEN: 'admin-token-for-the-test-000', PASSPORT_WRITER_TOKEN: 'writer-token-for-the-test-000' },
      'Press Ctrl-C to stop.',
    );
    expect(run.stdout).toContain('Passport services are running.');
    expect(run.code).toBe(0);
    expect(existsSync(join(dataDir, 'supergraph.graphql'))).toBe(true);
  });

  it('with a wrong database password: one line naming the database without its password, exit 1', async () => {
    const url = new URL(await createTestDatabase());
    url.password = 'not-the-password-42';
    const run = await npmStart({ DATABASE_URL: url.toString(), PASSPORT_DATA_DIR: join(folder, 'wrong-password'), PASSPORT_ADMIN_TOKEN: 'admin-token-for-the-test-000' });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([expect.stringMatching(/^Cannot start: the database postgres(ql)?:\/\/passport:\*\*\*@127\.0\.0\.1:\d+\/\S+ refused the user name or password/)]);
    expect(run.stdout + run.stderr).not.toContain('not-the-password-42');
  });

  it('with nothing listening at the database address: one line, exit 1', async () => {
    const port = await freePort();
    const run = await npmStart({ DATABASE_URL: `postgresql://someone:secret@127.0.0.1:${port}/passport`, PASSPORT_DATA_DIR: join(folder, 'refused'), PASSPORT_ADMIN_TOKEN: 'admin-token-for-the-test-000' });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([`Cannot start: the database postgresql://someone:***@127.0.0.1:${port}/passport refused the connection: nothing listens on that host and port.`]);
  });

  it('that fails after making tokens has shown them already; npm run tokens -- rotate issues new ones', async () => {
    const dataDir = join(folder, 'lost-tokens');
    const port = await freePort();
    const run = await npmStart({ DATABASE_URL: `postgresql://someone:secret@127.0.0.1:${port}/passport`, PASSPORT_DATA_DIR: dataDir });
    expect(run.code).toBe(1);
    const shown = Object.fromEntries([...run.stdout.matchAll(/^ {2}(admin|writer) +(\S+)$/gm)].map((match) => [match[1]!, match[2]!]));
    const stored = JSON.parse(readFileSync(join(dataDir, 'tokens.json'), 'utf8')) as { role: string; sha256: string }[];
    expect(stored.map(({ role, sha256 }) => [role, sha256]).sort()).toEqual(Object.entries(shown).map(([role, token]) => [role, hashToken(token)]).sort());

    const rotate = spawn(process.execPath, ['--import', 'tsx', 'bin/tokens.ts', 'rotate'], { env: { PATH: process.env.PATH!, PASSPORT_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    rotate.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    expect(await new Promise((resolve) => rotate.once('exit', resolve))).toBe(0);
    const rotated = Object.fromEntries([...output.matchAll(/^ {2}(admin|writer) +(\S+)$/gm)].map((match) => [match[1], match[2]]));
    expect(rotated.admin).not.toBe(shown.admin);
    const restored = JSON.parse(readFileSync(join(dataDir, 'tokens.json'), 'utf8')) as { role: string; sha256: string }[];
    expect(restored.find((entry) => entry.role === 'admin')?.sha256).toBe(hashToken(rotated.admin!));
  });

  // CI runs as root, as do many servers and containers; an ordinary user's PostgreSQL runs as that user.
  it.runIf(process.getuid?.() === 0)('as root with the data folder under a 0700 folder: one sentence saying what to do, exit 1, nothing made', async () => {
    const home = join(folder, 'home-0700');
    await mkdir(home);
    await chmod(home, 0o700);
    const run = await npmStart({ PASSPORT_DATA_DIR: join(home, 'data'), EMBEDDED_PG_PORT: String(await freePort()) });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([
      expect.stringMatching(new RegExp(`^As root, the embedded PostgreSQL runs as the postgres user, who cannot enter ${home} \\(closed to other users\\) to reach the data folder .* run npm start as an ordinary user`)),
    ]);
    expect(await readdir(home)).toEqual([]);
    expect(existsSync(`${join(home, 'data')}.kek`)).toBe(false);
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
    const run = await npmStart({ HOME: home, PASSPORT_DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(await freePort()) }, 'Press Ctrl-C to stop.', { uid, gid });
    expect(run.stdout, run.stderr).toContain('Passport services are running.');
    expect(run.code).toBe(0);
    expect((await stat(join(dataDir, 'postgres', 'PG_VERSION'))).uid).toBe(uid);
  });
});

