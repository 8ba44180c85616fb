/**
 * A write that finds every connection of its service's pool taken, as a burst of concurrent creates
 * leaves it: it waits the pool's wait for one (DATABASE_WAIT_MS; 10 s unless set, which
 * test/lib/database-unavailable.test.ts checks; 3 s here, still past Prisma's own 2 s), then is
 * answered 503 DATABASE_UNAVAILABLE with Retry-After and changes nothing (Prisma's own 2 s wait for a
 * transaction to begin answered it 500 "Unable to start a transaction in the given time" before the
 * pool's wait was up). The registry's ten connections are held here by reads blocked behind a lock
 * this test takes on its records table.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.js';

/** Connections of each service's pool (lib/service/kernel.ts). */
const POOL_SIZE = 10;
/** The pool's wait of this file's stack: longer than Prisma's 2 s, so that its wait would still answer first. */
const WAIT_MS = 3_000;

let platform: TestStack;
let locker: pg.Client;
let lockerPid: number;
/** Asks who waits from a session of its own: polled from the lock holder's session, the reads after the first never reached PostgreSQL. */
let watcher: pg.Client;

beforeAll(async () => {
  // Read as the stack's pools are made (lib/db/prisma.ts); put back once they are.
  process.env.DATABASE_WAIT_MS = String(WAIT_MS);
  try {
    platform = await startTestStack();
  } finally {
    delete process.env.DATABASE_WAIT_MS;
  }
  locker = new pg.Client({ connectionString: platform.databaseUrl.split('?')[0] });
  await locker.connect();
  lockerPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  watcher = new pg.Client({ connectionString: platform.databaseUrl.split('?')[0] });
  await watcher.connect();
});
afterAll(async () => {
  await locker?.end();
  await watcher?.end();
  await platform?.stop();
});

/** Sessions waiting for the lock this test holds: only the registry reads its records table. */
async function waitingOnTheLock(): Promise<number> {
  const { rows } = await watcher.query<{ count: string }>('SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [lockerPid]);
  return Number(rows[0]!.count);
}

/** A read of the registry's records, sent to its subgraph's own port; given back once it waits on the lock, holding a connection. */
async function blockedRead(index: number): Promise<{ answer: Promise<Response> }> {
  const read = fetch(`${platform.stack.subgraphUrls.registry}graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: `{ registryRecords(kind: "item", first: ${index + 1}) { nodes { id } } }` }),
  });
  for (let attempt = 0; (await waitingOnTheLock()) <= index; attempt += 1) {
    expect(attempt, `read ${index + 1} never waited on the lock`).toBeLessThan(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { answer: read };
}

describe('a write when its service’s pool is taken', () => {
  it('waits the pool’s wait, then answers 503 DATABASE_UNAVAILABLE with Retry-After, and writes nothing', { timeout: 60_000 }, async () => {
    const created = await platform.rest('registry', '/', { body: { kind: 'item', id: 'busy-pool-item', body: {} }, as: 'writer' });
    expect(created.status, created.text).toBe(201);

    await locker.query('BEGIN');
    await locker.query('LOCK TABLE registry.record IN ACCESS EXCLUSIVE MODE');
    const reads: Promise<Response>[] = [];
    try {
      // One after another, each once the one before holds its connection: the pool's every one taken.
      for (let index = 0; index < POOL_SIZE; index += 1) reads.push((await blockedRead(index)).answer);

      const started = Date.now();
      const write = await platform.rest('registry', '/items/busy-pool-item/versions', { body: { expected_version: 1, body: { note: 'under load' } }, as: 'writer' });
      const waited = Date.now() - started;
      expect([write.status, write.body?.code, write.headers.get('retry-after')], write.text).toEqual([503, 'DATABASE_UNAVAILABLE', '5']);
      // The pool's wait, not Prisma's 2 s for a transaction to begin.
      expect(waited).toBeGreaterThanOrEqual(WAIT_MS * 0.9);
    } finally {
      await locker.query('ROLLBACK');
    }
    expect((await Promise.all(reads)).map((read) => read.status)).toEqual(Array(POOL_SIZE).fill(200));
    const record = await platform.rest('registry', '/items/busy-pool-item');
    expect([record.status, record.body.version]).toEqual([200, 1]);
  });
});
