/**
 * On the public ports a caller's `traceparent` keeps its trace id but not its say over sampling: at
 * `OTEL_TRACES_SAMPLER=parentbased_traceidratio` and a ratio of 0.5, requests flagged `-01` are not
 * all sampled and requests flagged `-00` are not all left out, at the facade and at the gateway alike,
 * while between the platform's own servers the caller's decision still holds (a request sampled at
 * the facade is sampled at the gateway and the subgraph, one that is not is not). `npm start` runs as
 * a child process exporting to an OTLP receiver started here.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/database.js';
import { freePort } from '../support/free-port.js';
import { QUICK_EXPORT, startReceiver, type Receiver } from './otlp-receiver.js';
import { START_TIMEOUT_MS, startPlatformProcess, type PlatformProcess } from './platform-process.js';

/** Requests of each flag at each port: at a ratio of 0.5, all or none of them sampled by chance is 2 in 10⁹. */
const REQUESTS = 30;
let receiver: Receiver;
let platform: PlatformProcess;
let gateway: string;

beforeAll(async () => {
  receiver = await startReceiver();
  const gatewayPort = await freePort();
  gateway = `http://127.0.0.1:${gatewayPort}/graphql`;
  platform = await startPlatformProcess({
    DATABASE_URL: await createTestDatabase(),
    GATEWAY_PORT: String(gatewayPort),
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.5',
    ...QUICK_EXPORT,
  });
}, START_TIMEOUT_MS);
afterAll(async () => {
  await platform?.stop();
  await receiver?.close();
});

/** Sends `REQUESTS` requests, each with a caller's traceparent of its own trace id and the flag; their trace ids and the callers' span ids. */
async function flagged(flags: '00' | '01', send: (traceparent: string) => Promise<Response>) {
  const callers = new Map<string, string>();
  for (let index = 0; index < REQUESTS; index += 1) {
    const [traceId, spanId] = [randomBytes(16).toString('hex'), randomBytes(8).toString('hex')];
    callers.set(traceId, spanId);
    expect((await send(`00-${traceId}-${spanId}-${flags}`)).status).toBe(200);
  }
  return callers;
}

/** The server spans of a service received for each of the traces, once the exports have settled. */
async function serverSpans(traces: ReadonlyMap<string, string>, service: string) {
  let count = -1;
  // Each server exports every 100 ms: settled when nothing more came for a second.
  for (let settled = 0; settled < 10; settled += 1) {
    const now = receiver.spans.length;
    if (now !== count) settled = 0;
    count = now;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return receiver.spans.filter((span) => traces.has(span.traceId) && span.service === service && /^(GET|POST) /.test(span.name));
}

describe('a caller’s traceparent on a public port', () => {
  it('at the facade keeps its trace id, but its flag decides neither way; the facade’s decision holds at the gateway and the subgraph', async () => {
    const health = (traceparent: string) => fetch(`${platform.origin}/trust/healthz`, { headers: { traceparent } });
    const sampledFlag = await flagged('01', health);
    const unsampledFlag = await flagged('00', health);
    const all = new Map([...sampledFlag, ...unsampledFlag]);
    const facade = await serverSpans(all, 'passport-facade');
    const counted = (callers: Map<string, string>) => facade.filter((span) => callers.has(span.traceId)).length;
    expect(counted(sampledFlag)).toBeGreaterThan(0);
    expect(counted(sampledFlag)).toBeLessThan(REQUESTS);
    expect(counted(unsampledFlag)).toBeGreaterThan(0);
    expect(counted(unsampledFlag)).toBeLessThan(REQUESTS);
    // A sampled request's server span is the caller's span's child, in the caller's trace.
    for (const span of facade) expect(span.parentSpanId).toBe(all.get(span.traceId));
    const traced = (service: string) => new Set(receiver.spans.filter((span) => all.has(span.traceId) && span.service === service).map((span) => span.traceId));
    const sampledHere = new Set(facade.map((span) => span.traceId));
    expect(traced('passport-gateway')).toEqual(sampledHere);
    expect(traced('passport-trust')).toEqual(sampledHere);
  }, 60_000);

  it('at the gateway is sampled at the platform’s ratio too', async () => {
    const query = (traceparent: string) => fetch(gateway, { method: 'POST', headers: { 'content-type': 'application/json', traceparent }, body: JSON.stringify({ query: '{ trust { discovery } }' }) });
    const sampledFlag = await flagged('01', query);
    const unsampledFlag = await flagged('00', query);
    const spans = await serverSpans(new Map([...sampledFlag, ...unsampledFlag]), 'passport-gateway');
    const counted = (callers: Map<string, string>) => new Set(spans.filter((span) => callers.has(span.traceId)).map((span) => span.traceId)).size;
    expect([counted(sampledFlag), counted(unsampledFlag)].map((count) => count > 0 && count < REQUESTS)).toEqual([true, true]);
  }, 60_000);
});
