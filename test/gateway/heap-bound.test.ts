/**
 * Memory that does not grow with the data (issue 30, item 3): the heap of the gateway and the
 * subgraphs (one process here, as `npm start` runs them) after cross-service `passports(ids:)` (500 ids a request)
 * requests for 1,000 distinct passports and after requests for 100,000 distinct passports, each
 * measured after full garbage collections, differ by less than HEAP_BOUND. A cache keyed by passport,
 * or anything else kept per request, would grow by about its entry's size a passport: 99,000 more
 * passports at 170 bytes each already exceed the bound.
 *
 * The 100,000 passports are copies of one real passport made in SQL (test/support/national/
 * shape-copies.ts): their signatures are another passport's, which this test does not check.
 */
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { nationalPassportId } from '../support/national/layout.js';
import { insertShapeCopies } from '../support/national/shape-copies.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { appendEvent, createModel, createPassport, PAYLOADS } from '../issuer/support.js';

const PASSPORTS = 100_000;
const BATCH = 500;
const CLIENTS = 2;
/** Most the heap may grow between 1,000 and 100,000 distinct passports asked for. */
const HEAP_BOUND = 16 * 2 ** 20;
const MODEL = 'heap-bound-battery';
const QUERY = `query HeapPassports($ids: [ID!]!) { passports(ids: $ids) { id status logSize typeRecord { id version kind } } }`;

// A collection on demand, as node --expose-gc gives it, without restarting the worker with that flag.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let platform: TestStack;

beforeAll(async () => {
  platform = await startTestStack();
  await createModel(platform, MODEL);
  const template = (await createPassport(platform, MODEL)).passport_id;
  expect((await appendEvent(platform, template, 'activated', PAYLOADS.activated!())).status).toBe(201);
  const db = new pg.Client({ connectionString: platform.databaseUrl.split('?')[0] });
  await db.connect();
  try {
    await insertShapeCopies(db, { from: 0, to: PASSPORTS, templatePassportId: template });
  } finally {
    await db.end();
  }
  // 100,000 copies made in SQL: ~16 CPU-s of PostgreSQL (their rows, indexes and ANALYZE), which on a
  // loaded machine ran past 120 s of wall time.
}, 300_000);

afterAll(async () => {
  await platform?.stop();
});

/** Asks the gateway for passports `from` ≤ n < `to`, BATCH a request, CLIENTS requests at a time; every passport must come back. */
async function ask(from: number, to: number): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < to) {
        const start = next;
        next = Math.min(to, next + BATCH);
        const ids = Array.from({ length: next - start }, (_, i) => nationalPassportId(start + i));
        const answer = await platform.graphql<{ passports: { id: string; typeRecord: { id: string } | null }[] }>(QUERY, { ids });
        expect(answer.errors).toBeUndefined();
        expect(answer.data!.passports.map((passport) => passport.id).sort()).toEqual([...ids].sort());
        expect(answer.data!.passports.every((passport) => passport.typeRecord?.id === MODEL)).toBe(true);
      }
    }),
  );
}

function heapAfterCollection(): number {
  for (let i = 0; i < 3; i += 1) gc();
  return process.memoryUsage().heapUsed;
}

it(`the heap after 100,000 distinct passports is within ${HEAP_BOUND / 2 ** 20} MiB of the heap after 1,000`, async () => {
  await ask(0, 1_000);
  const after1k = heapAfterCollection();
  await ask(1_000, PASSPORTS);
  const after100k = heapAfterCollection();
  console.log(`heap after 1,000 passports ${(after1k / 2 ** 20).toFixed(1)} MiB, after 100,000 ${(after100k / 2 ** 20).toFixed(1)} MiB (${((after100k - after1k) / 2 ** 20).toFixed(2)} MiB more)`);
  expect(after100k - after1k).toBeLessThan(HEAP_BOUND);
}, 120_000);
