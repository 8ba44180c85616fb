/**
 * The benchmark-only tools (autocannon, Hive Gateway: bench/tools/package.json), installed from their
 * lockfile on first use by whatever needs them: a benchmark, or the test that runs Hive Gateway on a
 * machine where only `npm ci && npm test` ran. vitest runs two files at once and `npm ci` empties
 * node_modules first, so one process installs under a lock file while any other waits for it. Run as
 * a command (`npm test` does, beside its static checks: some 900 packages, half a minute and more on a
 * fresh clone, which the Hive Gateway test would otherwise wait out), it installs them unless installed.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const BENCH_TOOLS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'tools');
/** npm writes it once an install is complete. */
const INSTALLED = join(BENCH_TOOLS, 'node_modules', '.package-lock.json');
const LOCK = join(BENCH_TOOLS, '.installing');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function npmCi(): Promise<void> {
  return new Promise((resolve, reject) => {
    const npm = spawn('npm', ['ci', '--no-audit', '--no-fund'], { cwd: BENCH_TOOLS, stdio: ['ignore', 'inherit', 'inherit'] });
    npm.once('error', reject);
    npm.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`npm ci in bench/tools failed (exit ${code ?? signal})`))));
  });
}

/** Installs bench/tools from its lockfile unless installed (`npm run bench:install` does it ahead). */
export async function ensureBenchTools(): Promise<void> {
  while (!existsSync(INSTALLED)) {
    const lock = await open(LOCK, 'wx').catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
      return undefined;
    });
    if (!lock) {
      // Another process installs; its lock is void once it is gone.
      const holder = Number(await readFile(LOCK, 'utf8').catch(() => ''));
      if (holder > 0 && !alive(holder)) await rm(LOCK, { force: true });
      else await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    try {
      await lock.writeFile(String(process.pid));
      await lock.close();
      // Installed between the look above and the lock.
      if (existsSync(INSTALLED)) return;
      console.error('Installing the benchmark tools into bench/tools/node_modules (once) …');
      await npmCi();
    } finally {
      await rm(LOCK, { force: true });
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await ensureBenchTools();
