/**
 * Secret hygiene over a full run of `npm start` (bin/start.ts with its embedded PostgreSQL, every log
 * line on): the access tokens (configured, and issued by the identity store: but in the answer that
 * issues one), the key-encryption key and the database password never appear in its output, in the output of `npm run keys`, in any answer (errors included) or in any admin log.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { scratchFolder } from '../support/scratch-folder.js';
import { SERVICES } from '../../lib/config/services.js';
import { newcomerEnv } from '../support/environment.js';

const root = join(import.meta.dirname, '..', '..');
const folder = scratchFolder('secret-hygiene-');
// Run as root, PostgreSQL runs as another user, who must be able to enter the folder.
chmodSync(folder, 0o711);
const dataDir = join(folder, 'data');
const tokens = { admin: `admin-${randomBytes(18).toString('base64url')}`, writer: `writer-${randomBytes(18).toString('base64url')}` };
const stranger = `stranger-${randomBytes(18).toString('base64url')}`;
let child: ReturnType<typeof spawn> | undefined;
afterAll(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
});

it('a full run shows no access token, key-encryption key or database password in its logs, its answers or its admin logs', { timeout: 180_000 }, async () => {
  const env = newcomerEnv({
    HOME: process.env.HOME,
    PASSPORT_DATA_DIR: dataDir,
    PASSPORT_ADMIN_TOKEN: tokens.admin,
    PASSPORT_WRITER_TOKEN: tokens.writer,
    EMBEDDED_PG_PORT: String(await freePort()),
    HOST: '127.0.0.1',
    FACADE_PORT: '0',
    GATEWAY_PORT: '0',
    METRICS_PORT: '0',
    ...Object.fromEntries(SERVICES.map((service) => [`${service.toUpperCase()}_SUBGRAPH_PORT`, '0'])),
    LOG_LEVEL: 'debug',
  });
  let output = '';
  child = spawn(process.execPath, ['bin/run.mjs', 'bin/start.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child!.once('exit', resolve));
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  await Promise.race([
    new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (output.includes('Press Ctrl-C to stop.')) resolve(void clearInterval(poll));
      }, 100);
    }),
    exited.then((code) => {
      throw new Error(`npm start ended (${code}) before it was ready:\n${output}`);
    }),
  ]);
  const rest = Object.fromEntries(SERVICES.map((service) => [service, new RegExp(`${service} REST\\s+(\\S+)`).exec(output)![1]!]));
  const gateway = /GraphQL \(gateway\)\s+(\S+)/.exec(output)![1]!;

  // Everything a client sees: answers to the good, the refused and the malformed.
  const answers: string[] = [];
  const call = async (url: string, init: RequestInit = {}) => {
    const response = await fetch(url, init);
    answers.push(`${response.status} ${url}\n${[...response.headers].join('\n')}\n${await response.text()}`);
    return response.status;
  };
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  for (const service of SERVICES) {
    await call(`${rest[service]}/`);
    await call(`${rest[service]}/healthz`);
    await call(`${rest[service]}/keyring`);
    expect(await call(`${rest[service]}/admin/log`, { headers: bearer(stranger) })).toBe(401);
    expect(await call(`${rest[service]}/admin/log`, { headers: bearer(tokens.writer) })).toBe(403);
  }
  expect(await call(`${rest.issuer}/passports`, { method: 'POST', headers: { ...bearer(tokens.writer), 'content-type': 'application/json' }, body: '{"broken": ' })).toBe(400);
  expect(await call(`${rest.issuer}/passports`, { method: 'POST', headers: { ...bearer(tokens.writer), 'content-type': 'application/json' }, body: '{}' })).toBe(400);
  await call(gateway, { method: 'POST', headers: { ...bearer(stranger), 'content-type': 'application/json' }, body: JSON.stringify({ query: 'mutation { trustRotateKey(purpose: "service") }' }) });

  const keys = (args: string[], token: string) =>
    promisify(execFile)(process.execPath, ['bin/run.mjs', 'bin/keys.ts', ...args], { cwd: root, env: { ...env, PASSPORT_ADMIN_TOKEN: token, GATEWAY_URL: gateway } }).then(
      ({ stdout, stderr }) => stdout + stderr,
      (error: { stdout: string; stderr: string }) => error.stdout + error.stderr,
    );
  const rotated = await keys(['rotate', 'trust', 'service'], tokens.admin);
  expect(rotated).toContain('signs service with a new key');
  const refused = await keys(['rotate', 'issuer', 'event'], stranger);
  expect(refused).toContain('did not rotate');
  const status = await keys(['status'], tokens.admin);
  expect(status).toContain('sealed under kek-');

  // An issued token: its secret is in the answer that creates it (not kept among the answers checked), then only used.
  const issuing = await fetch(`${rest.issuer}/admin/tokens`, {
    method: 'POST',
    headers: { ...bearer(tokens.admin), 'content-type': 'application/json' },
    body: JSON.stringify({ operator: 'default', role: 'admin', label: 'hygiene' }),
  });
  expect(issuing.status).toBe(201);
  const issued = (await issuing.json()) as { id: string; secret: string };
  expect(await call(`${rest.issuer}/admin/tokens`, { headers: bearer(issued.secret) })).toBe(200);
  expect(await call(gateway, { method: 'POST', headers: { ...bearer(issued.secret), 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ accessTokens { id label } }' }) })).toBe(
    200,
  );
  expect(await call(`${rest.issuer}/admin/tokens/${issued.id}/revocation?operator=default`, { method: 'POST', headers: bearer(tokens.admin) })).toBe(200);
  expect(await call(`${rest.issuer}/admin/tokens`, { headers: bearer(issued.secret) })).toBe(401);

  const adminLogs: string[] = [];
  for (const service of SERVICES) {
    const response = await fetch(`${rest[service]}/admin/log?limit=500`, { headers: bearer(tokens.admin) });
    expect(response.status).toBe(200);
    adminLogs.push(await response.text());
  }
  expect(adminLogs.join('\n')).toContain('RotateKey');

  // The database pulled away: what the services answer and log then must not carry its password.
  const postmaster = Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  process.kill(postmaster, 'SIGKILL');
  for (const service of SERVICES) await call(`${rest[service]}/healthz`);
  await call(`${rest.trust}/admin/log`, { headers: bearer(tokens.admin) });
  await call(`${rest.issuer}/passports`, { method: 'POST', headers: { ...bearer(tokens.writer), 'content-type': 'application/json' }, body: '{}' });

  // With its PostgreSQL gone the platform still stops at once and cleanly (it waited 15 s for the dead postmaster's exit, then exited 1).
  child.kill('SIGTERM');
  expect(await exited).toBe(0);

  const kek = readFileSync(`${dataDir}.kek`, 'utf8')
    .split('\n')
    .filter((line) => line && !line.startsWith('#'));
  expect(kek).toHaveLength(1);
  const kekBytes = Buffer.from(kek[0]!, 'base64url');
  const password = (JSON.parse(readFileSync(join(dataDir, 'postgres.json'), 'utf8')) as { password: string }).password;
  expect(password.length).toBeGreaterThanOrEqual(16);
  const secrets: Record<string, string[]> = {
    'admin token': [tokens.admin],
    'writer token': [tokens.writer],
    'unknown token': [stranger],
    'issued token': [issued.secret],
    'key-encryption key': [kek[0]!, kekBytes.toString('hex'), kekBytes.toString('base64')],
    'database password': [password, encodeURIComponent(password)],
  };
  // The run did log, and said where the KEK was made.
  expect(output).toContain(`Created the key-encryption key that seals the signing keys: ${dataDir}.kek (mode 0600)`);
  expect(output).toContain('Passport services are running.');
  for (const [where, text] of Object.entries({ 'npm start output': output, answers: answers.join('\n\n'), 'admin logs': adminLogs.join('\n'), 'npm run keys output': rotated + refused + status })) {
    for (const [name, encodings] of Object.entries(secrets)) {
      for (const encoding of encodings) expect(text.includes(encoding), `${name} in ${where}`).toBe(false);
    }
  }
});
