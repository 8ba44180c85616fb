import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { SchemaName } from './services.js';

/** Where the embedded PostgreSQL keeps its cluster and this installation keeps its local state. */
export function dataDirectory(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.PASSPORT_DATA_DIR ?? '.data');
}

export const DEFAULT_EMBEDDED_PORT = 54329;

/** Connection facts of the embedded cluster, written when it is first initialised. */
export interface EmbeddedCluster {
  port: number;
  user: string;
  password: string;
  database: string;
}

export function embeddedClusterFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(dataDirectory(env), 'postgres.json');
}

export function readEmbeddedCluster(env: NodeJS.ProcessEnv = process.env): EmbeddedCluster | undefined {
  const file = embeddedClusterFile(env);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as EmbeddedCluster) : undefined;
}

export function clusterUrl(cluster: EmbeddedCluster): string {
  return `postgresql://${encodeURIComponent(cluster.user)}:${encodeURIComponent(cluster.password)}@127.0.0.1:${cluster.port}/${cluster.database}`;
}

/** The database URL every service derives its own from: `DATABASE_URL`, else the embedded cluster. */
export function baseDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  const cluster = readEmbeddedCluster(env);
  return cluster ? clusterUrl(cluster) : undefined;
}

/**
 * A service's database URL (or the identity store's): `<SERVICE>_DATABASE_URL` (`IDENTITY_DATABASE_URL`)
 * when set, else the base URL narrowed to its own PostgreSQL schema (Prisma's `?schema=` parameter).
 */
export function serviceDatabaseUrl(service: SchemaName, env: NodeJS.ProcessEnv = process.env): string {
  const own = env[`${service.toUpperCase()}_DATABASE_URL`];
  if (own) return own;
  const base = baseDatabaseUrl(env);
  if (!base) {
    throw new Error('No database configured: set DATABASE_URL, or run `npm start` once to initialise the embedded PostgreSQL.');
  }
  return withSchema(base, service);
}

export function withSchema(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('schema', schema);
  return parsed.toString();
}

/** The URL of the database itself, without a service's `?schema=`. */
export function withoutSchema(url: string): string {
  const parsed = new URL(url);
  parsed.searchParams.delete('schema');
  return parsed.toString();
}
