import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

const TEMPLATE_DATABASE = 'passport_template';

function databaseUrl(name: string): string {
  return inject('postgresUrl').replace(/\/[^/]*$/, `/${name}`);
}

async function withAdmin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl('postgres') });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** A fresh database of this test's own, migrated (cloned from the template) unless `empty`. */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<string> {
  const name = `test_${randomBytes(6).toString('hex')}`;
  // CREATE DATABASE … TEMPLATE needs the template to have no other session at that moment.
  await withAdmin((client) => client.query(options.empty ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`));
  return databaseUrl(name);
}

/** Runs SQL directly in a test database, e.g. to tamper with a row the way an attacker would. */
export async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResult<T>> {
  const client = new pg.Client({ connectionString: url.split('?')[0] });
  await client.connect();
  try {
    return await client.query<T>(text, values);
  } finally {
    await client.end();
  }
}

/**
 * Runs `count` transactions that each take a transaction id, as a database in use has: a cluster made
 * afresh (initdb, then a restore) counts far fewer.
 */
export async function spendTransactionIds(url: string, count: number): Promise<void> {
  await sql(url, `DO $$ BEGIN FOR i IN 1..${count} LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$`);
}

/**
 * `sql` over one connection per database, kept until `end()`: for a test that runs many statements
 * (each new connection costs PostgreSQL some 34 ms of CPU for a fresh backend, and the client its handshake).
 */
export function sqlSessions(): { sql: typeof sql; end(): Promise<void> } {
  const clients = new Map<string, Promise<pg.Client>>();
  const client = (url: string) => {
    const base = url.split('?')[0]!;
    let connected = clients.get(base);
    if (!connected) {
      const opened = new pg.Client({ connectionString: base });
      connected = opened.connect().then(() => opened);
      clients.set(base, connected);
    }
    return connected;
  };
  return {
    sql: async (url, text, values = []) => (await client(url)).query(text, values),
    async end() {
      const open = [...clients.values()];
      clients.clear();
      await Promise.allSettled(open.map(async (connected) => (await connected).end()));
    },
  };
}
