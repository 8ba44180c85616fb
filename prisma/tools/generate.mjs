// `npm run db:generate`: regenerates the four services' and the identity store's Prisma clients (prisma/*/generated, committed,
// so a deployment needs no Prisma CLI). Run it after editing a schema.prisma.
// `node prisma/tools/generate.mjs <folder>` writes them to <folder>/<service>/generated instead, from
// copies of the schemas, which is how test/foundation/prisma-clients.test.ts compares them.
// Prisma's CLI looks for its schema engine before any command and downloads it when missing;
// `generate` never runs it, so the documented PRISMA_SCHEMA_ENGINE_BINARY names a stand-in instead
// and no command reaches Prisma's hosts.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const target = process.argv[2] === undefined ? undefined : resolve(process.argv[2]);
const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: join(root, 'prisma', 'tools', 'no-schema-engine'),
  CHECKPOINT_DISABLE: '1',
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
};
const cli = join(root, 'node_modules', 'prisma', 'build', 'index.js');

/** One service's `prisma generate`, its output kept to be shown whole. */
function generate(service) {
  let args = ['--config', `prisma/${service}/prisma.config.ts`];
  if (target) {
    // The schema's `output = "./generated"` is relative to the schema file, so a copy generates beside itself.
    mkdirSync(join(target, service), { recursive: true });
    copyFileSync(join(root, 'prisma', service, 'schema.prisma'), join(target, service, 'schema.prisma'));
    args = ['--schema', join(service, 'schema.prisma')];
  }
  const child = spawn(process.execPath, [cli, 'generate', ...args], { cwd: target ?? root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = [];
  child.stdout.on('data', (chunk) => output.push([process.stdout, chunk]));
  child.stderr.on('data', (chunk) => output.push([process.stderr, chunk]));
  return new Promise((resolve) => child.once('close', (status) => resolve({ status, output })));
}

// The five side by side (each CLI spends most of its time loading itself), each one's output shown
// whole, in order.
const runs = await Promise.all(['trust', 'registry', 'issuer', 'archive', 'identity'].map(generate));
for (const { output } of runs) for (const [stream, chunk] of output) stream.write(chunk);
const failed = runs.find(({ status }) => status !== 0);
if (failed) process.exit(failed.status ?? 1);
