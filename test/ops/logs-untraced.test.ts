/**
 * The logs of `npm start` with tracing off, as an operator reads them: one request's lines on the
 * facade, the gateway and the subgraph it reaches share its request id; and a request that comes on a
 * kept-alive connection while the platform stops on SIGTERM is refused as every other refusal is
 * (problem+json, `connection: close`), and its line names its route. No line holds a restricted
 * attribute value (issue 44 item 4), whoever read it.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batteryPassportSchema } from '../../subgraphs/registry/domain/seed/index.js';
import { createClient as createWsClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createTestDatabase } from '../support/database.js';
import { freePort } from '../support/free-port.js';
import { answersOf, refusesConnections } from '../support/raw-http.js';
import { START_TIMEOUT_MS, startPlatformProcess, type PlatformProcess } from './platform-process.js';

const WRITER = `writer-${randomBytes(16).toString('hex')}`;
const ADMIN = `admin-${randomBytes(16).toString('hex')}`;
let platform: PlatformProcess;
let stopped: Promise<number | null> | undefined;
let gatewayPort: number;

beforeAll(async () => {
  gatewayPort = await freePort();
  platform = await startPlatformProcess({
    DATABASE_URL: await createTestDatabase(),
    GATEWAY_PORT: String(gatewayPort),
    // One subscription a connection, so that a second is refused.
    GRAPHQL_MAX_SUBSCRIPTIONS_PER_CONNECTION: '1',
    PASSPORT_WRITER_TOKEN: WRITER,
    PASSPORT_ADMIN_TOKEN: ADMIN,
    LOG_LEVEL: 'info',
    // The request kept open below is given time to finish.
    SHUTDOWN_TIMEOUT_MS: '30000',
  });
}, START_TIMEOUT_MS);
afterAll(async () => {
  await (stopped ?? platform?.stop());
});

type Line = Record<string, any>;
const jsonLines = (): Line[] => platform.lines.filter(({ text }) => text.startsWith('{')).map(({ text }) => JSON.parse(text) as Line);

describe('npm start with tracing off, its log lines JSON at info', () => {
  it('writes the lines of one REST request on the facade, the gateway and the subgraph with one request id', async () => {
    const path = `/issuer/passports/${randomBytes(8).toString('hex')}`;
    expect((await fetch(`${platform.origin}${path}`)).status).toBe(404);
    // A request's line is written once its answer is sent.
    await expect.poll(() => jsonLines().some((line) => line.msg === 'request' && line.path === path), { timeout: 5_000 }).toBe(true);
    const id = jsonLines().find((line) => line.msg === 'request' && line.path === path)!.request_id as string;
    await expect
      .poll(
        () =>
          [
            ...new Set(
              jsonLines()
                .filter((line) => line.request_id === id && line.msg === 'request')
                .map((line) => line.service),
            ),
          ].sort(),
        { timeout: 5_000 },
      )
      .toEqual(['passport-facade', 'passport-gateway', 'passport-issuer']);
  });

  it('holds no restricted attribute value (issue 44 item 4) in any line, whoever read it', async () => {
    // The shipped example profile on the battery model: state of health and the conformity URL are restricted.
    const profile = JSON.parse(readFileSync(new URL('../../docs/examples/battery-passport-profile.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    const example = (batteryPassportSchema.examples as Record<string, any>[])[0]!;
    const marks = [String(97.3159), `https://voltara.example/doc/restricted-${randomBytes(6).toString('hex')}.pdf`];
    const configVector = { ...example, state_of_health: { ...example.state_of_health, soh_pct: 97.3159 }, declaration_of_conformity_url: marks[1] };
    const call = async (path: string, token?: string, body?: unknown) => {
      const response = await fetch(`${platform.origin}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, text: await response.text() };
    };
    expect((await call('/registry/', WRITER, { kind: 'model', id: 'logged-battery', body: { title: 'Battery passport', schema: batteryPassportSchema } })).status).toBe(201);
    expect((await call('/issuer/admin/profiles', ADMIN, profile)).status).toBe(201);
    expect((await call('/issuer/admin/applicability', ADMIN, { model_id: 'logged-battery', profile_id: profile.profile_id })).status).toBe(201);
    const created = await call('/issuer/passports', WRITER, {
      identity: 'https://id.gs1.org/01/09520123456788/21/LOGGED-1',
      type_ref: { id: 'logged-battery', version: 1 },
      config_vector: configVector,
    });
    expect(created.status, created.text).toBe(201);
    const id = JSON.parse(created.text).passport_id as string;
    // The owner reads every value; an anonymous caller none.
    for (const token of [WRITER, ADMIN, undefined]) {
      for (const path of [`/issuer/passports/${id}`, `/issuer/passports/${id}/credential`]) expect((await call(path, token)).status).toBe(200);
    }
    expect(marks.every((mark) => created.text.includes(mark))).toBe(true);
    await expect.poll(() => jsonLines().filter((line) => line.msg === 'request' && String(line.path).includes(id)).length, { timeout: 5_000 }).toBeGreaterThanOrEqual(6);
    const logged = platform.lines.map((line) => line.text).join('\n');
    for (const mark of marks) expect(logged.includes(mark), mark).toBe(false);
  });

  it('logs refused live connections and subscriptions as refused requests: the close code or status, and the code', async () => {
    const graphql = `http://127.0.0.1:${gatewayPort}/graphql`;
    const REVOCATIONS = 'subscription { trustRevocationsRecorded { cursor } }';
    // A bad token over graphql-ws: closed 4401.
    const refused = await new Promise<number>((resolve) => {
      createWsClient({
        url: graphql.replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        lazy: false,
        retryAttempts: 0,
        onNonLazyError: () => {},
        connectionParams: { authorization: 'Bearer not-a-token-of-this-platform' },
        on: { closed: (event) => resolve((event as { code: number }).code) },
      });
    });
    expect(refused).toBe(4401);
    // A second subscription on one connection, over the limit of one.
    const client = createWsClient({ url: graphql.replace(/^http/, 'ws'), webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { authorization: `Bearer ${WRITER}` } });
    try {
      client.subscribe({ query: REVOCATIONS }, { next: () => {}, error: () => {}, complete: () => {} });
      const second = await new Promise<unknown>((resolve) => client.subscribe({ query: REVOCATIONS }, { next: () => {}, error: resolve, complete: () => resolve('complete') }));
      expect(JSON.stringify(second)).toContain('SUBSCRIPTION_LIMIT');
    } finally {
      await client.dispose();
    }
    // A bad token over GraphQL over SSE: 401.
    const sse = await fetch(graphql, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: 'Bearer not-a-token-of-this-platform' },
      body: JSON.stringify({ query: REVOCATIONS }),
    });
    expect(sse.status).toBe(401);

    const refusals = () =>
      jsonLines()
        .filter((line) => line.service === 'passport-gateway' && line.msg === 'request' && line.path === '/graphql' && line.status !== 200)
        .map(({ method, route, status, close_code, code }) => ({ method, route, status, ...(close_code ? { close_code } : {}), ...(code ? { code } : {}) }));
    await expect.poll(refusals, { timeout: 5_000 }).toEqual(
      expect.arrayContaining([
        { method: 'GET', route: '/graphql', status: 101, close_code: 4401, code: 'INVALID_TOKEN' },
        { method: 'GET', route: '/graphql', status: 101, code: 'SUBSCRIPTION_LIMIT' },
        { method: 'POST', route: '/graphql', status: 401 },
      ]),
    );
  });

  it('answers a kept-alive request during SIGTERM with a problem and connection: close, and logs it with its route', async () => {
    const port = Number(new URL(platform.origin).port);
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const answers = answersOf(socket);
    // A request in flight (its body not all sent) when the platform is told to stop: the facade waits for it.
    const body = '{}'.padEnd(40, ' ');
    socket.write(`POST /issuer/passports HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${WRITER}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n{`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    stopped = platform.stop();
    for (let waited = 0; !(await refusesConnections(port)); waited += 50) {
      if (waited > 20_000) throw new Error('the facade never closed its port');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The rest of the body, then another request on the same connection.
    const path = `/issuer/passports/${randomBytes(8).toString('hex')}`;
    socket.write(`${body.slice(1)}GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
    const [first, second] = await answers;
    expect(first!.status).toBe(400);
    expect(second).toMatchObject({ status: 503, headers: { 'content-type': 'application/problem+json', connection: 'close', 'retry-after': '1' } });
    expect(JSON.parse(second!.body)).toMatchObject({ status: 503, code: 'SHUTTING_DOWN', instance: path });
    expect(await stopped).toBe(0);
    expect(jsonLines().find((line) => line.path === path)).toMatchObject({ service: 'passport-facade', msg: 'request failed', route: '/issuer/passports/:id', status: 503 });
  }, 60_000);
});
