/**
 * Two subgraphs deployed apart (bin/subgraph.ts as child processes): each serves its own metrics on
 * its own port, which a real Prometheus scrapes and reads back per server; and SIGTERM shuts one down
 * in order: readiness fails first, then new connections are refused, a request in flight is still
 * answered, and the process exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyEncryptionKeys, writeKekFile } from '../../lib/keys/kek.js';
import { createTestDatabase } from '../support/database.js';
import { freePort } from '../support/free-port.js';
import { checkMetrics, startPrometheus } from '../support/prometheus.js';

const folder = mkdtempSync(join(tmpdir(), 'deployed-apart-'));
const SHUTDOWN_DELAY_MS = 1500;
interface Part {
  child: ChildProcess;
  origin: string;
  metricsUrl: string;
  output: () => string;
}
const parts: Record<'trust' | 'registry', Part> = {} as never;

async function startSubgraph(service: 'trust' | 'registry', env: NodeJS.ProcessEnv): Promise<Part> {
  const port = await freePort();
  const metricsPort = await freePort();
  const child = spawn(process.execPath, ['bin/run.mjs', 'bin/subgraph.ts', service], {
    env: { ...env, [`${service.toUpperCase()}_SUBGRAPH_PORT`]: String(port), METRICS_PORT: String(metricsPort), PASSPORT_DATA_DIR: join(folder, service) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  const origin = `http://127.0.0.1:${port}`;
  for (const started = Date.now(); Date.now() - started < 180_000 && child.exitCode === null; await new Promise((resolve) => setTimeout(resolve, 250))) {
    if (
      await fetch(`${origin}/readyz`).then(
        (response) => response.status === 200,
        () => false,
      )
    ) {
      return { child, origin, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, output: () => output };
    }
  }
  throw new Error(`the ${service} subgraph did not become ready:\n${output}`);
}

beforeAll(async () => {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOST: '127.0.0.1',
    DATABASE_URL: await createTestDatabase(),
    PASSPORT_KEK_FILE: join(folder, 'passport.kek'),
    PASSPORT_ADMIN_TOKEN: 'apart-admin-token-0123456789abcdef',
    PASSPORT_WRITER_TOKEN: 'apart-writer-token-0123456789abcdef',
    // No gateway runs: the subgraphs' wait for one stays out of the way.
    GATEWAY_PORT: String(await freePort()),
    SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
    SHUTDOWN_TIMEOUT_MS: '8000',
  };
  // Made in process: the command that makes a first KEK is test/foundation/sealed-keys.test.ts's subject, not this file's.
  await writeKekFile(env.PASSPORT_KEK_FILE!, KeyEncryptionKeys.generate());
  [parts.trust, parts.registry] = await Promise.all([startSubgraph('trust', env), startSubgraph('registry', env)]);
}, 300_000);

afterAll(async () => {
  for (const part of Object.values(parts)) if (part.child.exitCode === null && part.child.signalCode === null) part.child.kill('SIGKILL');
  rmSync(folder, { recursive: true, force: true });
});

describe('subgraphs deployed apart', () => {
  it('each serve their own metrics on a port of their own, which a real Prometheus scrapes per server', async () => {
    for (const [service, part] of Object.entries(parts)) {
      expect(part.output()).toContain(`metrics: ${part.metricsUrl}`);
      const exposition = await (await fetch(part.metricsUrl)).text();
      expect(exposition).toContain(`http_server_request_duration_seconds_count{server="${service}",http_route="/readyz",http_request_method="GET",http_response_status_code="200"}`);
      expect(exposition).not.toMatch(/server="(facade|gateway|issuer|archive)"/);
      const checked = checkMetrics(exposition);
      expect(checked, checked.output).toEqual({ status: 0, output: '' });
      // The public port does not serve them.
      expect(await (await fetch(`${part.origin}/metrics`)).text()).not.toContain('# HELP');
    }
    const prometheus = await startPrometheus([parts.trust.metricsUrl, parts.registry.metricsUrl]);
    try {
      await expect
        .poll(async () => (await prometheus.query('sum by (server) (passport_ready)')).map((sample) => [sample.metric.server, sample.value[1]]).sort(), { timeout: 20_000, interval: 500 })
        .toEqual([
          ['registry', '1'],
          ['trust', '1'],
        ]);
      const pools = await prometheus.query('sum by (server) (db_client_connections_usage)');
      expect(pools.map((sample) => sample.metric.server).sort()).toEqual(['registry', 'trust']);
    } finally {
      await prometheus.stop();
    }
  }, 60_000);

  it('on SIGTERM fails readiness first, refuses new connections, answers the request in flight, then exits 0', async () => {
    const { child, origin } = parts.trust;
    const body = JSON.stringify({ query: '{ trustGraph { nodes { id } } }' });
    // A request in flight: its headers and half its body sent, the rest only after the signal.
    const inFlight = request(`${origin}/`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
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
