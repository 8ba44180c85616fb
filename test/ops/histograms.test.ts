/**
 * lib/ops/histograms.ts writes a histogram family as prom-client 15 does: the same observations into
 * prom-client's own Histogram and into our accumulators give the same text, byte for byte.
 */
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { HistogramFamily } from '../../lib/ops/histograms.js';
import { statementVerb } from '../../lib/ops/metrics.js';

const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LABEL_NAMES = ['server', 'route', 'status'] as const;

/** Seeded values across every bucket, bounds themselves and beyond the last among them. */
function values(count: number, seed: number): number[] {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: count }, (_, index) => (index % 7 === 0 ? BOUNDS[index % BOUNDS.length]! : next() ** 3 * 20));
}

async function both(observations: { labels: [string, string, number]; value: number }[]) {
  const registry = new Registry();
  const theirs = new Histogram({ name: 'request_seconds', help: 'Request durations \\ in seconds,\nby route.', labelNames: LABEL_NAMES, buckets: BOUNDS, registers: [registry] });
  const ours = new HistogramFamily('request_seconds', 'Request durations \\ in seconds,\nby route.', LABEL_NAMES, BOUNDS);
  // Two shards, as two servers: prom-client's text of the second is its series, after the first's.
  const shards = [ours.shard(), ours.shard()];
  const series = new Map<string, ReturnType<(typeof shards)[0]>>();
  for (const { labels, value } of observations) {
    theirs.labels({ server: labels[0], route: labels[1], status: labels[2] }).observe(value);
    const key = JSON.stringify(labels);
    let found = series.get(key);
    if (!found) series.set(key, (found = shards[labels[0] === 'a' ? 0 : 1]!(labels)));
    found.observe(value);
  }
  return { expected: await registry.getSingleMetricAsString('request_seconds'), actual: [...ours.parts()].join('') };
}

describe('request histograms written as prom-client writes them', () => {
  it('a family with no observation is its # HELP and # TYPE lines', async () => {
    const { expected, actual } = await both([]);
    expect(actual).toBe(expected);
  });

  it('many series, values on bounds, past the last bound and in between, escaped label values', async () => {
    const routes = ['/passports/:id', 'quote"d', 'back\\slash', 'new\nline', 'ünïcode ✓'];
    const observations = values(5_000, 7).map((value, index) => ({
      // Every 'a' series before any 'b' one, so that prom-client's order of first observation is the shards' order.
      labels: [index < 2_500 ? 'a' : 'b', routes[index % routes.length]!, [200, 404, 500][index % 3]!] as [string, string, number],
      value,
    }));
    const { expected, actual } = await both(observations);
    expect(expected.split('\n').length).toBeGreaterThan(2 * 15 * 17);
    expect(actual).toBe(expected);
  });

  it('parts stay under 128 KiB each and join to the whole', async () => {
    const observations = Array.from({ length: 3_000 }, (_, index) => ({ labels: ['a', `/route/${index}`, 200] as [string, string, number], value: index / 1000 }));
    const { expected } = await both(observations);
    const family = new HistogramFamily('request_seconds', 'Request durations \\ in seconds,\nby route.', LABEL_NAMES, BOUNDS);
    const series = family.shard();
    for (const { labels, value } of observations) series(labels).observe(value);
    const parts = [...family.parts()];
    expect(expected.length).toBeGreaterThan(1024 * 1024);
    expect(Math.max(...parts.map((part) => part.length))).toBeLessThan(128 * 1024);
    // Each observation here is in a series of its own, made anew: the same text as one series each.
    expect(parts.join('')).toBe(expected);
  });

  it('a value that is not a finite number is not counted', () => {
    const family = new HistogramFamily('request_seconds', 'help', LABEL_NAMES, BOUNDS);
    const series = family.shard()(['a', '/', 200]);
    series.observe(Number.NaN);
    series.observe(Number.POSITIVE_INFINITY);
    series.observe(0.2);
    expect([series.count, series.sum]).toEqual([1, 0.2]);
  });
});

describe('the verb of a SQL statement', () => {
  it('is its first word upper-cased when known, else _OTHER', () => {
    const cases: [string, string][] = [
      ['SELECT "public"."Passport"."id" FROM "public"."Passport"', 'SELECT'],
      ['  \n\tselect 1', 'SELECT'],
      ['Begin', 'BEGIN'],
      ['DEALLOCATE ALL', 'DEALLOCATE'],
      ['DEALLOCATEX', '_OTHER'],
      ['SELECTION', '_OTHER'],
      ['(SELECT 1)', '_OTHER'],
      ['', '_OTHER'],
      ['   ', '_OTHER'],
      ['VACUUM', '_OTHER'],
      ['INSERT/* a comment */INTO x', 'INSERT'],
    ];
    for (const [sql, verb] of cases) expect([sql, statementVerb(sql)]).toEqual([sql, verb]);
  });
});
