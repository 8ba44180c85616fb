/**
 * StatementCounter (lib/db/prisma.ts) on a real PostgreSQL: every statement counted and timed, in each
 * of the forms pg's Client.query is called (callback or promise; text, values, config object), failures
 * as failures, answers and errors handed on unchanged.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { StatementCounter } from '../../lib/db/prisma.js';

type Observed = { sql: string; seconds: number; failed: boolean };

describe('StatementCounter', () => {
  const observed: Observed[] = [];
  const counter = new StatementCounter((sql, seconds, failed) => observed.push({ sql, seconds, failed }));
  const uncounted = new StatementCounter();
  let pool: pg.Pool;
  let unobserved: pg.Pool;

  beforeAll(() => {
    const connectionString = inject('postgresUrl').replace(/\/[^/]*$/, '/postgres');
    pool = new pg.Pool({ connectionString, max: 1 });
    counter.watch(pool);
    unobserved = new pg.Pool({ connectionString, max: 1 });
    uncounted.watch(unobserved);
  });
  afterAll(async () => {
    await pool.end();
    await unobserved.end();
  });

  const last = () => observed.at(-1)!;

  it('counts and times pool queries (pg.Pool asks its client with a callback), promise and callback alike', async () => {
    const before = counter.count;
    expect((await pool.query('SELECT $1::int AS n', [7])).rows).toEqual([{ n: 7 }]);
    expect(last()).toMatchObject({ sql: 'SELECT $1::int AS n', failed: false });
    const rows = await new Promise((resolve, reject) => pool.query('SELECT 2 AS n', (error, result) => (error ? reject(error) : resolve(result.rows))));
    expect(rows).toEqual([{ n: 2 }]);
    expect(last()).toMatchObject({ sql: 'SELECT 2 AS n', failed: false });
    expect(counter.count - before).toBe(2);
    expect(observed.every(({ seconds }) => seconds >= 0 && seconds < 5)).toBe(true);
  });

  it("counts and times a client's queries in every form, and hands failures on as failures", async () => {
    const client = await pool.connect();
    try {
      const before = counter.count;
      const seen = observed.length;
      expect((await client.query('SELECT 1 AS n')).rows).toEqual([{ n: 1 }]);
      expect((await client.query({ text: 'SELECT $1::text AS t', values: ['x'] })).rows).toEqual([{ t: 'x' }]);
      expect((await client.query({ text: 'SELECT 3 AS n', rowMode: 'array' })).rows).toEqual([[3]]);
      const viaCallback = await new Promise((resolve, reject) => client.query('SELECT 4 AS n', (error, result) => (error ? reject(error) : resolve(result.rows))));
      expect(viaCallback).toEqual([{ n: 4 }]);
      const withValues = await new Promise((resolve, reject) => client.query('SELECT $1::int AS n', [5], (error, result) => (error ? reject(error) : resolve(result.rows))));
      expect(withValues).toEqual([{ n: 5 }]);
      await expect(client.query('SELECT * FROM no_such_table')).rejects.toMatchObject({ code: '42P01' });
      const failure = await new Promise((resolve) => client.query('SELEC 1', (error) => resolve(error)));
      expect(failure).toMatchObject({ code: '42601' });
      expect(counter.count - before).toBe(7);
      expect(observed.slice(seen).map(({ sql, failed }) => [sql, failed])).toEqual([
        ['SELECT 1 AS n', false],
        ['SELECT $1::text AS t', false],
        ['SELECT 3 AS n', false],
        ['SELECT 4 AS n', false],
        ['SELECT $1::int AS n', false],
        ['SELECT * FROM no_such_table', true],
        ['SELEC 1', true],
      ]);
      // The connection is still in use after both failures.
      expect((await client.query('SELECT 6 AS n')).rows).toEqual([{ n: 6 }]);
    } finally {
      client.release();
    }
  });

  it('counts with no observer (metrics off), in either form', async () => {
    const before = uncounted.count;
    await unobserved.query('SELECT 1');
    const client = await unobserved.connect();
    try {
      await client.query('SELECT 1');
      await new Promise((resolve) => client.query('SELECT 1', resolve));
      await expect(client.query('SELEC 1')).rejects.toMatchObject({ code: '42601' });
    } finally {
      client.release();
    }
    expect(uncounted.count - before).toBe(4);
  });
});
