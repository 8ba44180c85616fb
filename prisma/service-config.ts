import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'prisma/config';
import { baseDatabaseUrl, serviceDatabaseUrl } from '../lib/config/database.js';
import type { SchemaName } from '../lib/config/services.js';

const prismaDirectory = dirname(fileURLToPath(import.meta.url));

/** The Prisma CLI configuration of one service (or the identity store): its schema, migrations and database. */
export function serviceConfig(service: SchemaName) {
  return defineConfig({
    schema: join(prismaDirectory, service, 'schema.prisma'),
    migrations: { path: join(prismaDirectory, service, 'migrations') },
    // `prisma generate` needs no database and runs before any is configured; migrate commands do.
    ...(hasDatabase(service) ? { datasource: { url: serviceDatabaseUrl(service) } } : {}),
  });
}

function hasDatabase(service: SchemaName): boolean {
  return Boolean(process.env[`${service.toUpperCase()}_DATABASE_URL`] ?? baseDatabaseUrl());
}
