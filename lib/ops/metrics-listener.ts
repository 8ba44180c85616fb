/**
 * The Prometheus endpoint, on its own listener: loopback and a port of its own by default
 * (METRICS_HOST, METRICS_PORT), so that the public ports never serve it. A plain node:http server:
 * one path, no framework on a scrape's path.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigurationError } from '../config/runtime.js';
import type { PlatformMetrics } from './metrics.js';

/** Each part's default port, so that parts run apart on one machine do not collide (9464: OpenTelemetry's Prometheus port). */
export const DEFAULT_METRICS_PORTS = { stack: 9464, facade: 9464, gateway: 9465, trust: 9466, registry: 9467, issuer: 9468, archive: 9469 } as const;

export interface MetricsListener {
  /** http://host:port/metrics, or METRICS_OFF_URL when metrics are off and nothing listens. */
  url: string;
  stop(): Promise<void>;
}

/** What serveMetrics answers with METRICS=off: no listener, nothing to stop. */
export const METRICS_OFF_URL = 'off (METRICS=off)';

/**
 * Writes the parts as they are, never joined into one string (see PlatformMetrics.expositionParts), in
 * chunks (no content-length: counting the bytes of 254 KiB of strings cost 1.6 ms a scrape). Never
 * gzipped, although Prometheus asks for it: on loopback gzip cost 3.4 ms more of the server's CPU a
 * scrape at its fastest level, and the scrape took longer (docs/OPS-COST.md).
 */
function answer(request: IncomingMessage, response: ServerResponse, contentType: string, parts: readonly string[]): void {
  response.writeHead(200, { 'content-type': contentType });
  if (request.method === 'HEAD') {
    response.end();
    return;
  }
  // Corked: the parts leave in one writev.
  response.cork();
  for (const part of parts) response.write(part);
  response.end();
}

export async function serveMetrics(metrics: PlatformMetrics, listen: { host: string; port: number }): Promise<MetricsListener> {
  if (!metrics.enabled) return { url: METRICS_OFF_URL, stop: async () => {} };
  const server = createServer((request, response) => {
    if (request.url !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Only GET /metrics is served here.\n');
      return;
    }
    metrics.expositionParts().then(
      (parts) => answer(request, response, metrics.registry.contentType, parts),
      () => response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('The metrics could not be collected.\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: Error & { code?: string }) =>
      reject(error.code === 'EADDRINUSE' ? new ConfigurationError(`the metrics port ${listen.host}:${listen.port} is in use; set METRICS_PORT to another (0 takes a free one).`) : error),
    );
    server.listen(listen.port, listen.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  return {
    url: `http://${host}:${port}/metrics`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
