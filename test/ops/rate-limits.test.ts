/**
 * Rate limits as a client meets them (issue 45, item 4): a client over its role's quota is answered
 * 429 with Retry-After and the IETF draft's RateLimit and RateLimit-Policy fields, by the facade and
 * the gateway alike and for the two together; a second facade replica on the same database does not
 * give it a second quota; an anonymous flood of refused writes, once limited, costs the facade no
 * request to the gateway; and a facade whose database does not answer counts on its own (fails open,
 * per process) and answers, never 500. Loopback is counted here (RATE_LIMITS' `loopback=counted`):
 * by default the machine's own clients, these tests among them, are not.
 */
import { request } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRuntimeConfig } from '../../lib/config/runtime.js';
import { edgeOptions } from '../../lib/server/edge-options.js';
import { ROUTE_TABLES } from '../../rest-facade/routes/index.js';
import { startFacade, type RunningFacade } from '../../rest-facade/server.js';
import { LOOPBACK_PORTS_AT_LISTEN, startTestStack, testAccessTokens, TOKENS, type TestStack } from '../support/stack.js';

/** A window long enough that no test crosses its end but by the rarest chance (waitForRoom makes sure). */
const WINDOW = 3600;
const RATE_LIMITS = `anonymous=6/${WINDOW},reader=8/${WINDOW},writer=10/${WINDOW},admin=50/${WINDOW},loopback=counted`;

let platform: TestStack;
const replicas: { facade: RunningFacade; close(): Promise<void> }[] = [];

beforeAll(async () => {
  platform = await startTestStack({ env: { RATE_LIMITS } });
}, 60_000);
afterAll(async () => {
  for (const replica of replicas) await replica.close();
  await platform?.stop();
});

/** Another facade process's worth: its own servers and its own allowance, on the database given (the platform's by default). */
async function facadeReplica(databaseUrl = platform.databaseUrl): Promise<RunningFacade> {
  const config = { ...loadRuntimeConfig({ ...LOOPBACK_PORTS_AT_LISTEN, RATE_LIMITS }), databaseUrl };
  const edge = edgeOptions(config);
  const facade = await startFacade({ ...edge, host: config.host, mounts: config.mounts, tables: ROUTE_TABLES, gatewayUrl: platform.stack.gateway.graphqlUrl, tokens: testAccessTokens() });
  replicas.push({
    facade,
    async close() {
      await facade.stop();
      await edge.rateLimiting?.allowance.close();
    },
  });
  return facade;
}

/** Waits, if it must, until the current window has a minute left, so that no test sees it end. */
async function waitForRoom(): Promise<void> {
  const left = WINDOW - ((Date.now() / 1000) % WINDOW);
  if (left < 60) await new Promise((resolve) => setTimeout(resolve, left * 1000 + 100));
}

/** A client of its own: an address of 127.0.0.0/8 no other test uses, so each test starts with a full quota. */
let nextAddress = 2;
const ownAddress = () => `127.0.0.${nextAddress++}`;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** A request from `localAddress` (node:http, which can bind one; fetch cannot). */
async function ask(url: string, { localAddress, method = 'GET', headers = {}, body }: { localAddress: string; method?: string; headers?: Record<string, string>; body?: string }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = request(url, { method, headers: { ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) }, localAddress, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text ? JSON.parse(text) : undefined }));
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

const graphqlPost = (query: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });

/** What a gateway's metrics say it was asked, all routes together. */
async function gatewayRequests(): Promise<number> {
  const exposition = await platform.stack.operations.metrics.exposition();
  return exposition
    .split('\n')
    .filter((line) => line.startsWith('http_server_request_duration_seconds_count{server="gateway"'))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

describe('a client over its rate', () => {
  beforeAll(waitForRoom, 70_000);

  it('is answered 429 with Retry-After and the RateLimit fields once its quota is spent, by the facade and the gateway together', async () => {
    const localAddress = ownAddress();
    const healthz = `${platform.base('trust')}/healthz`;
    const seen: Answer[] = [];
    // Four through the facade (each its own request to the gateway, which is not counted again), two at the gateway.
    for (let i = 0; i < 4; i += 1) seen.push(await ask(healthz, { localAddress }));
    for (let i = 0; i < 2; i += 1) seen.push(await ask(platform.stack.gateway.graphqlUrl, { localAddress, ...graphqlPost('{ __typename }') }));
    expect(seen.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const [index, answer] of seen.entries()) {
      expect(answer.headers['ratelimit-policy']).toBe(`"anonymous";q=6;w=${WINDOW}`);
      const [, remaining, reset] = /^"anonymous";r=(\d+);t=(\d+)$/.exec(String(answer.headers.ratelimit))!;
      expect(Number(remaining)).toBe(5 - index);
      expect(Number(reset)).toBeGreaterThan(0);
      expect(Number(reset)).toBeLessThanOrEqual(WINDOW);
    }

    const refused = await ask(healthz, { localAddress });
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ status: 429, code: 'RATE_LIMITED', 'violated-policies': ['anonymous'] });
    expect(refused.body.type).toMatch(/\/docs\/problems#rate-limited$/);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(refused.headers.ratelimit).toBe(`"anonymous";r=0;t=${retryAfter}`);
    expect(refused.headers['ratelimit-policy']).toBe(`"anonymous";q=6;w=${WINDOW}`);

    const atGateway = await ask(platform.stack.gateway.graphqlUrl, { localAddress, ...graphqlPost('{ __typename }') });
    expect(atGateway.status).toBe(429);
    expect(atGateway.headers['retry-after']).toBeDefined();
    expect(atGateway.body.errors[0].extensions.code).toBe('RATE_LIMITED');

    // The probes are a load balancer's, never limited.
    expect((await ask(`${platform.stack.facade.url}/readyz`, { localAddress })).status).toBe(200);
  });

  it("is counted by its token, with its role's quota, whatever its address", async () => {
    const writer = { authorization: `Bearer ${TOKENS.writer}` };
    const statuses: number[] = [];
    // From two addresses: one client for all that.
    for (let i = 0; i < 11; i += 1) statuses.push((await ask(`${platform.base('trust')}/healthz`, { localAddress: i % 2 ? '127.0.0.250' : '127.0.0.251', headers: writer })).status);
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
    // An unknown token is no client of its own: it is its address's (a made-up token a request would be a new quota a request).
    const localAddress = ownAddress();
    const madeUp = await Promise.all(Array.from({ length: 7 }, (_, i) => ask(`${platform.base('trust')}/healthz`, { localAddress, headers: { authorization: `Bearer made-up-${i}` } })));
    expect(madeUp.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 429]);
  });

  it('is counted by an issued token it has used before, each token its own client, whatever its address, a reader by the reader quota', async () => {
    const issue = async (label: string) => (await platform.rest('issuer', '/admin/tokens', { as: 'admin', body: { operator: 'default', role: 'reader', label } })).body.secret as string;
    const [first, second] = [await issue('rate limits: first reader'), await issue('rate limits: second reader')];
    const healthz = `${platform.base('trust')}/healthz`;
    for (const secret of [first, second]) {
      // Its first use is judged by the store (here a 403: a reader may not list tokens); from then on the servers know it.
      expect((await ask(`${platform.base('issuer')}/admin/tokens`, { localAddress: ownAddress(), headers: { authorization: `Bearer ${secret}` } })).status).toBe(403);
    }
    const answers: Answer[] = [];
    for (let i = 0; i < 9; i += 1) answers.push(await ask(healthz, { localAddress: i % 2 ? '127.0.0.248' : '127.0.0.249', headers: { authorization: `Bearer ${first}` } }));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429]);
    expect(answers.slice(0, 8).map((answer) => answer.headers.ratelimit)).toEqual([7, 6, 5, 4, 3, 2, 1, 0].map((remaining) => expect.stringMatching(new RegExp(`^"reader";r=${remaining};`))));
    const other = await ask(healthz, { localAddress: '127.0.0.248', headers: { authorization: `Bearer ${second}` } });
    expect(other.status).toBe(200);
    expect(other.headers.ratelimit).toMatch(/^"reader";r=7;/);
  });

  it('is refused at its quota on two facade replicas sharing the database, not at twice it', async () => {
    const second = await facadeReplica();
    const localAddress = ownAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 10; i += 1) statuses.push((await ask(`${(i % 2 ? second : platform.stack.facade).baseUrls.trust}/healthz`, { localAddress })).status);
    // The quota, 6, between the two; which replica refuses first depends on which one's next lease
    // (reserved in the background after each request) reaches the database first.
    expect(statuses.filter((status) => status === 200)).toHaveLength(6);
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    // Both refuse once it is spent.
    expect(statuses.slice(-2)).toEqual([429, 429]);
  });

  it('costs the facade no request to the gateway for its refused writes once it is limited', async () => {
    const localAddress = ownAddress();
    const write = () => ask(`${platform.base('issuer')}/passports`, { localAddress, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const refused: number[] = [];
    for (let i = 0; i < 6; i += 1) refused.push((await write()).status);
    expect(refused).toEqual([401, 401, 401, 401, 401, 401]);
    // The refusals' report to the issuer's admin log goes within 100 ms (rest-facade/refusal-reports.ts).
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = await gatewayRequests();
    const flood = await Promise.all(Array.from({ length: 200 }, write));
    expect(new Set(flood.map((answer) => answer.status))).toEqual(new Set([429]));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await gatewayRequests()).toBe(before);
    expect(await platform.stack.operations.metrics.exposition()).toMatch(/^passport_rate_limited_requests_total\{server="facade",role="anonymous"\} ([2-9]\d\d|\d{4,})$/m);
  });
});

describe('a database the rate limits cannot reach', () => {
  let silent: Server;
  const held: Socket[] = [];
  afterAll(() => {
    for (const socket of held) socket.destroy();
    silent?.close();
  });

  it('leaves each facade counting on its own (open, to its quota per process), answering without waiting on it, never 500', async () => {
    // Nothing listens on the first; the second accepts connections and never answers.
    silent = createServer((socket) => void held.push(socket)).listen(0, '127.0.0.1');
    await new Promise((resolve) => silent.once('listening', resolve));
    const silentPort = (silent.address() as { port: number }).port;
    const refusing = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => refusing.once('listening', resolve));
    const closedPort = (refusing.address() as { port: number }).port;
    await new Promise((resolve) => refusing.close(resolve));

    for (const port of [closedPort, silentPort]) {
      const facade = await facadeReplica(`postgresql://passport:secret@127.0.0.1:${port}/passport`);
      const localAddress = ownAddress();
      const started = performance.now();
      const statuses: number[] = [];
      for (let i = 0; i < 8; i += 1) statuses.push((await ask(`${facade.baseUrls.trust}/healthz`, { localAddress })).status);
      expect(statuses, `database at port ${port}`).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
      // One wait of at most the connection timeout (1 s), then none for the next 5 s.
      expect(performance.now() - started).toBeLessThan(4_000);
    }
  }, 30_000);
});
