/**
 * What StatementCounter (lib/db/prisma.ts) adds to a SQL statement's CPU in this process: a client
 * shaped as pg 8's Client.query (a promise with its `.catch` when no callback is given; the answer a
 * turn of the microtask queue later, no server), bare and watched by a StatementCounter that tells the
 * metrics (databaseQueryDone) of each statement, in the promise form and the callback form. Medians
 * of ROUNDS, the two taking turns; garbage collection included (process CPU, all threads).
 *
 *   nice -n 15 node --import tsx bench/statement-cost.ts
 */
import pg from 'pg';
import { StatementCounter } from '../lib/db/prisma.js';
import { PlatformMetrics } from '../lib/ops/metrics.js';
import { markdownTable, median } from './support.js';

const ROUNDS = Number(process.env.STATEMENT_ROUNDS ?? 31);
const STATEMENTS = 20_000;
/** Statements in flight at once, as a request's Promise.all of queries would send them. */
const AT_ONCE = 10;
const SQL = 'SELECT "public"."Passport"."id", "public"."Passport"."gtin" FROM "public"."Passport" WHERE "public"."Passport"."id" = $1 LIMIT $2 OFFSET $3';
const ANSWER = { rows: [], rowCount: 0 };

type Callback = (error: unknown, result: unknown) => void;
type Client = { query(config: unknown, values?: unknown, callback?: unknown): unknown };

/** pg 8's Client.query in shape (lib/client.js): a callback, or a promise made for one. */
function pgShapedClient(): Client {
  return {
    query(_config, values, callback) {
      const query: { callback?: Callback } = { callback: (typeof values === 'function' ? values : callback) as Callback | undefined };
      let result: unknown;
      if (!query.callback)
        result = new Promise((resolve, reject) => {
          query.callback = (error, answer) => (error ? reject(error) : resolve(answer));
        }).catch((error: unknown) => {
          throw error;
        });
      queueMicrotask(() => query.callback!(null, ANSWER));
      return result;
    },
  };
}

const metrics = new PlatformMetrics().forServer('trust');
function watched(): Client {
  const client = pgShapedClient();
  const pool = new pg.Pool();
  new StatementCounter((sql, seconds, failed) => metrics.databaseQueryDone(sql, seconds, failed)).watch(pool);
  // What pg.Pool emits for each new connection; StatementCounter wraps its query there.
  pool.emit('connect', client);
  return client;
}

async function round(client: Client, form: 'promise' | 'callback'): Promise<number> {
  const before = process.cpuUsage();
  for (let sent = 0; sent < STATEMENTS; sent += AT_ONCE) {
    if (form === 'promise') await Promise.all(Array.from({ length: AT_ONCE }, () => client.query(SQL, [1, 2, 3])));
    else
      await new Promise<void>((done) => {
        let left = AT_ONCE;
        for (let i = 0; i < AT_ONCE; i += 1) client.query(SQL, [1, 2, 3], () => --left === 0 && done());
      });
  }
  const used = process.cpuUsage(before);
  return ((used.user + used.system) * 1000) / STATEMENTS;
}

const rows: string[][] = [];
for (const form of ['promise', 'callback'] as const) {
  const clients = [pgShapedClient(), watched()];
  const samples: number[][] = [[], []];
  for (let index = 0; index < ROUNDS + 3; index += 1)
    for (let turn = 0; turn < 2; turn += 1) {
      const which = (index + turn) % 2;
      const ns = await round(clients[which]!, form);
      if (index >= 3) samples[which]!.push(ns);
    }
  const [bare, counted] = samples.map(median) as [number, number];
  rows.push([form, bare.toFixed(0), counted.toFixed(0), (counted - bare).toFixed(0)]);
}
console.log(markdownTable(['form', 'bare ns / statement', 'counted and timed', 'added'], rows, ['left', 'right', 'right', 'right']));
