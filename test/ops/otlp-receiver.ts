/**
 * An OTLP/HTTP trace receiver for the tests of `npm start`'s traces: plain node:http, decoding
 * protobuf with the OTLP proto's field numbers, or OTLP/JSON.
 */
import { createServer, type Server } from 'node:http';
import protobuf from 'protobufjs';

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

export interface ReceivedSpan {
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
export async function startReceiver() {
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
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** Spans are sent every 100 ms rather than every 5 s, so the tests wait less. */
export const QUICK_EXPORT = { OTEL_BSP_SCHEDULE_DELAY: '100' };
