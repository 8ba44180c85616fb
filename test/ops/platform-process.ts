/**
 * `npm start` as a child process (node bin/run.mjs bin/start.ts) on a test database of its own,
 * with every line it writes kept: the tests of traces and logs see the platform as an operator does.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '../support/free-port.js';
import { LOOPBACK_PORTS_AT_LISTEN } from '../support/stack.js';
import { newcomerEnv } from '../support/environment.js';

export interface PlatformProcess {
  /** The facade's origin, e.g. http://127.0.0.1:40123 (services under /trust, /issuer, …). */
  origin: string;
  /** The temporary folder holding PASSPORT_DATA_DIR (`data`) and the key-encryption key beside it (`data.kek`). */
  dataDir: string;
  /** Every line written so far, stdout and stderr. */
  lines: { stream: 'stdout' | 'stderr'; text: string }[];
  /** SIGTERM, then the exit code once the process has ended. */
  stop(): Promise<number | null>;
}

/** A whole platform starting in a child process (loading the platform, six servers) on a busy 2-core machine. */
export const START_TIMEOUT_MS = 240_000;

const ROOT = join(import.meta.dirname, '..', '..');

export async function startPlatformProcess(env: Record<string, string>): Promise<PlatformProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'passport-ops-'));
  const facadePort = await freePort();
  const child = spawn(process.execPath, ['bin/run.mjs', 'bin/start.ts'], {
    cwd: ROOT,
    env: newcomerEnv({
      HOME: process.env.HOME ?? dataDir,
      ...LOOPBACK_PORTS_AT_LISTEN,
      FACADE_PORT: String(facadePort),
      PASSPORT_DATA_DIR: join(dataDir, 'data'),
      LOG_FORMAT: 'json',
      ...env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: PlatformProcess['lines'] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    for (const stream of ['stdout', 'stderr'] as const) {
      createInterface({ input: child[stream] }).on('line', (text) => {
        lines.push({ stream, text });
        if (text.includes('Press Ctrl-C to stop.')) resolve();
      });
    }
    void exited.then((code) => reject(Object.assign(new Error(`the platform exited (${code}) before it was ready:\n${lines.map((line) => line.text).join('\n')}`), { lines })));
  });
  await ready.catch(async (error: unknown) => {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  });
  return {
    origin: `http://127.0.0.1:${facadePort}`,
    dataDir,
    lines,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      await rm(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}
