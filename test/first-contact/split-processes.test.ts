/**
 * The platform run as README's "Running one service alone" and docs/SCALING.md describe it: a first
 * key-encryption key made with `npm run keys -- create-kek`, then each subgraph, the gateway and the
 * REST facade as a process of its own, each with a data folder that does not exist yet, on one
 * PostgreSQL. What an operator sees: every part starts, a write through the facade lands, the gateway
 * answers one query across services, and a verdict names the platform's keys as trusted.
 *
 * The same six processes are the platform deployed apart for its operations (one set of processes
 * for both, rather than two more subgraphs started for these alone): each part serves its own
 * metrics on a port of its own, which a real Prometheus scrapes and reads back per server; and
 * SIGTERM shuts the trust subgraph down in order: readiness fails first, then new connections are
 * refused, a request in flight is still answered, and the process exits 0.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICES, type ServiceName } from '../../lib/config/services.js';
import { createTestDatabase } from '../support/database.js';
import { freePort } from '../support/free-port.js';
import { checkMetrics, startPrometheus } from '../support/prometheus.js';
import { newcomerEnv } from '../support/environment.js';

const ADMIN = 'split-admin-token-0123456789abcdef';
const WRITER = 'split-writer-token-0123456789abcdef';
/** The trust subgraph's readiness fails this long on SIGTERM before its port closes. */
const SHUTDOWN_DELAY_MS = 1500;
const folder = mkdtempSync(join(tmpdir(), 'split-processes-'));
type PartName = ServiceName | 'gateway' | 'facade';
interface Part {
  child: ChildProcess;
  /** Its public origin (http://127.0.0.1:port). */
  origin: string;
  metricsUrl: string;
  output: () => string;
}
const parts = {} as Record<PartName, Part>;
let env: NodeJS.ProcessEnv;
let facade: string;
let gateway: string;

/** How long a part may take to start: loading the platform on a busy 2-core machine has taken over a minute. */
const PART_START_MS = 150_000;

/** Starts `bin/<script>` with these settings; resolves once `ready` answers, or fails with what the process printed. */
async function start(name: PartName, script: string, args: string[], port: number, settings: NodeJS.ProcessEnv, ready: () => Promise<boolean>): Promise<void> {
  // A metrics port of its own, as a part deployed apart has (the defaults may be taken by another test's platform).
  const metricsPort = await freePort();
  const child = spawn(process.execPath, ['bin/run.mjs', join('bin', script), ...args], {
    env: { ...env, ...settings, METRICS_PORT: String(metricsPort), PASSPORT_DATA_DIR: join(folder, name) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  parts[name] = { child, origin: `http://127.0.0.1:${port}`, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, output: () => output };
  // Each part prints its metrics URL once its servers listen (bin/subgraph.ts, gateway.ts, facade.ts):
  // readiness is asked from then on, not a few hundred times while the platform loads.
  let gaveUp: NodeJS.Timeout | undefined;
  const listening = await new Promise<boolean>((resolve) => {
    gaveUp = setTimeout(() => resolve(false), PART_START_MS);
    child.stdout!.on('data', () => output.includes('metrics: http') && resolve(true));
    child.once('exit', () => resolve(false));
  }).finally(() => clearTimeout(gaveUp));
  for (const started = Date.now(); listening && child.exitCode === null && Date.now() - started < 30_000; await new Promise((resolve) => setTimeout(resolve, 100))) {
    if (await ready().catch(() => false)) return;
  }
  throw new Error(`${script} ${args.join(' ')} did not start:\n${output}`);
}

const answersGraphql = (url: string) => async () => (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' })).ok;

beforeAll(async () => {
  const ports = { gateway: await freePort(), facade: await freePort() };
  gateway = `http://127.0.0.1:${ports.gateway}/graphql`;
  facade = `http://127.0.0.1:${ports.facade}`;
  const subgraphPorts = Object.fromEntries(await Promise.all(SERVICES.map(async (service) => [service, await freePort()]))) as Record<ServiceName, number>;
  env = newcomerEnv({
    HOST: '127.0.0.1',
    DATABASE_URL: await createTestDatabase(),
    PASSPORT_KEK_FILE: join(folder, 'kek', 'passport.kek'),
    PASSPORT_ADMIN_TOKEN: ADMIN,
    PASSPORT_WRITER_TOKEN: WRITER,
    GATEWAY_PORT: String(ports.gateway),
    FACADE_PORT: String(ports.facade),
    ...Object.fromEntries(SERVICES.map((service) => [`${service.toUpperCase()}_SUBGRAPH_PORT`, String(subgraphPorts[service])])),
  });
  const kek = spawnSync(process.execPath, ['bin/run.mjs', 'bin/keys.ts', 'create-kek'], { env, encoding: 'utf8' });
  expect(kek.status, kek.stderr).toBe(0);
  // The trust subgraph is the one shut down with a request in flight (the last test).
  const shutdown = { trust: { SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS), SHUTDOWN_TIMEOUT_MS: '8000' } } as Partial<Record<ServiceName, NodeJS.ProcessEnv>>;
  await Promise.all(
    SERVICES.map((service) => start(service, 'subgraph.ts', [service], subgraphPorts[service], shutdown[service] ?? {}, answersGraphql(`http://127.0.0.1:${subgraphPorts[service]}/`))),
  );
  // The gateway composes the subgraphs as it starts; the facade asks the gateway only per request, so it
  // loads beside it, and is asked for readiness once the gateway has started.
  const gatewayStarted = start('gateway', 'gateway.ts', [], ports.gateway, {}, answersGraphql(gateway));
  const facadeReady = async () => {
    await gatewayStarted;
    return (await fetch(`${facade}/trust/healthz`)).ok;
  };
  await Promise.all([gatewayStarted, start('facade', 'facade.ts', [], ports.facade, {}, facadeReady)]);
}, 3 * PART_START_MS);

afterAll(async () => {
  await Promise.all(
    Object.values(parts).map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
  rmSync(folder, { recursive: true, force: true });
});

const post = async (path: string, body: unknown) => {
  const response = await fetch(`${facade}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${WRITER}` }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

async function ask(query: string, variables: Record<string, unknown>): Promise<{ data?: Record<string, any>; errors?: unknown }> {
  const response = await fetch(gateway, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  return (await response.json()) as { data?: Record<string, any>; errors?: unknown };
}

describe('the platform as processes of its own', () => {
  it('takes a passport through the facade and answers for it across services, its keys trusted', async () => {
    expect((await post('/registry/', { kind: 'model', id: 'split-battery', body: { title: 'split-battery', schema: { type: 'object' } } })).status).toBe(201);
    const created = await post('/issuer/passports', { identity: 'https://id.gs1.org/01/09520123456788/21/SPLIT-1', type_ref: { id: 'split-battery', version: 1 }, config_vector: {} });
    expect(created.status).toBe(201);
    const id = created.body.passport_id as string;
    expect((await post(`/issuer/passports/${id}/events`, { type: 'activated', payload: { placed_on_market_at: '2025-02-01T00:00:00Z' } })).status).toBe(201);

    const { data, errors } = await ask('query($id: ID!) { passport(id: $id) { id status typeRecord { id version } signingKeys { role kid } } }', { id });
    expect(errors).toBeUndefined();
    expect(data?.passport).toMatchObject({ id, status: 'active', typeRecord: { id: 'split-battery', version: 1 } });
    const roles = (data!.passport.signingKeys as { role: string }[]).map((key) => key.role);
    expect(roles.length).toBeGreaterThan(0);
    // Each subgraph places the platform's keys in the trust graph once the gateway answers (bin/subgraph.ts tries every second).
    await expect
      .poll(async () => (await ask('query($id: ID!) { passport(id: $id) { signingKeys { standingAtLastUse { standing rootId } } } }', { id })).data?.passport.signingKeys, {
        timeout: 30_000,
        interval: 1_000,
      })
      .toEqual(roles.map(() => ({ standingAtLastUse: { standing: 'valid', rootId: 'platform' } })));
  });

  it('each serve their own metrics on a port of their own, which a real Prometheus scrapes per server', async () => {
    const others = (name: PartName) => new RegExp(`server="(?!${name}")`);
    // Prometheus starts (a second or two) while each part's own exposition is checked.
    const starting = startPrometheus(Object.values(parts).map((part) => part.metricsUrl));
    starting.catch(() => {});
    try {
      for (const [name, part] of Object.entries(parts) as [PartName, Part][]) {
        expect(part.output()).toContain(`metrics: ${part.metricsUrl}`);
        expect((await fetch(`${part.origin}/readyz`)).status, name).toBe(200);
        const exposition = await (await fetch(part.metricsUrl)).text();
        expect(exposition).toContain(`http_server_request_duration_seconds_count{server="${name}",http_route="/readyz",http_request_method="GET",http_response_status_code="200"}`);
        expect(exposition, name).not.toMatch(others(name));
        const checked = checkMetrics(exposition);
        expect(checked, checked.output).toEqual({ status: 0, output: '' });
        // The public port does not serve them.
        expect(await (await fetch(`${part.origin}/metrics`)).text()).not.toContain('# HELP');
      }
      const prometheus = await starting;
      await expect
        .poll(async () => (await prometheus.query('sum by (server) (passport_ready)')).map((sample) => [sample.metric.server, sample.value[1]]).sort(), { timeout: 20_000, interval: 250 })
        .toEqual(
          Object.keys(parts)
            .sort()
            .map((name) => [name, '1']),
        );
      const pools = await prometheus.query('sum by (server) (db_client_connections_usage)');
      expect(pools.map((sample) => sample.metric.server).sort()).toEqual([...SERVICES].sort());
    } finally {
      await (await starting.catch(() => undefined))?.stop();
    }
  }, 60_000);

  // Last: it ends the trust subgraph.
  it('on SIGTERM fails readiness first, refuses new connections, answers the request in flight, then exits 0', async () => {
    const { child, origin } = parts.trust;
    const body = JSON.stringify({ query: '{ trustGraph { nodes { id } } }' });
    // A request in flight: its headers and half its body sent, the rest only after the signal. On a
    // connection of its own that ends with the answer (no agent: `connection: close`): a kept-alive one
    // would hold the exit until the client let it go (Node's agent after 5 s idle) or SHUTDOWN_TIMEOUT_MS
    // cut it, which test/ops/every-server.test.ts asserts.
    const inFlight = request(`${origin}/`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
    const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
      inFlight.on('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, text }));
      });
      inFlight.on('error', reject);
    });
    inFlight.write(body.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const signalled = Date.now();
    child.kill('SIGTERM');

    await expect.poll(async () => (await fetch(`${origin}/readyz`)).status, { timeout: SHUTDOWN_DELAY_MS, interval: 50 }).toBe(503);
    const notReady = await (await fetch(`${origin}/readyz`)).json();
    expect(notReady).toMatchObject({ code: 'NOT_READY', unmet: { shutdown: 'the process is shutting down' } });
    expect((await fetch(`${origin}/livez`)).status).toBe(200);
    expect(Date.now() - signalled).toBeLessThan(SHUTDOWN_DELAY_MS);

    // Then the port closes to new connections while the request above is still open.
    await expect
      .poll(
        async () =>
          fetch(`${origin}/livez`).then(
            () => 'accepted',
            (error: Error & { cause?: { code?: string } }) => error.cause?.code,
          ),
        { timeout: 5_000, interval: 100 },
      )
      .toBe('ECONNREFUSED');
    expect(child.exitCode).toBeNull();

    inFlight.end(body.slice(10));
    const answer = await answered;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ data: { trustGraph: { nodes: expect.any(Array) } } });
    expect(await exited).toBe(0);
    console.log(`SIGTERM to exit, one request in flight: ${Date.now() - signalled} ms (SHUTDOWN_DELAY_MS ${SHUTDOWN_DELAY_MS})`);
  }, 30_000);
});
