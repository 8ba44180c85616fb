/** Request durations, a server's edge feature: http_server_request_duration_seconds (lib/ops/metrics.ts). */
import fp from 'fastify-plugin';
import type { ServerMetrics } from '../ops/metrics.js';

/** The duration of every answered request, by its route's template. With METRICS=off no hook at all: a request pays nothing for metrics. */
export const requestMetrics = fp<{ metrics: ServerMetrics }>(
  async (app, { metrics }) => {
    if (!metrics.enabled) return;
    app.addHook('onResponse', (request, reply, done) => {
      // The route's template (`/issuer/passports/:id`), never the path asked: ids make no series.
      metrics.httpRequestDone(request.routeOptions.url ?? '', request.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
  },
  { name: 'passport-request-metrics', fastify: '5.x' },
);
