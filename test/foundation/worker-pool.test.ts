/**
 * Vitest with this project's configuration (vitest.config.ts: one module graph per worker, the
 * workers' count) ends cleanly whatever worker count it is given: run as a developer would try more
 * workers, `vitest run --maxWorkers=4`, over files that end one after another, so that workers run out
 * of files while others still run theirs. With minWorkers below maxWorkers by two or more (1 and 3, 2
 * and 4), vitest 3.2's pool stopped such a worker twice and vitest exited 1 on "Terminating worker
 * thread" before the files still running had reported (and, in the integration layer, before its
 * global teardown).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { processEnv } from '../support/environment.js';
import { scratchFolder } from '../support/scratch-folder.js';

const ROOT = join(import.meta.dirname, '..', '..');
const FILES = 6;

/** A project of FILES files of one short test each, the nth waiting n tenths of a second, under the project's configuration. */
function fixture(folder: string): string {
  writeFileSync(
    join(folder, 'vitest.config.mjs'),
    `import project from ${JSON.stringify(join(ROOT, 'vitest.config.ts'))};
export default { ...project, test: { ...project.test, projects: undefined, include: ['*.test.mjs'], globals: true, cache: false, sequence: {} } };
`,
  );
  for (let file = 1; file <= FILES; file++) writeFileSync(join(folder, `waits-${file}.test.mjs`), `test('waits ${file}00 ms', () => new Promise((done) => setTimeout(done, ${file * 100})));\n`);
  return folder;
}

describe('the test workers', () => {
  const folder = fixture(scratchFolder('worker-pool-'));

  it('end cleanly with --maxWorkers=4, every file reported', { timeout: 60_000 }, async () => {
    const run = await promisify(execFile)(join(ROOT, 'node_modules', '.bin', 'vitest'), ['run', '--root', folder, '--maxWorkers=4'], {
      cwd: folder,
      env: processEnv({ NO_COLOR: '1', CI: '1' }),
    }).then(
      ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
    );
    expect(run.output).not.toContain('Terminating worker thread');
    expect(run.output).toMatch(new RegExp(`Test Files +${FILES} passed \\(${FILES}\\)`));
    expect(run.code).toBe(0);
  });
});
