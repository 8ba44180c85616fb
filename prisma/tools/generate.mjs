// Generates the four services' Prisma clients after `npm ci`. Prisma's CLI looks for its schema
// engine before any command and downloads it when missing; `generate` never runs it, so the
// documented PRISMA_SCHEMA_ENGINE_BINARY names a stand-in instead and no command reaches Prisma's hosts.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: join(root, 'prisma', 'tools', 'no-schema-engine'),
  CHECKPOINT_DISABLE: '1',
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
};
const cli = join(root, 'node_modules', 'prisma', 'build', 'index.js');

for (const service of ['trust', 'registry', 'issuer', 'archive']) {
  const { status } = spawnSync(process.execPath, [cli, 'generate', '--config', `prisma/${service}/prisma.config.ts`], { cwd: root, env, stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? 1);
}
