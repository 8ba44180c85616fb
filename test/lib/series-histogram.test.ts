/**
 * The platform's histograms (lib/ops/metrics.ts SeriesHistogram) hand out series observed without
 * prom-client's per-observation label work; what a scrape reads must be exactly what prom-client's
 * own Histogram gives for the same observations, bucket bounds, +Inf, _sum and _count included.
 */
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SeriesHistogram } from '../../lib/ops/metrics.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.1, 1];
const LABELS = ['server', 'route', 'status'] as const;
/** Values on, between, below and above the bounds. */
const VALUES = [0, 0.001, 0.005, 0.0051, 0.01, 0.02, 0.1, 0.5, 1, 1.5, 30];

function both() {
  const plainRegistry = new Registry();
  const ourRegistry = new Registry();
  const plain = new Histogram({ name: 'request_seconds', help: 'Requests.', labelNames: LABELS, buckets: BUCKETS, registers: [plainRegistry] });
  const ours = new SeriesHistogram({ name: 'request_seconds', help: 'Requests.', labelNames: LABELS, buckets: BUCKETS, registers: [ourRegistry] });
  return { plain, ours, plainRegistry, ourRegistry };
}

describe('SeriesHistogram', () => {
  it('exposes the same text and values as prom-client for the same observations', async () => {
    const { plain, ours, plainRegistry, ourRegistry } = both();
    const label = [
      { server: 'gateway', route: '/graphql', status: 200 },
      { server: 'issuer', route: '/passports/:id', status: 404 },
    ];
    VALUES.forEach((value, i) => {
      plain.observe(label[i % 2]!, value);
      ours.series(label[i % 2]!).observe(value);
    });
    expect(await ourRegistry.metrics()).toBe(await plainRegistry.metrics());
    expect(await ours.get()).toEqual(await plain.get());
    expect(await ourRegistry.getMetricsAsJSON()).toEqual(await plainRegistry.getMetricsAsJSON());
  });

  it('gives one series per label values, whatever their order, and refuses an undeclared label', () => {
    const { ours } = both();
    expect(ours.series({ server: 'trust', route: '/', status: 200 })).toBe(ours.series({ status: 200, route: '/', server: 'trust' }));
    expect(() => ours.series({ server: 'trust', path: '/x' } as never)).toThrow(/not included/);
    expect(() => ours.series({ server: 'trust', route: '/', status: 200 }).observe(Number.NaN)).toThrow(TypeError);
  });

  it('is emptied by reset, and its series still count afterwards', async () => {
    const { plain, ours, plainRegistry, ourRegistry } = both();
    const series = ours.series({ server: 'facade', route: '/x', status: 500 });
    series.observe(0.2);
    ours.reset();
    series.observe(0.003);
    plain.reset();
    plain.observe({ server: 'facade', route: '/x', status: 500 }, 0.003);
    expect(await ourRegistry.metrics()).toBe(await plainRegistry.metrics());
  });
});
