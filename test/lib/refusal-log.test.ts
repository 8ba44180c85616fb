/**
 * The refusal log's bounds, on the rows it hands the database: a flood is itemised up to a rate and
 * counted beyond it, no refusal is lost when a write fails, and concurrent refusals are one INSERT.
 */
import { describe, expect, it } from 'vitest';
import type { AdminLogClient } from '../../lib/audit/admin-log.js';
import { RefusalLog, type Refusal } from '../../lib/audit/refusal-log.js';

type Row = Parameters<AdminLogClient['adminLogEntry']['createMany']>[0]['data'][number];

function capturingClient() {
  const inserts: Row[][] = [];
  let failing = false;
  const client: AdminLogClient = {
    adminLogEntry: {
      create: async () => undefined,
      createMany: async ({ data }) => {
        if (failing) throw new Error('the database does not answer');
        inserts.push(data);
      },
      findMany: async () => [],
    },
  };
  return { client, inserts, fail: (value: boolean) => (failing = value) };
}

const limits = { windowMs: 60_000, itemsPerKind: 10, itemsPerWindow: 100 };
const refusal = (actor = 'anonymous', action = 'createPassport'): Refusal => ({ actor, role: 'none', action, outcome: 'MISSING_TOKEN', status: 401, detail: 'This operation needs a bearer token.' });
const one = (at: Date, of = refusal()) => [{ refusal: of, count: 1, times: [at], last: at }];
/** Refusals each entry stands for: an itemised one, one; a counted one, its count. */
const refusals = (rows: Row[]) => rows.reduce((sum, row) => sum + ((row.detail as { count?: number }).count ?? 1), 0);

describe('the refusal log', () => {
  it('itemises the first of a kind in a window, counts the rest in one entry, and writes concurrent ones in one INSERT', async () => {
    const { client, inserts } = capturingClient();
    let now = Date.UTC(2026, 0, 1, 12, 0, 5);
    const log = new RefusalLog(client, limits, () => now);
    await Promise.all(Array.from({ length: 25 }, (_, index) => log.record(one(new Date(now + index)))));
    expect(inserts.length).toBeLessThanOrEqual(2);
    expect(inserts.flat()).toHaveLength(10);
    await log.writeCounts();
    const counted = inserts.at(-1)!;
    expect(counted).toHaveLength(1);
    expect(counted[0]!.detail).toMatchObject({ count: 15, first_at: new Date(now + 10).toISOString(), last_at: new Date(now + 24).toISOString() });
    expect(refusals(inserts.flat())).toBe(25);
    // The next window itemises again.
    now += limits.windowMs;
    await log.record(one(new Date(now)));
    expect(inserts.at(-1)).toHaveLength(1);
    expect(inserts.at(-1)![0]!.detail).toEqual({ status: 401, detail: 'This operation needs a bearer token.' });
    await log.close();
  });

  it('itemises no more than its window allows of all kinds together, and counts a report of many at once', async () => {
    const { client, inserts } = capturingClient();
    const now = Date.UTC(2026, 0, 1, 12, 0, 5);
    const log = new RefusalLog(client, limits, () => now);
    const at = new Date(now);
    await log.record(Array.from({ length: 12 }, (_, index) => ({ refusal: refusal(`writer-${index}`), count: 500, times: Array(10).fill(at), last: at })));
    expect(inserts.flat()).toHaveLength(limits.itemsPerWindow);
    await log.close();
    expect(inserts.at(-1)).toHaveLength(12);
    expect(refusals(inserts.flat())).toBe(12 * 500);
  });

  it('counts what it could not write, and writes it once the database answers', async () => {
    const { client, inserts, fail } = capturingClient();
    const now = Date.UTC(2026, 0, 1, 12, 0, 5);
    const log = new RefusalLog(client, limits, () => now);
    fail(true);
    await expect(log.record(one(new Date(now)))).rejects.toThrow('does not answer');
    await expect(log.writeCounts()).rejects.toThrow('does not answer');
    fail(false);
    await log.close();
    expect(inserts.flat().map((row) => row.detail)).toEqual([expect.objectContaining({ count: 1 })]);
  });

  it("has a read of the log wait for the window's counts still being written, so that every refusal made before the read is in it", async () => {
    const inserts: Row[][] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding: (() => void) | undefined;
    const windowEndWriting = new Promise<void>((resolve) => (holding = resolve));
    const client: AdminLogClient = {
      adminLogEntry: {
        create: async () => undefined,
        createMany: async ({ data }) => {
          // The first write of counts (the window's end) is slow to commit.
          if (holding && data.some((row) => (row.detail as { count?: number }).count)) {
            holding();
            holding = undefined;
            await held;
          }
          inserts.push(data);
        },
        findMany: async () => [],
      },
    };
    const log = new RefusalLog(client, { windowMs: 100, itemsPerKind: 1, itemsPerWindow: 100 });
    const flood = (count: number) => Promise.all(Array.from({ length: count }, () => log.record(one(new Date()))));
    await flood(5);
    await windowEndWriting;
    await flood(3);
    const read = log.writeCounts();
    expect(await Promise.race([read.then(() => 'read'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 100))])).toBe('waiting');
    release();
    await read;
    expect(refusals(inserts.flat())).toBe(8);
    await log.close();
  });
});
