/**
 * PostgreSQL connection facts from a URL, and the database itself made when missing: what the
 * services, the embedded cluster and the migration engine all need, with no Prisma in it.
 */
import pg from 'pg';
import { errorChain } from './unavailable.js';

/** Why the embedded PostgreSQL (lib/db/embedded-postgres.ts) cannot start, in one sentence for the operator. */
export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
}

/** Connection parts of a PostgreSQL URL; `schema` is Prisma's `?schema=` parameter. */
export interface DatabaseTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  schema: string;
}

export function parseDatabaseUrl(url: string): DatabaseTarget {
  const parsed = new URL(url);
  if (parsed.protocol !== 'postgresql:' && parsed.protocol !== 'postgres:') {
    throw new Error(`not a PostgreSQL URL: ${parsed.protocol}`);
  }
  return {
    host: decodeURIComponent(parsed.hostname) || 'localhost',
    port: Number(parsed.port || 5432),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database: decodeURIComponent(parsed.pathname.slice(1)),
    schema: parsed.searchParams.get('schema') ?? 'public',
  };
}

/** Longest wait for a connection: a start against a host that does not answer ends well within 10 s. */
export const CONNECT_TIMEOUT_MS = 5_000;

/** A pg client of `database` on the target's server, searching the target's schema. */
export function clientConfig(target: DatabaseTarget, database: string): pg.ClientConfig {
  return {
    host: target.host,
    port: target.port,
    user: target.user,
    password: target.password,
    database,
    options: `-c search_path="${target.schema}"`,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  };
}

/** Why the server behind the URL does not take a new connection (of this user, to this database) within `timeoutMs`; undefined when it does. */
export async function connectionFailure(url: string, timeoutMs = CONNECT_TIMEOUT_MS): Promise<Error | undefined> {
  const target = parseDatabaseUrl(url);
  const client = new pg.Client({ ...clientConfig(target, target.database), connectionTimeoutMillis: timeoutMs });
  // A connection dropped after it was made must not end the process as an unhandled 'error' event.
  client.on('error', () => {});
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  } finally {
    await client.end().catch(() => {});
  }
}

/** How often readiness opens a connection of its own to one server, at most, and how long it waits for it. */
const FRESH_CONNECTION_INTERVAL_MS = 5_000;
const FRESH_CONNECTION_TIMEOUT_MS = 1_500;
const freshConnections = new Map<string, { at: number; accepted: Promise<boolean> }>();

/**
 * Whether the server takes new connections, for readiness: a pool whose connections are open keeps
 * answering while the postmaster accepts none (stopped, hung, out of connection slots), and then
 * every request that needs one more connection waits for it. A connection costs some 30 ms of CPU
 * (PostgreSQL's backend and its authentication, and ours), so one try every
 * FRESH_CONNECTION_INTERVAL_MS at most per server and process (0.6 % of a core at most), its outcome
 * shared by every probe meanwhile (under `npm start` the four services share it).
 */
export function takesNewConnections(url: string): Promise<boolean> {
  const target = parseDatabaseUrl(url);
  const server = `${target.user}@${target.host}:${target.port}/${target.database}`;
  const last = freshConnections.get(server);
  if (last && Date.now() - last.at < FRESH_CONNECTION_INTERVAL_MS) return last.accepted;
  const accepted = connectionFailure(url, FRESH_CONNECTION_TIMEOUT_MS).then((failure) => failure === undefined);
  freshConnections.set(server, { at: Date.now(), accepted });
  return accepted;
}

/** The URL with its password replaced by `***`, fit for logs and messages. */
export function redactedDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'a database URL that cannot be read';
  }
}

/** SQLSTATEs (and socket codes) a start meets, as the end of the sentence `the database … <cause>`. */
const CAUSES: Record<string, string> = {
  '28P01': 'refused the user name or password',
  '28000': 'refused this user (no pg_hba.conf entry or no such role)',
  '3D000': 'has no such database (create it, or give the user the right to)',
  '42501': 'denied a permission the services need',
  '57P03': 'is starting up or shutting down',
  '53300': 'has no connection left (too many clients)',
  ECONNREFUSED: 'refused the connection: nothing listens on that host and port',
  ENOTFOUND: 'cannot be found: the host name does not resolve',
  EAI_AGAIN: 'cannot be found: the host name does not resolve',
  ETIMEDOUT: `did not answer within ${CONNECT_TIMEOUT_MS / 1000} s`,
  EHOSTUNREACH: 'cannot be reached: no route to the host',
};

/**
 * One line saying why the database stopped a start (or what `failing` names), naming it without its
 * password, or undefined when the error is not the database's. Migration failures (`MigrationError`)
 * say which migration.
 */
export function explainDatabaseFailure(error: unknown, url: string, failing = 'Cannot start'): string | undefined {
  const named = `the database ${redactedDatabaseUrl(url)}`;
  for (const link of errorChain(error)) {
    const code = typeof link.code === 'string' ? link.code : undefined;
    const message = typeof link.message === 'string' ? link.message : '';
    if (link.name === 'MigrationError') return `${failing}: a migration of ${named} failed: ${message}`;
    if (code && CAUSES[code]) return `${failing}: ${named} ${CAUSES[code]}${/^[0-9A-Z]{5}$/.test(code) ? ` (${code}: ${message})` : ''}.`;
    if (/timeout exceeded when trying to connect|Connection terminated due to connection timeout/i.test(message)) return `${failing}: ${named} ${CAUSES.ETIMEDOUT}.`;
    if (link instanceof pg.DatabaseError) return `${failing}: ${named} answered with an error (${link.code ?? 'no code'}: ${message}).`;
  }
  return undefined;
}

/** Creates the database named in the URL when it does not exist yet. Returns whether it did. */
export async function ensureDatabase(url: string): Promise<boolean> {
  const target = parseDatabaseUrl(url);
  const admin = new pg.Client(clientConfig(target, 'postgres'));
  await admin.connect();
  try {
    const existing = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [target.database]);
    if (existing.rowCount) return false;
    await admin.query(`CREATE DATABASE "${target.database.replaceAll('"', '""')}"`);
    return true;
  } finally {
    await admin.end();
  }
}
