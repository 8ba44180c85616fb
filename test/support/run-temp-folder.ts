/**
 * Each test run gets a temp folder of its own: the system temp folder (os.tmpdir(), TMPDIR) of the
 * vitest process, its workers and their child processes is a new folder in it. Every file removes what
 * it makes there when it ends (test/support/scratch-folder.ts), so at the run's end the folder should
 * be empty: what is still in it is named and fails the run, then the folder goes. A failing run is what
 * makes a forgotten cleanup get fixed (a printed list scrolls by unread); one test run used to leave
 * some 50 MB in /tmp. Registered for both layers (vitest.config.ts); a process running both shares one folder.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What may still be there at the run's end: the worker's shared Chromium (test/support/browser.ts)
 * goes with the worker, after the global teardown; playwright removes these folders when it closes it.
 */
const LIVE_BROWSER = /^(playwright_chromiumdev_profile|playwright-artifacts)-/;

/**
 * Compile caches kept in the temp folder: tsx's (child processes run through tsx) and jiti's (the
 * Prisma CLI loading its config). They stay the system's, links in the run's folder, warm across runs.
 */
const CACHES = [`tsx-${process.getuid?.() ?? 0}`, 'jiti'];

const RUN = Symbol.for('passport.test.run-temp-folder');
interface RunTempFolder {
  folder: string;
  previous: string | undefined;
  users: number;
}
const shared = globalThis as { [RUN]?: RunTempFolder };

export default function setup() {
  if (shared[RUN]) {
    shared[RUN].users++;
    return teardown;
  }
  const system = tmpdir();
  const folder = mkdtempSync(join(system, 'passport-test-run-'));
  // Open to enter as /tmp is: as root, PostgreSQL runs as the postgres user, who must reach the data folders in it.
  chmodSync(folder, 0o711);
  for (const cache of CACHES) {
    mkdirSync(join(system, cache), { recursive: true });
    symlinkSync(join(system, cache), join(folder, cache));
  }
  shared[RUN] = { folder, previous: process.env.TMPDIR, users: 1 };
  process.env.TMPDIR = folder;
  return teardown;
}

function teardown() {
  const run = shared[RUN];
  if (!run || --run.users > 0) return;
  delete shared[RUN];
  if (run.previous === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = run.previous;
  const left = readdirSync(run.folder).filter((name) => !CACHES.includes(name) && !LIVE_BROWSER.test(name));
  // After the workers (and their browsers) have gone.
  process.once('exit', () => rmSync(run.folder, { recursive: true, force: true }));
  if (left.length > 0) {
    // Said and counted as a failure, not thrown: a throw here would skip the rest of vitest's closing (its workers).
    console.error(`\nThe tests left ${left.join(', ')} in the temp folder: remove what a test file makes there when it ends (test/support/scratch-folder.ts).`);
    process.exitCode = 1;
  }
}
