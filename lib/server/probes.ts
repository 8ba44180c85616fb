/**
 * Liveness and readiness probes, a server's edge feature: `/livez` and `/readyz` on its public port,
 * beside the specification's signed `/healthz` (docs/OPERATIONS.md, "Probes").
 */
import fp from 'fastify-plugin';
import type { ServerName } from '../config/services.js';
import { PROBLEM_MEDIA_TYPE } from '../http/request-problem.js';
import type { ServerMetrics } from '../ops/metrics.js';
import { unmetReadiness, type Operations, type ReadinessCheck } from '../ops/operations.js';
import { problem } from '../problem.js';

const LIVE = Buffer.from('{"status":"live"}');

export interface ProbeOptions {
  server: ServerName;
  operations: Operations;
  metrics: ServerMetrics;
  /** The server's readiness conditions, by the names its probe reports. */
  checks: Record<string, ReadinessCheck>;
  /** More the probe reports, ready or not. */
  detail?: () => Record<string, unknown>;
}

export const probes = fp<ProbeOptions>(
  async (app, { server, operations, metrics, checks, detail }) => {
    const probe = { schema: { hide: true } as never };
    app.get('/livez', probe, async (_request, reply) => reply.type('application/json').send(LIVE));
    app.get('/readyz', probe, async (_request, reply) => {
      const unmet = operations.draining ? { shutdown: 'the process is shutting down' } : await unmetReadiness(checks);
      const failed = Object.keys(unmet);
      metrics.readinessProbed(Object.keys(checks), unmet);
      // Buffers, so that Fastify adds no charset to the media types.
      if (failed.length === 0) return reply.type('application/json').send(Buffer.from(JSON.stringify({ status: 'ready', server, checks: Object.keys(checks), ...detail?.() })));
      const details = problem(503, 'NOT_READY', `The ${server} is not ready: ${failed.map((name) => `${name} (${unmet[name]})`).join(', ')}.`, { server, unmet, ...detail?.() });
      return reply
        .code(503)
        .type(PROBLEM_MEDIA_TYPE)
        .header('cache-control', 'no-store')
        .send(Buffer.from(JSON.stringify(details)));
    });
  },
  { name: 'passport-probes', fastify: '5.x' },
);
