/**
 * Tracing costs nothing when the OTEL_* variables do not turn it on: no tracer, so no hooks or
 * spans, and none of the SDK's modules loaded. The same process then turns it on, which does load
 * them: the check would see a load that happened.
 */
import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import { serverTracer, shutDownTracing, tracingEnabled } from '../../lib/ops/tracing.js';

// Only tracing loads these; @opentelemetry/resources and core also come with @apollo/gateway, which other files of a worker load.
const SDK_PACKAGES = ['sdk-trace-base', 'exporter-trace-otlp-proto', 'exporter-trace-otlp-http', 'context-async-hooks'];
const loadedSdk = () => Object.keys(createRequire(import.meta.url).cache).filter((file) => SDK_PACKAGES.some((name) => file.includes(`/node_modules/@opentelemetry/${name}/`)));

describe('tracing off unless the standard variables turn it on', () => {
  afterAll(shutDownTracing);

  it('reads only an OTLP endpoint as turning it on, and OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none as turning it off', () => {
    expect(tracingEnabled({})).toBe(false);
    expect(tracingEnabled({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });

  it('gives no tracer and loads no SDK module when off; loads them when on', () => {
    expect(serverTracer('facade', {})).toBeUndefined();
    expect(loadedSdk()).toEqual([]);
    // An endpoint nothing listens on: nothing is sent before the provider is shut down.
    expect(serverTracer('facade', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBeDefined();
    expect(loadedSdk().length).toBeGreaterThan(0);
  });
});
