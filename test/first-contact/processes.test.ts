/**
 * The platform's processes as containers and terminals run them. A container's runtime sends SIGTERM
 * to its first process alone, so each command docs/OPERATIONS.md gives a container is run exactly as
 * written and sent SIGTERM, and nothing else; `npm start` is sent SIGTERM to npm alone (a container
 * whose first process is npm) and Ctrl-C (SIGINT to its process group). Each time the platform must
 * stop as documented: exit 0, its ports closed, its embedded PostgreSQL stopped. Between, the
 * commands an operator runs while the platform is stopped (keys, db:migrate) start its PostgreSQL
 * themselves. As root, the start Ctrl-C stops is one on the data folder deleted and made anew at the
 * same path, as a project cloned again is (one start for both).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SERVICES } from '../../lib/config/services.js';
import { lockingPostmaster } from '../../lib/db/embedded-postgres.js';
import { KeyEncryptionKeys, writeKekFile } from '../../lib/keys/kek.js';
import { createTestDatabase } from '../support/database.js';
import { freePort } from '../support/free-port.js';
import { LOOPBACK_PORTS_AT_LISTEN } from '../support/stack.js';
import { newcomerEnv } from '../support/environment.js';

const ROOT = join(import.meta.dirname, '..', '..');
const asRoot = process.getuid?.() === 0;

/** Every `CMD [...]` and `command: [...]` of docs/OPERATIONS.md, as the argument vectors they are. */
const DOCUMENTED = [...readFileSync(join(ROOT, 'docs', 'OPERATIONS.md'), 'utf8').matchAll(/(?:^CMD|command:)\s*(\[[^\]\n]*\])/gm)].map((match) => JSON.parse(match[1]!) as string[]);
const entryOf = (command: string[]) => command.find((arg) => /^bin\/\w+\.ts$/.test(arg));

let folder: string;
/** The platform's data folder, below a folder closed to others: as root, its cluster is placed in `placed`. */
let dataDir: string;
let placed: string;
let embeddedPort: string;
/** Process groups started by the current test, ended with whatever is left in them after it. */
const groups: number[] = [];
/** The clusters the starts named, the last one last. */
const clusters = new Set<string>();

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'processes-'));
  // Open to enter (mkdtemp makes it 0700), as root's PASSPORT_ROOT_POSTGRES_DIR must be; the data folder's parent stays closed.
  await chmod(folder, 0o755);
  await mkdir(join(folder, 'closed'), { mode: 0o700 });
  dataDir = join(folder, 'closed', 'data');
  placed = join(folder, 'placed');
  embeddedPort = String(await freePort());
});

/**
 * What a failing test left running (the platform orphaned by its npm, its PostgreSQL) is ended, so that
 * the next test meets a stopped platform as it would otherwise.
 */
afterEach(async () => {
  for (const group of groups.splice(0)) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // Ended already.
    }
  }
  for (const cluster of clusters) {
    const pid = await lockingPostmaster(cluster);
    if (!pid) continue;
    process.kill(pid, 'SIGQUIT');
    await expect.poll(() => lockingPostmaster(cluster), { timeout: 10_000 }).toBeUndefined();
  }
});
afterAll(() => rm(folder, { recursive: true, force: true }));

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts a command in a process group of its own (as a terminal or a container does), with a newcomer's environment. */
function launch(command: string, args: string[], env: Record<string, string> = {}): Running {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: newcomerEnv({ HOME: process.env.HOME ?? folder, PASSPORT_ROOT_POSTGRES_DIR: placed, ...env }),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  groups.push(child.pid!);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, output: () => output, exited };
}

/** Resolves once `text` is in the output; fails with the output when the process ends first or takes too long. */
async function until(running: Running, text: string, timeoutMs = 150_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (!running.output().includes(text)) {
    if (running.child.exitCode !== null || running.child.signalCode !== null || Date.now() > deadline) throw new Error(`"${text}" never came:\n${running.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return running.output();
}

/** Waits for the end of a process that was signalled; one still running after `timeoutMs` is killed, with its group. */
async function ended(running: Running, timeoutMs = 30_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const late = setTimeout(() => process.kill(-running.child.pid!, 'SIGKILL'), timeoutMs);
  try {
    return await running.exited;
  } finally {
    clearTimeout(late);
  }
}

/** What the start prints of where it listens, and its cluster. */
function startedPlatform(stdout: string): { origins: string[]; cluster: string } {
  const origin = (label: string) => new URL(new RegExp(`^ {2}${label} +(\\S+)`, 'm').exec(stdout)![1]!).origin;
  const cluster = /^ {2}Database +embedded PostgreSQL in (\S+)$/m.exec(stdout)![1]!;
  clusters.add(cluster);
  return { origins: [origin('GraphQL \\(gateway\\)'), origin('trust REST'), origin('Metrics')], cluster };
}

const connection = (origin: string) =>
  fetch(`${origin}/livez`).then(
    () => 'accepted',
    (error: Error & { cause?: { code?: string } }) => error.cause?.code ?? String(error),
  );

/** Whether any process is left in the group (orphans keep their group when their parent goes). */
function groupGone(group: number): boolean {
  try {
    process.kill(-group, 0);
    return false;
  } catch {
    return true;
  }
}

/** The platform after it was signalled: exited as documented, nothing of it left listening or running. */
async function expectStoppedCleanly(running: Running, platform: { origins: string[]; cluster: string }): Promise<void> {
  const exit = await ended(running);
  expect(exit, running.output()).toEqual({ code: 0, signal: null });
  expect(groupGone(running.child.pid!), 'a process of the platform is left').toBe(true);
  for (const origin of platform.origins) expect(await connection(origin), origin).toBe('ECONNREFUSED');
  expect(await lockingPostmaster(platform.cluster), 'its PostgreSQL still runs').toBeUndefined();
}

const startEnv = () => ({ ...LOOPBACK_PORTS_AT_LISTEN, PASSPORT_DATA_DIR: dataDir, EMBEDDED_PG_PORT: embeddedPort });

// Each test starts the whole platform once (10–60 s on a busy 2-core machine), one after another on one data folder.
describe('the platform under the signals containers and terminals send', { timeout: 200_000 }, () => {
  it('docs/OPERATIONS.md gives containers node itself to run, for the whole platform and for a part', () => {
    expect(DOCUMENTED.map(entryOf)).toEqual(expect.arrayContaining(['bin/start.ts', 'bin/subgraph.ts']));
    // npm (or a shell) as a container's first process gets SIGTERM alone.
    for (const command of DOCUMENTED) expect(command.slice(0, 2), command.join(' ')).toEqual(['node', 'bin/run.mjs']);
  });

  it('the documented whole-platform command, SIGTERM to it alone: exits 0, its ports closed, its PostgreSQL stopped', async () => {
    const command = DOCUMENTED.find((candidate) => entryOf(candidate) === 'bin/start.ts')!;
    const running = launch(command[0]!, command.slice(1), startEnv());
    const platform = startedPlatform(await until(running, 'Press Ctrl-C to stop.'));
    if (asRoot) expect(platform.cluster.startsWith(`${placed}/`)).toBe(true);
    expect(await connection(platform.origins[0]!)).toBe('accepted');
    running.child.kill('SIGTERM');
    await expectStoppedCleanly(running, platform);
  });

  it('with the platform stopped, npm run keys -- status and npm run db:migrate start its PostgreSQL themselves, answer, and stop it', async () => {
    const npmRun = (args: string[]) =>
      promisify(execFile)('npm', ['run', ...args], { cwd: ROOT, env: newcomerEnv({ HOME: process.env.HOME ?? folder, PASSPORT_DATA_DIR: dataDir, PASSPORT_ROOT_POSTGRES_DIR: placed }) });
    const keys = await npmRun(['keys', '--', 'status']);
    const listed = keys.stdout.split('\n').filter((line) => /^(trust|registry|issuer|archive) /.test(line));
    for (const service of SERVICES) expect(listed, keys.stdout).toContainEqual(expect.stringMatching(new RegExp(`^${service} +service +current +\\S+ +sealed under `)));
    expect(await lockingPostmaster([...clusters].at(-1)!)).toBeUndefined();
    const migrate = await npmRun(['db:migrate']);
    for (const service of SERVICES) expect(migrate.stdout).toContain(`${service}: up to date`);
    expect(await lockingPostmaster([...clusters].at(-1)!)).toBeUndefined();
  });

  it('npm start, SIGTERM to npm alone (a container whose first process is npm): npm and the platform exit 0, ports closed, PostgreSQL stopped', async () => {
    const running = launch('npm', ['start'], startEnv());
    const platform = startedPlatform(await until(running, 'Press Ctrl-C to stop.'));
    process.kill(running.child.pid!, 'SIGTERM');
    await expectStoppedCleanly(running, platform);
  });

  /** Ctrl-C, as a terminal sends it: SIGINT to the process group. */
  const ctrlC = async (running: Running, platform: { origins: string[]; cluster: string }) => {
    process.kill(-running.child.pid!, 'SIGINT');
    await expectStoppedCleanly(running, platform);
  };

  // As root, the start below on a data folder made anew is the one Ctrl-C stops.
  it.skipIf(asRoot)('npm start, Ctrl-C (SIGINT to its process group): exits 0 as documented, PostgreSQL stopped', async () => {
    const running = launch('npm', ['start'], startEnv());
    await ctrlC(running, startedPlatform(await until(running, 'Press Ctrl-C to stop.')));
  });

  // Only root's cluster lies outside the data folder (README, "as root"), where a deleted data folder leaves it behind.
  it.runIf(asRoot)(
    'as root (skipped as another user, whose cluster is in the data folder and goes with it): the data folder deleted and made anew at the same path, npm start runs on a new cluster and sets the old one aside, saying where; Ctrl-C (SIGINT to its process group): exits 0 as documented, PostgreSQL stopped',
    async () => {
      const before = [...clusters].at(-1)!;
      await rm(dataDir, { recursive: true, force: true });
      const running = launch('npm', ['start'], startEnv());
      const stdout = await until(running, 'Press Ctrl-C to stop.');
      const platform = startedPlatform(stdout);
      const aside = new RegExp(
        `^The embedded cluster found in ${before} was not this data folder's .*: it was moved to (${before}\\.orphaned-\\d{8}T\\d{6}Z) and a new cluster made\\. Remove that folder once its data is not needed\\.$`,
        'm',
      ).exec(stdout);
      expect(aside, stdout).not.toBeNull();
      expect(platform.cluster).toBe(before);
      // The old cluster whole, beside the new one; nothing deleted.
      expect(existsSync(join(aside![1]!, 'PG_VERSION'))).toBe(true);
      expect(dirname(aside![1]!)).toBe(dirname(before));
      expect(await (await fetch(`${platform.origins[1]}/trust/healthz`)).json()).toMatchObject({ status: 'ok' });
      await ctrlC(running, platform);
    },
  );

  it('the documented command of a part (a subgraph), SIGTERM to it alone: exits 0, its port closed', async () => {
    const command = DOCUMENTED.find((candidate) => entryOf(candidate) === 'bin/subgraph.ts')!;
    const service = command[command.indexOf('bin/subgraph.ts') + 1]!;
    const port = await freePort();
    const env = {
      HOST: '127.0.0.1',
      DATABASE_URL: await createTestDatabase(),
      PASSPORT_DATA_DIR: join(folder, 'part'),
      PASSPORT_KEK_FILE: join(folder, 'part.kek'),
      PASSPORT_ADMIN_TOKEN: 'processes-admin-token-0123456789',
      PASSPORT_WRITER_TOKEN: 'processes-writer-token-0123456789',
      [`${service.toUpperCase()}_SUBGRAPH_PORT`]: String(port),
      METRICS_PORT: '0',
    };
    // Its key-encryption key written here: the command that makes one is sealed-keys' and split-processes' subject.
    await writeKekFile(env.PASSPORT_KEK_FILE, KeyEncryptionKeys.generate());
    const running = launch(command[0]!, command.slice(1), env);
    await until(running, 'metrics: http');
    const origin = `http://127.0.0.1:${port}`;
    expect(await connection(origin)).toBe('accepted');
    running.child.kill('SIGTERM');
    const exit = await ended(running);
    expect(exit, running.output()).toEqual({ code: 0, signal: null });
    expect(groupGone(running.child.pid!)).toBe(true);
    expect(await connection(origin)).toBe('ECONNREFUSED');
  });
});
