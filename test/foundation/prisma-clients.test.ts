// The Prisma clients are committed (a deployment installs no Prisma CLI); this fails when a
// schema.prisma changed without `npm run db:generate`, or when the committed files were edited.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';
import { DATABASE_SCHEMAS } from '../../lib/config/services.js';
import { scratchFolder } from '../support/scratch-folder.js';

const root = join(import.meta.dirname, '..', '..');
const scratch = scratchFolder('prisma-clients-');

function filesUnder(folder: string): Map<string, string> {
  const files = readdirSync(folder, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
  return new Map(files.map((entry) => [relative(folder, join(entry.parentPath, entry.name)), readFileSync(join(entry.parentPath, entry.name), 'utf8')]));
}

test('the committed clients are what prisma generate makes of the schemas', { timeout: 180_000 }, async () => {
  // Not spawnSync: a generate of over a minute on a loaded machine would block the worker past vitest's RPC timeout (60 s), an error of its own.
  const run = await promisify(execFile)(process.execPath, [join(root, 'prisma', 'tools', 'generate.mjs'), scratch], { encoding: 'utf8' }).then(
    ({ stderr }) => ({ status: 0, stderr }),
    (error: { code: number | string; stderr: string }) => ({ status: error.code, stderr: error.stderr }),
  );
  expect(run.status, run.stderr).toBe(0);
  for (const service of DATABASE_SCHEMAS) {
    const fresh = filesUnder(join(scratch, service, 'generated'));
    const committed = filesUnder(join(root, 'prisma', service, 'generated'));
    expect([...committed.keys()].sort(), `${service}: files (run npm run db:generate)`).toEqual([...fresh.keys()].sort());
    for (const [path, text] of fresh) expect(committed.get(path), `prisma/${service}/generated/${path} (run npm run db:generate)`).toBe(text);
  }
});
