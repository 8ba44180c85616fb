/**
 * Logs as an operator reads them: the platform run as a child process (`npm start`'s entry point)
 * with recognisable secrets planted (both tokens, a database password, the gateway's subgraph
 * secret, the key-encryption key), driven through successes, refusals and failures, then every line
 * it wrote is scanned for those secrets, and its JSON lines are checked for the fields they promise.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, sql } from '../support/database.js';
import { freePort } from '../support/free-port.js';
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

describe('log lines', () => {
  let platform: PlatformProcess;
  let databaseUrl: string;
  let gatewayPort: number;
  let issuerPort: number;
  let kekLines: string[] = [];
  const collector = createServer((request, response) => request.resume().on('end', () => response.writeHead(200).end()));

  beforeAll(async () => {
    // A role of its own, so that the database URL carries a password no other line has.
    const adminUrl = await createTestDatabase();
    await sql(adminUrl, `CREATE ROLE ${DB_USER} LOGIN SUPERUSER PASSWORD '${DB_PASSWORD}'`);
    const url = new URL(adminUrl);
    url.username = DB_USER;
    url.password = DB_PASSWORD;
    databaseUrl = url.toString();
    // Traces go to a collector that takes them, so that request lines carry trace and span ids.
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    [gatewayPort, issuerPort] = [await freePort(), await freePort()];
    platform = await startPlatformProcess({
      DATABASE_URL: databaseUrl,
      PASSPORT_ADMIN_TOKEN: ADMIN,
      PASSPORT_WRITER_TOKEN: WRITER,
      SUBGRAPH_SECRET,
      GATEWAY_PORT: String(gatewayPort),
      ISSUER_SUBGRAPH_PORT: String(issuerPort),
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as { port: number }).port}`,
    });
    const kek = await readFile(join(platform.dataDir, 'data.kek'), 'utf8');
    kekLines = kek.split('\n').filter((line) => line && !line.startsWith('#'));
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await platform?.stop();
    collector.close();
  });

  it('carry no secret, through successes, refusals and failures, and are JSON with request, trace and timing fields', async () => {
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
    expect(requests.filter((entry) => entry.request_id === 'caller-id-42')).toHaveLength(1);
  });

  // Moved here from test/first-contact/start.test.ts, whose other starts are embedded: this platform is that start already.
  it('come from an npm start with DATABASE_URL, configured tokens and a data folder that did not exist yet, which it made; it runs, and ends with 0 on SIGTERM', async () => {
    expect(platform.lines.map(({ text }) => text)).toContain('Passport services are running.');
    expect(existsSync(join(platform.dataDir, 'data', 'supergraph.graphql'))).toBe(true);
    expect(await platform.stop()).toBe(0);
  });

  it(
    'do not name the database password when a start fails on it',
    async () => {
      const wrong = new URL(databaseUrl);
      wrong.password = secret('wrong-dbpass');
      const failed = await startPlatformProcess({ DATABASE_URL: wrong.toString(), PASSPORT_ADMIN_TOKEN: ADMIN, PASSPORT_WRITER_TOKEN: WRITER }).then(
        async (started) => ({ started, lines: started.lines }),
        (error: Error & { lines?: PlatformProcess['lines'] }) => ({ started: undefined, lines: error.lines ?? [] }),
      );
      await failed.started?.stop();
      expect(failed.started).toBeUndefined();
      expect(failed.lines.map(({ text }) => text).join('\n')).toMatch(/Cannot start: .*refused the user name or password/);
      scanForSecrets(failed.lines, [wrong.password, ADMIN, WRITER]);
    },
    START_TIMEOUT_MS,
  );
});
