#!/usr/bin/env node
// Runs the Prisma CLI with the WebAssembly schema engine standing in for the native binary, and with
// Prisma's update checks off, so no command reaches Prisma's hosts. Usage: as the `prisma` command,
//   npm run prisma -- migrate dev --config prisma/trust/prisma.config.ts
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function runPrisma(args, options = {}) {
  const env = {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: join(root, 'prisma', 'engine', 'schema-engine'),
    CHECKPOINT_DISABLE: '1',
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
  };
  const result = spawnSync(process.execPath, [join(root, 'node_modules', 'prisma', 'build', 'index.js'), ...args], { cwd: root, env, stdio: 'inherit', ...options });
  return result.status ?? 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(runPrisma(process.argv.slice(2)));
