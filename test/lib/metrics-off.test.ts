/**
 * METRICS=off (lib/config/runtime.ts): the servers keep no metrics and serve no metrics listener,
 * the probes stay. No hook runs: no onResponse hook is added (a request leaves the registry empty,
 * where with metrics on it is counted), the GraphQL operation plugin has no hook, and the servers'
 * metrics are the shared no-op ones. The benchmark of what metrics cost (bench/ops-cost.ts) compares
 * against this.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, loadRuntimeConfig } from '../../lib/config/runtime.js';
import { operationMetricsPlugin } from '../../lib/ops/graphql-metrics.js';
import { NO_SERVER_METRICS } from '../../lib/ops/metrics.js';
import { METRICS_OFF_URL, serveMetrics } from '../../lib/ops/metrics-listener.js';
import { Operations } from '../../lib/ops/operations.js';
import { buildPlatformServer } from '../../lib/server/platform-server.js';

describe('METRICS', () => {
  it('is on by default and takes on or off, nothing else', () => {
    expect(loadRuntimeConfig({}).metrics.enabled).toBe(true);
    expect(loadRuntimeConfig({ METRICS: 'on' }).metrics.enabled).toBe(true);
    expect(loadRuntimeConfig({ METRICS: 'off' }).metrics.enabled).toBe(false);
    expect(loadRuntimeConfig({ METRICS: 'OFF' }).metrics.enabled).toBe(false);
    expect(() => loadRuntimeConfig({ METRICS: 'no' })).toThrow(ConfigurationError);
  });

  it('off, serves no /metrics listener', async () => {
    const operations = new Operations({ metrics: false });
    const listener = await serveMetrics(operations.metrics, { host: '127.0.0.1', port: 0 });
    expect(listener.url).toBe(METRICS_OFF_URL);
    await listener.stop();
    // On, the same call listens and answers.
    const on = new Operations();
    const served = await serveMetrics(on.metrics, { host: '127.0.0.1', port: 0 });
    try {
      expect((await fetch(served.url)).status).toBe(200);
    } finally {
      await served.stop();
    }
  });

  it('off, adds no hook and counts nothing; the probes stay', async () => {
    const count = async (operations: Operations) => {
      const { app } = await buildPlatformServer('facade', { operations, bodyLimit: 1024 }, { readiness: {} });
      app.get('/thing', async () => ({ ok: true }));
      expect((await app.inject({ method: 'GET', url: '/thing' })).statusCode).toBe(200);
      expect((await app.inject({ method: 'GET', url: '/livez' })).statusCode).toBe(200);
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      const exposition = await operations.metrics.exposition();
      await app.close();
      return [...exposition.matchAll(/^http_server_request_duration_seconds_count\{.*\} (\d+)$/gm)].reduce((sum, [, count]) => sum + Number(count), 0);
    };
    expect(await count(new Operations())).toBe(3);
    expect(await count(new Operations({ metrics: false }))).toBe(0);
  });

  it('off, hands out the no-op metrics, an Apollo plugin without hooks, and collects no process metrics', async () => {
    const operations = new Operations({ metrics: false });
    for (const server of ['facade', 'gateway', 'trust', 'registry', 'issuer', 'archive'] as const) expect(operations.metrics.forServer(server)).toBe(NO_SERVER_METRICS);
    expect(operationMetricsPlugin(NO_SERVER_METRICS)).toEqual({});
    expect(operations.metrics.registry.getSingleMetric('process_cpu_user_seconds_total')).toBeUndefined();
    expect(new Operations().metrics.registry.getSingleMetric('process_cpu_user_seconds_total')).toBeDefined();
  });
});
