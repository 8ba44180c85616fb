/**
 * The platform run as README's "Running one service alone" and docs/SCALING.md describe it: a first
 * key-encryption key made with `npm run keys -- create-kek`, then each subgraph, the gateway and the
 * REST facade as a process of its own, each with a data folder that does not exist yet, on one
 * PostgreSQL. What an operator sees: every part starts, a write through the facade lands, the gateway
 * answers one query across services, and a verdict names the platform's keys as trusted.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICES } from '../../lib/config/services.js';
import { createTestDatabase } from '../support/database.js';
import { freePort } from '../support/free-port.js';

const ADMIN = 'split-admin-token-0123456789abcdef';
const WRITER = 'split-writer-token-0123456789abcdef';
const folder = mkdtempSync(join(tmpdir(), 'split-processes-'));
const children: ChildProcess[] = [];
let env: NodeJS.ProcessEnv;
let facade: string;
let gateway: string;

/** Starts `bin/<script>` with these settings; resolves once `ready` answers, or fails with what the process printed. */
async function part(script: string, args: string[], settings: NodeJS.ProcessEnv, ready: () => Promise<boolean>): Promise<void> {
  const child = spawn(process.execPath, ['bin/run.mjs', join('bin', script), ...args], { env: { ...env, ...settings }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  for (const started = Date.now(); Date.now() - started < 60_000; ) {
    if (child.exitCode !== null) break;
    if (await ready().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${script} ${args.join(' ')} did not start:\n${output}`);
}

const answersGraphql = (url: string) => async () => (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' })).ok;

beforeAll(async () => {
  const ports = { gateway: await freePort(), facade: await freePort() };
  gateway = `http://127.0.0.1:${ports.gateway}/graphql`;
  facade = `http://127.0.0.1:${ports.facade}`;
  const subgraphPorts = Object.fromEntries(await Promise.all(SERVICES.map(async (service) => [`${service.toUpperCase()}_SUBGRAPH_PORT`, String(await freePort())])));
  env = {
    PATH: process.env.PATH,
    HOST: '127.0.0.1',
    DATABASE_URL: await createTestDatabase(),
    PASSPORT_KEK_FILE: join(folder, 'kek', 'passport.kek'),
    PASSPORT_ADMIN_TOKEN: ADMIN,
    PASSPORT_WRITER_TOKEN: WRITER,
    GATEWAY_PORT: String(ports.gateway),
    FACADE_PORT: String(ports.facade),
    // Any free port: the parts' default metrics ports may be taken by another test's platform.
    METRICS_PORT: '0',
    ...subgraphPorts,
  };
  const kek = spawnSync(process.execPath, ['bin/run.mjs', 'bin/keys.ts', 'create-kek'], { env, encoding: 'utf8' });
  expect(kek.status, kek.stderr).toBe(0);
  await Promise.all(
    SERVICES.map((service) =>
      part('subgraph.ts', [service], { PASSPORT_DATA_DIR: join(folder, service) }, answersGraphql(`http://127.0.0.1:${subgraphPorts[`${service.toUpperCase()}_SUBGRAPH_PORT`]}/`)),
    ),
  );
  await part('gateway.ts', [], { PASSPORT_DATA_DIR: join(folder, 'gateway') }, answersGraphql(gateway));
  await part('facade.ts', [], { PASSPORT_DATA_DIR: join(folder, 'facade') }, async () => (await fetch(`${facade}/trust/healthz`)).ok);
}, 180_000);

afterAll(async () => {
  await Promise.all(
    children.map(
      (child) =>
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
});
