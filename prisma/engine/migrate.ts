/** Applies a service's committed Prisma migrations, as `prisma migrate deploy` does, in process. */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServiceName } from '../../lib/config/services.js';
import { openSchemaEngine } from './wasm-engine.js';

const prismaDirectory = join(dirname(fileURLToPath(import.meta.url)), '..');

export function migrationsDirectory(service: ServiceName): string {
  return join(prismaDirectory, service, 'migrations');
}

/** Loads a migrations folder in the shape the schema engine takes (the CLI's own shape). */
export async function loadMigrations(baseDir: string) {
  const lockfile = join(baseDir, 'migration_lock.toml');
  const entries = existsSync(baseDir) ? await readdir(baseDir, { withFileTypes: true }) : [];
  const directories = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
  return {
    baseDir,
    lockfile: { path: 'migration_lock.toml', content: existsSync(lockfile) ? await readFile(lockfile, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: await Promise.all(
      directories.map(async (name) => ({
        path: name,
        migrationFile: { path: 'migration.sql', content: { tag: 'ok' as const, value: await readFile(join(baseDir, name, 'migration.sql'), 'utf8') } },
      })),
    ),
  };
}

/** Applies every migration not yet applied to the service's schema. Returns the names applied. */
export async function deployMigrations(service: ServiceName, url: string): Promise<string[]> {
  const { engine, close } = await openSchemaEngine({ url });
  try {
    const migrationsList = await loadMigrations(migrationsDirectory(service));
    const output = await engine.applyMigrations({ migrationsList, filters: { externalTables: [], externalEnums: [] } });
    return output.appliedMigrationNames;
  } finally {
    await close();
  }
}
