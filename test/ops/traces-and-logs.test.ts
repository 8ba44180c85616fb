/**
 * Traces and logs of `npm start` as an operator meets them, on two runs of the platform as a child
 * process, one per OTLP protocol. Each exports to an OTLP/HTTP receiver started here (plain node:http,
 * decoding protobuf with the OTLP proto's field numbers, or OTLP/JSON), and one
 * `POST /issuer/passports/{id}/events` sent with a `traceparent` yields one trace across the facade,
 * the gateway and the subgraphs, each span's parent in the trace or the caller's span.
 *
 * The http/protobuf run is also the one whose logs are read (one start of the whole platform for
 * both): it starts with recognisable secrets planted (both tokens, a database password, the
 * gateway's subgraph secret, the key-encryption key), is driven through successes, refusals and
 * failures, then every line it wrote is scanned for those secrets, and its JSON lines are checked
 * for the fields they promise. (A start that fails on a wrong database password names neither it
 * nor a token: test/first-contact/start.test.ts, on its run of that start.)
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { collector } from '../gateway/live-support.js';
import { objectEvent } from '../issuer/support.js';
import { createTestDatabase, sql } from '../support/database.js';
import { freePort } from '../support/free-port.js';
import { QUICK_EXPORT, startReceiver, type Receiver } from './otlp-receiver.js';
import { START_TIMEOUT_MS, startPlatformProcess, type PlatformProcess } from './platform-process.js';

const secret = (label: string) => `${label}-${randomBytes(16).toString('hex')}`;
const ADMIN = secret('admin');
const WRITER = secret('writer');
const WRONG_TOKEN = secret('not-a-token');
const SUBGRAPH_SECRET = secret('subgraph');
const DB_PASSWORD = secret('dbpass');
const DB_USER = `log_${randomBytes(4).toString('hex')}`;

/** Every form a key's bytes could be written in. */
const encodings = (bytes: Buffer) => [bytes.toString('base64url'), bytes.toString('base64'), bytes.toString('hex')];

function scanForSecrets(lines: readonly { text: string }[], secrets: readonly string[]) {
  const found = lines.flatMap(({ text }) => secrets.filter((value) => text.includes(value)).map((value) => `${value.slice(0, 12)}… in ${text.slice(0, 200)}`));
  expect(found).toEqual([]);
}

/**
 * Appends through `append`, each with a traceparent of a new trace, until one is delivered to `got`
 * through its notice, as `service`'s span `deliver passportEvents` (the first, unless the subscription
 * was still opening: an append made before is delivered by a read no append woke); that trace's spans.
 */
async function tracedDelivery(receiver: Receiver, service: string, append: (headers: Record<string, string>) => Promise<Response>, got: { until(count: number): Promise<void> }) {
  let traceId = '';
  const inTrace = () => receiver.spans.filter((span) => span.traceId === traceId);
  const delivery = () => inTrace().find((span) => span.service === service && span.name === 'deliver passportEvents');
  for (let appended = 1; appended <= 5 && !delivery(); appended += 1) {
    traceId = randomBytes(16).toString('hex');
    expect((await append({ traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` })).status).toBe(201);
    await got.until(appended);
    for (const until = Date.now() + 3_000; !delivery() && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(delivery()).toBeDefined();
  return { inTrace, delivery };
}

type Post = (path: string, body: unknown, headers?: Record<string, string>) => Promise<Response>;

/** POSTs to a platform with the writer's token. */
const poster =
  (origin: () => string): Post =>
  (path, body, headers = {}) =>
    fetch(`${origin()}${path}`, { method: 'POST', headers: { authorization: `Bearer ${WRITER}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

/**
 * A passport of a new registry model `model`, created with `headers`: the issuer has not met the
 * model version, so it reads it through the gateway (lib/graphql/gateway-client.ts; a version met
 * before is checked by the validator kept from then).
 */
async function passportOfNewModel(post: Post, model: string, headers: Record<string, string> = {}): Promise<Response> {
  const schema = { type: 'object', properties: { chemistry: { enum: ['LFP', 'NMC'] } }, required: ['chemistry'] };
  expect((await post('/registry/', { kind: 'model', id: model, body: { title: model, schema } })).status).toBe(201);
  const identity = `https://id.gs1.org/01/09520123456788/21/TRACE-${randomBytes(4).toString('hex')}`;
  return post('/issuer/passports', { identity, type_ref: { id: model, version: 1 }, config_vector: { chemistry: 'LFP' } }, headers);
}

/** The trace checks, the same on either protocol's platform. */
function traceChecks(contentType: string, running: () => { platform: PlatformProcess; receiver: Receiver }) {
  const post = poster(() => running().platform.origin);

  it('joins the caller’s trace across the facade, the gateway and the subgraphs, every parent accounted for', async () => {
    const { receiver } = running();
    const created = await passportOfNewModel(post, 'traced-model');
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
    // With tracing on, the admin log's pending entry rides in OpenTelemetry's context (lib/audit/admin-log.ts):
    // the sampled write's entry is still written in its transaction, outcome ok.
    const log = await fetch(`${running().platform.origin}/issuer/admin/log?limit=20`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const { entries } = (await log.json()) as { entries: { action: string; outcome: string }[] };
    expect(entries.filter((entry) => entry.action === 'appendPassportEvent').map((entry) => entry.outcome)).toEqual(['ok']);

    const inTrace = () => receiver.spans.filter((span) => span.traceId === traceId);
    const services = () => new Set(inTrace().map((span) => span.service));
    await expect.poll(() => [...services()].sort(), { timeout: 15_000, interval: 100 }).toEqual(expect.arrayContaining(['passport-facade', 'passport-gateway', 'passport-issuer']));
    // Each server exports its own batches on its own schedule: wait until the facade's server span
    // (it ends last) has come and every span's parent has too (or the wait ends, naming those without).
    const orphans = () => {
      const ids = new Set(inTrace().map((span) => span.spanId));
      return inTrace()
        .filter((span) => span.parentSpanId !== callerSpanId && !ids.has(span.parentSpanId))
        .map((span) => `${span.service} ${span.name} has parent ${span.parentSpanId || '(none)'}`);
    };
    await expect
      .poll(() => ({ root: inTrace().some((span) => span.service === 'passport-facade' && span.parentSpanId === callerSpanId), orphans: orphans() }), { timeout: 15_000, interval: 100 })
      .toEqual({ root: true, orphans: [] });
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
    const { receiver } = running();
    // Creating a passport of a model version the issuer has not met reads the model through the gateway.
    const traceId = randomBytes(16).toString('hex');
    const created = await passportOfNewModel(post, 'called-back-model', { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` });
    expect(created.status).toBe(201);
    const byId = () => new Map(receiver.spans.filter((span) => span.traceId === traceId).map((span) => [span.spanId, span]));
    const calledBack = () =>
      [...byId().values()].filter((span) => span.service === 'passport-gateway' && span.name === 'POST /graphql' && byId().get(span.parentSpanId)?.service === 'passport-issuer');
    await expect.poll(() => calledBack().length, { timeout: 15_000, interval: 100 }).toBeGreaterThan(0);
    // …and the registry answers that call under the same trace.
    await expect.poll(() => [...byId().values()].some((span) => span.service === 'passport-registry' && span.name === 'POST *'), { timeout: 15_000, interval: 100 }).toBe(true);
    // The registry's read of the model, outside a transaction (Prisma sends it with the pool's own query), has its SQL span.
    await expect.poll(() => [...byId().values()].some((span) => span.service === 'passport-registry' && span.name === 'SELECT'), { timeout: 15_000, interval: 100 }).toBe(true);
  }, 60_000);
}

/**
 * The http/json run, started as the file starts: its start overlaps the http/protobuf run's (and that
 * run's tests, which mostly wait for spans), where one after the other they took some 5 s more. It
 * is stopped at the file's end, whichever tests ran.
 */
let jsonRun: Promise<{ receiver: Receiver; platform: PlatformProcess }> | undefined;

async function startJsonRun() {
  const receiver = await startReceiver();
  try {
    const platform = await startPlatformProcess({
      DATABASE_URL: await createTestDatabase(),
      PASSPORT_WRITER_TOKEN: WRITER,
      PASSPORT_ADMIN_TOKEN: ADMIN,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      ...QUICK_EXPORT,
    });
    return { receiver, platform };
  } catch (error) {
    await receiver.close();
    throw error;
  }
}

beforeAll(() => {
  jsonRun = startJsonRun();
  // Its failure is met by the tests that await it.
  jsonRun.catch(() => undefined);
});
afterAll(async () => {
  const run = await jsonRun?.catch(() => undefined);
  await run?.platform.stop();
  await run?.receiver.close();
}, START_TIMEOUT_MS);

describe('npm start tracing over OTLP http/protobuf, its log lines JSON at info', () => {
  let receiver: Receiver;
  let platform: PlatformProcess;
  let databaseUrl: string;
  let gatewayPort: number;
  let issuerPort: number;
  let kekLines: string[] = [];

  beforeAll(async () => {
    // A role of its own, so that the database URL carries a password no other line has.
    const adminUrl = await createTestDatabase();
    await sql(adminUrl, `CREATE ROLE ${DB_USER} LOGIN SUPERUSER PASSWORD '${DB_PASSWORD}'`);
    const url = new URL(adminUrl);
    url.username = DB_USER;
    url.password = DB_PASSWORD;
    databaseUrl = url.toString();
    // Traces go to a receiver that takes them, so that request lines carry trace and span ids too.
    receiver = await startReceiver();
    [gatewayPort, issuerPort] = [await freePort(), await freePort()];
    platform = await startPlatformProcess({
      DATABASE_URL: databaseUrl,
      PASSPORT_ADMIN_TOKEN: ADMIN,
      PASSPORT_WRITER_TOKEN: WRITER,
      SUBGRAPH_SECRET,
      GATEWAY_PORT: String(gatewayPort),
      ISSUER_SUBGRAPH_PORT: String(issuerPort),
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      ...QUICK_EXPORT,
    });
    const kek = await readFile(join(platform.dataDir, 'data.kek'), 'utf8');
    kekLines = kek.split('\n').filter((line) => line && !line.startsWith('#'));
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
  });

  traceChecks('application/x-protobuf', () => ({ platform, receiver }));

  it('writes log lines that carry no secret, through successes, refusals and failures, and are JSON with request, trace and timing fields', async () => {
    const facade = (path: string, init: RequestInit = {}) => fetch(`${platform.origin}${path}`, init);
    const json = (token: string, body: string) => ({ method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', cookie: `session=${ADMIN}` }, body });
    const traceId = randomBytes(16).toString('hex');

    expect((await facade('/trust/healthz', { headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } })).status).toBe(200);
    expect((await facade('/issuer/passports', json(WRONG_TOKEN, '{}'))).status).toBe(401);
    expect((await facade('/registry/admin/seed', json(WRITER, '{}'))).status).toBe(403);
    // A body that carries secrets, malformed and well-formed: bodies are never logged.
    expect((await facade('/issuer/passports', json(WRITER, `{"identity": "${ADMIN}", `))).status).toBe(400);
    expect((await facade('/issuer/passports', json(WRITER, JSON.stringify({ identity: ADMIN, type_ref: { id: SUBGRAPH_SECRET, version: 1 }, config_vector: {} })))).status).toBeGreaterThanOrEqual(400);
    expect((await facade(`/issuer/passports/${randomBytes(8).toString('hex')}`)).status).toBe(404);
    expect((await facade('/registry/admin/log', { headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(200);
    // The gateway and a subgraph directly: a mutation with a wrong credential, a query with the admin's.
    const gateway = await fetch(`http://127.0.0.1:${gatewayPort}/graphql`, json(WRONG_TOKEN, JSON.stringify({ query: 'mutation { seedSampleRegister { count } }' })));
    expect(gateway.status).toBeLessThan(500);
    const subgraph = await fetch(`http://127.0.0.1:${issuerPort}/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', 'passport-gateway-credential': WRONG_TOKEN },
      body: JSON.stringify({ query: 'mutation { __typename }' }),
    });
    expect(subgraph.status).toBeGreaterThanOrEqual(400);
    // A request id the caller gives is kept; one that is not a plain token is replaced.
    expect((await facade('/trust/healthz', { headers: { 'x-request-id': 'caller-id-42' } })).status).toBe(200);
    expect((await facade('/trust/healthz', { headers: { 'x-request-id': `${WRITER} {"x":1}` } })).status).toBe(200);

    // A request's line is written when its answer has been sent; give the last one a moment.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const written = [...platform.lines];
    const keyForms = kekLines.flatMap((line) => encodings(Buffer.from(line, 'base64url')));
    expect(keyForms.length).toBeGreaterThan(0);
    scanForSecrets(written, [ADMIN, WRITER, WRONG_TOKEN, SUBGRAPH_SECRET, DB_PASSWORD, ...keyForms]);

    // Every line that is not the start banner's human text is one JSON object.
    const entries = written.filter(({ text }) => text.startsWith('{')).map(({ text }) => JSON.parse(text) as Record<string, any>);
    expect(entries.length).toBeGreaterThan(10);
    for (const entry of entries) {
      expect(entry.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).toContain(entry.level);
      expect(entry.service).toMatch(/^passport-(facade|gateway|trust|registry|issuer|archive)$/);
    }
    const requests = entries.filter((entry) => entry.msg === 'request' || entry.msg === 'request failed');
    for (const entry of requests) {
      expect(entry).toEqual(
        expect.objectContaining({
          request_id: expect.any(String),
          trace_id: expect.stringMatching(/^[\da-f]{32}$/),
          span_id: expect.stringMatching(/^[\da-f]{16}$/),
          method: expect.any(String),
          status: expect.any(Number),
          duration_ms: expect.any(Number),
        }),
      );
      expect(entry).toHaveProperty('route');
    }
    const facadeStatuses = requests.filter((entry) => entry.service === 'passport-facade').map((entry) => entry.status);
    expect(facadeStatuses).toEqual(expect.arrayContaining([200, 401, 403, 400, 404]));
    expect(new Set(requests.map((entry) => entry.service))).toEqual(
      expect.objectContaining(new Set(['passport-facade', 'passport-gateway', 'passport-issuer', 'passport-registry', 'passport-trust'])),
    );
    expect(requests.find((entry) => entry.status === 404)).toMatchObject({ route: '/issuer/passports/:id', method: 'GET' });
    // One trace id from the caller's traceparent, through the facade and on to the gateway and the trust subgraph.
    expect(new Set(requests.filter((entry) => entry.trace_id === traceId).map((entry) => entry.service))).toEqual(new Set(['passport-facade', 'passport-gateway', 'passport-trust']));
    // …and so is a request id the caller gives, passed on with the request.
    expect(
      requests
        .filter((entry) => entry.request_id === 'caller-id-42')
        .map((entry) => entry.service)
        .sort(),
    ).toEqual(['passport-facade', 'passport-gateway', 'passport-trust']);
    // Nor do the spans it exported.
    scanForSecrets([{ text: JSON.stringify(receiver.spans) }], [ADMIN, WRITER, WRONG_TOKEN, SUBGRAPH_SECRET, DB_PASSWORD, ...keyForms]);
  });

  it('traces each live delivery in the trace of the append that woke it: the gateway’s delivery a child of the issuer’s append, the delivery’s read its child', async () => {
    const post = poster(() => platform.origin);
    const created = await passportOfNewModel(post, 'live-traced-model');
    const { passport_id } = (await created.json()) as { passport_id: string };
    const append = (headers: Record<string, string> = {}) => post(`/issuer/passports/${passport_id}/events`, { type: 'ObjectEvent', payload: objectEvent() }, headers);

    const client = createWsClient({ url: `ws://127.0.0.1:${gatewayPort}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${WRITER}` }, retryAttempts: 0 });
    const got = collector<{ seq: number; type: string }>('passportEvents');
    const dispose = client.subscribe({ query: 'subscription($id: ID!) { passportEvents(passportId: $id) { seq type } }', variables: { id: passport_id } }, got.sink);
    try {
      // The gateway opens its stream of the issuer's notices with the first subscription: an append
      // notified before it is open is delivered after the stream's resync, in no append's trace.
      const { inTrace, delivery } = await tracedDelivery(receiver, 'passport-gateway', append, got);
      // Its parent is the issuer's span that appended (the server span of the append's request), in the caller's trace.
      const byId = () => new Map(inTrace().map((span) => [span.spanId, span]));
      await expect.poll(() => byId().get(delivery()!.parentSpanId), { timeout: 15_000, interval: 100 }).toMatchObject({ service: 'passport-issuer', name: 'POST *' });
      expect(delivery()!.attributes).toMatchObject({ 'graphql.field.name': 'passportEvents' });
      // The delivery's read runs under it: the gateway's fetch, and the issuer answering it, in the same trace.
      const under = (span: { parentSpanId: string }, ancestor: string): boolean => {
        const parent = byId().get(span.parentSpanId);
        return parent !== undefined && (parent.spanId === ancestor || under(parent, ancestor));
      };
      await expect.poll(() => inTrace().some((span) => span.service === 'passport-issuer' && span.name === 'POST *' && under(span, delivery()!.spanId)), { timeout: 15_000, interval: 100 }).toBe(true);
    } finally {
      dispose();
      await client.dispose();
    }
  });

  it("traces each delivery of a subgraph's own subscription (GraphQL over SSE on its port, as Hive Gateway subscribes) in the append's trace, and logs a refused stream as a refused request", async () => {
    const post = poster(() => platform.origin);
    const created = await passportOfNewModel(post, 'live-traced-subgraph-model');
    const { passport_id } = (await created.json()) as { passport_id: string };
    const client = createSseClient({ url: `http://127.0.0.1:${issuerPort}/`, singleConnection: false, retryAttempts: 0, headers: { authorization: `Bearer ${WRITER}` } });
    const got = collector<{ seq: number }>('passportEvents');
    const dispose = client.subscribe({ query: 'subscription($id: ID!) { passportEvents(passportId: $id) { seq } }', variables: { id: passport_id } }, got.sink);
    try {
      const append = (headers: Record<string, string>) => post(`/issuer/passports/${passport_id}/events`, { type: 'ObjectEvent', payload: objectEvent() }, headers);
      const { inTrace, delivery } = await tracedDelivery(receiver, 'passport-issuer', append, got);
      // Its parent is the issuer's span that appended (the server span of the append's request).
      const byId = new Map(inTrace().map((span) => [span.spanId, span]));
      expect(byId.get(delivery()!.parentSpanId)).toMatchObject({ service: 'passport-issuer', name: 'POST *' });
    } finally {
      dispose();
      client.dispose();
    }

    const refused = await fetch(`http://127.0.0.1:${issuerPort}/?query=${encodeURIComponent(`subscription { passportEvents(passportId: "${passport_id}") { seq } }`)}`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${WRONG_TOKEN}`, 'x-request-id': 'refused-stream-1' },
    });
    expect(refused.status).toBe(401);
    const logged = () =>
      platform.lines
        .filter(({ text }) => text.startsWith('{'))
        .map(({ text }) => JSON.parse(text) as Record<string, unknown>)
        .find((entry) => entry.request_id === 'refused-stream-1');
    await expect.poll(logged, { timeout: 2_000, interval: 50 }).toMatchObject({ service: 'passport-issuer', msg: 'request', method: 'GET', status: 401 });
  });

  // Moved here from test/first-contact/start.test.ts, whose other starts are embedded: this platform is that start already.
  it('is an npm start with DATABASE_URL, configured tokens and a data folder that did not exist yet, which it made; it runs, and ends with 0 on SIGTERM', async () => {
    expect(platform.lines.map(({ text }) => text)).toContain('Passport services are running.');
    expect(existsSync(join(platform.dataDir, 'data', 'supergraph.graphql'))).toBe(true);
    expect(await platform.stop()).toBe(0);
  });
});

describe('npm start tracing over OTLP http/json', () => {
  let running: { receiver: Receiver; platform: PlatformProcess };

  beforeAll(async () => {
    running = await jsonRun!;
  }, START_TIMEOUT_MS);

  traceChecks('application/json', () => running);
});
