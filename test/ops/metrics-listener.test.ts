/**
 * The metrics listener (lib/ops/metrics-listener.ts) as a scraper, a stray client and an operator
 * meet it: GET /metrics answers the exposition, anything else a 404, a collection that fails a 500
 * with no partial exposition, and a port already taken a sentence that names METRICS_PORT.
 */
import { createServer } from 'node:net';
import { Gauge } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../lib/config/runtime.js';
import { serveMetrics, type MetricsListener } from '../../lib/ops/metrics-listener.js';
import { PlatformMetrics } from '../../lib/ops/metrics.js';

describe('the metrics listener', () => {
  const metrics = new PlatformMetrics();
  let listener: MetricsListener;

  beforeAll(async () => {
    const gateway = metrics.forServer('gateway');
    gateway.httpRequestDone('/graphql', 'POST', 200, 0.012);
    gateway.databaseQueryDone('SELECT 1', 0.0004, false);
    listener = await serveMetrics(metrics, { host: '127.0.0.1', port: 0 });
  });
  afterAll(() => listener.stop());

  it('answers GET /metrics with the whole exposition, and nothing else but 404', async () => {
    const response = await fetch(listener.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(metrics.registry.contentType);
    const text = await response.text();
    // The same text as exposition(), but for the process's own figures, which move between two reads.
    const steady = (exposition: string) => exposition.split('\n').filter((line) => !/^(process|nodejs)_/.test(line));
    expect(steady(text)).toEqual(steady(await metrics.exposition()));
    expect(text.endsWith('\n')).toBe(true);
    expect(text).toContain('http_server_request_duration_seconds_count{server="gateway",http_route="/graphql",http_request_method="POST",http_response_status_code="200"} 1');
    for (const [path, method] of [
      ['/', 'GET'],
      ['/metrics/', 'GET'],
      ['/metrics', 'POST'],
    ] as const) {
      const stray = await fetch(new URL(path, listener.url), { method });
      expect([path, method, stray.status, await stray.text()]).toEqual([path, method, 404, 'Only GET /metrics is served here.\n']);
    }
  });

  it('answers 500 with no part of the exposition when a metric cannot be collected', async () => {
    new Gauge({
      name: 'test_failing_gauge',
      help: 'A gauge whose collection fails.',
      registers: [metrics.registry],
      collect: () => {
        throw new Error('the pool is gone');
      },
    });
    try {
      const response = await fetch(listener.url);
      expect([response.status, await response.text()]).toEqual([500, 'The metrics could not be collected.\n']);
    } finally {
      metrics.registry.removeSingleMetric('test_failing_gauge');
    }
    expect((await fetch(listener.url)).status).toBe(200);
  });

  it('refuses a port already taken in one sentence naming METRICS_PORT', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      const refused = serveMetrics(new PlatformMetrics(), { host: '127.0.0.1', port });
      await expect(refused).rejects.toBeInstanceOf(ConfigurationError);
      await expect(refused).rejects.toThrow(`the metrics port 127.0.0.1:${port} is in use; set METRICS_PORT to another (0 takes a free one).`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
