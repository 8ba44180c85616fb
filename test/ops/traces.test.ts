/**
 * Traces end to end: the platform as a child process exports to an OTLP/HTTP receiver started here
 * (plain node:http, decoding protobuf with the OTLP proto's field numbers, or OTLP/JSON), and one
 * `POST /issuer/passports/{id}/events` sent with a `traceparent` yields one trace across the facade,
 * the gateway and the subgraphs, each span's parent in the trace or the caller's span.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/database.js';
import { START_TIMEOUT_MS, startPlatformProcess, type PlatformProcess } from './platform-process.js';

/** The part of opentelemetry/proto/collector/trace/v1 and trace/v1 read here, with the proto's own field numbers. */
const OTLP_TRACES = protobuf
  .parse(`
  syntax = "proto3";
  message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
  message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
  message Resource { repeated KeyValue attributes = 1; }
  message ScopeSpans { repeated Span spans = 2; }
  message Span { bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5; int32 kind = 6; repeated KeyValue attributes = 9; }
  message KeyValue { string key = 1; AnyValue value = 2; }
  message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
`)
  .root.lookupType('ExportTraceServiceRequest');

interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
}

type Attribute = { key: string; value?: { stringValue?: string; boolValue?: boolean; intValue?: unknown; doubleValue?: number } };
const attributesOf = (list: Attribute[] = []) =>
  Object.fromEntries(list.map(({ key, value = {} }) => [key, value.stringValue ?? value.boolValue ?? (value.intValue === undefined ? value.doubleValue : Number(value.intValue))]));
const hex = (bytes: Uint8Array | string | undefined) => (typeof bytes === 'string' ? bytes : Buffer.from(bytes ?? []).toString('hex'));

/** An export request's spans, from either encoding (protobuf bytes are hex in OTLP/JSON). */
function spansOf(request: any): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans: any) => {
    const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope: any) =>
      (scope.spans ?? []).map((span: any) => ({
        service,
        traceId: hex(span.traceId),
        spanId: hex(span.spanId),
        parentSpanId: hex(span.parentSpanId),
        name: span.name,
        attributes: attributesOf(span.attributes),
      })),
    );
  });
}

/** An OTLP/HTTP trace receiver: every span it is sent, and the content types it was sent as. */
async function startReceiver() {
  const spans: ReceivedSpan[] = [];
  const contentTypes = new Set<string>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const type = request.headers['content-type'] ?? '';
      contentTypes.add(type);
      if (request.url !== '/v1/traces') return void response.writeHead(404).end();
      const decoded = type.startsWith('application/x-protobuf') ? OTLP_TRACES.toObject(OTLP_TRACES.decode(body), { longs: String }) : JSON.parse(body.toString('utf8'));
      spans.push(...spansOf(decoded));
      response.writeHead(200, { 'content-type': type }).end(type.startsWith('application/json') ? '{}' : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { endpoint: `http://127.0.0.1:${port}`, spans, contentTypes, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const WRITER = `writer-${randomBytes(12).toString('hex')}`;
const ADMIN = `admin-${randomBytes(12).toString('hex')}`;

describe.each([
  ['http/protobuf', 'application/x-protobuf'],
  ['http/json', 'application/json'],
])('traces over OTLP %s', (protocol, contentType) => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let platform: PlatformProcess;

  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await startPlatformProcess({
      DATABASE_URL: await createTestDatabase(),
      PASSPORT_WRITER_TOKEN: WRITER,
      PASSPORT_ADMIN_TOKEN: ADMIN,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      // Spans are sent every 100 ms rather than every 5 s, so the test waits less.
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${platform.origin}${path}`, { method: 'POST', headers: { authorization: `Bearer ${WRITER}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  it('joins the caller’s trace across the facade, the gateway and the subgraphs, every parent accounted for', async () => {
    const schema = { type: 'object', properties: { chemistry: { enum: ['LFP', 'NMC'] } }, required: ['chemistry'] };
    expect((await post('/registry/', { kind: 'model', id: 'traced-model', body: { title: 'traced', schema } })).status).toBe(201);
    const created = await post('/issuer/passports', {
      identity: `https://id.gs1.org/01/09520123456788/21/TRACE-${randomBytes(4).toString('hex')}`,
      type_ref: { id: 'traced-model', version: 1 },
      config_vector: { chemistry: 'LFP' },
    });
    expect(created.status).toBe(201);
    const { passport_id } = (await created.json()) as { passport_id: string };

    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const appended = await post(
      `/issuer/passports/${passport_id}/events`,
      { type: 'activated', payload: { placed_on_market_at: '2025-02-01T00:00:00Z' } },
      { traceparent: `00-${traceId}-${callerSpanId}-01` },
    );
    expect(appended.status).toBe(201);

    const inTrace = () => receiver.spans.filter((span) => span.traceId === traceId);
    const services = () => new Set(inTrace().map((span) => span.service));
    await expect.poll(() => [...services()].sort(), { timeout: 15_000, interval: 100 }).toEqual(expect.arrayContaining(['passport-facade', 'passport-gateway', 'passport-issuer']));
    // Wait for the last batch: the facade's server span ends last.
    await expect.poll(() => inTrace().some((span) => span.service === 'passport-facade' && span.parentSpanId === callerSpanId), { timeout: 15_000, interval: 100 }).toBe(true);
    const spans = inTrace();

    expect(receiver.contentTypes).toEqual(new Set([contentType]));
    const ids = new Set(spans.map((span) => span.spanId));
    for (const span of spans) expect(span.parentSpanId === callerSpanId || ids.has(span.parentSpanId), `${span.service} ${span.name} has parent ${span.parentSpanId || '(none)'}`).toBe(true);

    const named = (service: string) => spans.filter((span) => span.service === service).map((span) => span.name);
    const root = spans.find((span) => span.parentSpanId === callerSpanId)!;
    expect(root).toMatchObject({
      service: 'passport-facade',
      name: 'POST /issuer/passports/:id/events',
      attributes: { 'http.route': '/issuer/passports/:id/events', 'http.response.status_code': 201 },
    });
    expect(named('passport-gateway')).toEqual(expect.arrayContaining(['POST /graphql', 'graphql.parse', 'graphql.validate', 'gateway.plan', 'gateway.fetch', 'POST']));
    expect(named('passport-issuer')).toEqual(expect.arrayContaining(['POST *', 'graphql.parse', 'graphql.validate', 'graphql.execute', 'INSERT', 'SELECT']));

    // Each server span is a child of a span of its caller's service: the facade's call, a gateway fetch.
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const issuerServer = spans.find((span) => span.service === 'passport-issuer' && span.name === 'POST *')!;
    expect(byId.get(issuerServer.parentSpanId)?.service).toBe('passport-gateway');
    const gatewayServers = spans.filter((span) => span.service === 'passport-gateway' && span.name === 'POST /graphql');
    expect(gatewayServers.some((span) => byId.get(span.parentSpanId)?.service === 'passport-facade')).toBe(true);

    // Nothing a client sent as a credential is recorded.
    expect(JSON.stringify(spans)).not.toContain(WRITER);
  }, 60_000);

  it('calls made back through the gateway by the issuer carry its trace', async () => {
    // Creating a passport reads its registry model through the gateway (lib/graphql/gateway-client.ts).
    const traceId = randomBytes(16).toString('hex');
    const created = await post(
      '/issuer/passports',
      { identity: `https://id.gs1.org/01/09520123456788/21/TRACE-${randomBytes(4).toString('hex')}`, type_ref: { id: 'traced-model', version: 1 }, config_vector: { chemistry: 'NMC' } },
      { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    );
    expect(created.status).toBe(201);
    const byId = () => new Map(receiver.spans.filter((span) => span.traceId === traceId).map((span) => [span.spanId, span]));
    const calledBack = () =>
      [...byId().values()].filter((span) => span.service === 'passport-gateway' && span.name === 'POST /graphql' && byId().get(span.parentSpanId)?.service === 'passport-issuer');
    await expect.poll(() => calledBack().length, { timeout: 15_000, interval: 100 }).toBeGreaterThan(0);
    // …and the registry answers that call under the same trace.
    await expect.poll(() => [...byId().values()].some((span) => span.service === 'passport-registry' && span.name === 'POST *'), { timeout: 15_000, interval: 100 }).toBe(true);
  }, 60_000);
});
