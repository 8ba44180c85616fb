/**
 * Makes test/foundation/fixtures/previous-release/ with the previous release itself (commit
 * PREVIOUS_RELEASE, the last main before operators, issue 44): its checkout in a temporary git
 * worktree (node_modules linked from this one: its lockfile is a subset of ours, at the same versions),
 * `npm start` on a PostgreSQL of Debian's (15, whose pg_dump can dump it: the embedded 17 has none),
 * a small data set made through its REST API, the exact bytes of what it served, its `npm run backup`
 * and the `pg_dump` docs/OPERATIONS.md writes. test/foundation/previous-release-upgrade.test.ts upgrades both.
 *
 *   node --import tsx test/support/previous-release-fixture.ts
 *
 * The key-encryption key and the tokens its first start made are in the fixture: test-only secrets (README.md there).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { DebianPostgres } from './debian-postgres.js';
import { processEnv } from './environment.js';
import { freePort } from './free-port.js';
import { PREVIOUS_RELEASE, PREVIOUS_RELEASE_FIXTURE, PREVIOUS_RELEASE_PUBLIC_URLS, previousReleaseFile, type PreviousReleaseTokens, type Served } from './previous-release.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');

const GTIN = '09520123456788';
const identityOf = (serial: string) => `https://id.gs1.org/01/${GTIN}/21/${serial}`;
const CELL_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: { chemistry: { enum: ['LFP', 'NMC'] }, capacity_kwh: { type: 'number', exclusiveMinimum: 0 } },
  required: ['chemistry'],
  additionalProperties: false,
};
/** The traceability event `index` of a serial, at a fixed time (the fixture is made the same each time but for keys and ids). */
const objectEvent = (serial: string, index: number, bizStep: string) => ({
  eventTime: new Date(Date.UTC(2026, 10, 1) + index * 60_000).toISOString(),
  eventTimeZoneOffset: '+00:00',
  action: 'OBSERVE',
  bizStep,
  epcList: [identityOf(serial)],
  readPoint: { id: 'urn:epc:id:sgln:9520123.00001.0' },
});

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'previous-release-'));
  const checkout = join(work, 'checkout');
  const out = join(ROOT, PREVIOUS_RELEASE_FIXTURE);
  let database: DebianPostgres | undefined;
  let platform: ChildProcess | undefined;
  try {
    await run('git', ['worktree', 'add', '--detach', checkout, PREVIOUS_RELEASE], { cwd: ROOT });
    // Its own node_modules of links to ours, but its own build cache (bin/run.mjs builds into node_modules/.cache).
    await mkdir(join(checkout, 'node_modules'));
    for (const name of await readdir(join(ROOT, 'node_modules'))) if (name !== '.cache') await symlink(join(ROOT, 'node_modules', name), join(checkout, 'node_modules', name));
    await mkdir(out, { recursive: true });
    await Promise.all(Object.values(previousReleaseFile).map((file) => rm(file, { force: true })));

    database = await DebianPostgres.start('previous-release');
    const ports = {
      FACADE_PORT: await freePort(),
      GATEWAY_PORT: await freePort(),
      TRUST_SUBGRAPH_PORT: await freePort(),
      REGISTRY_SUBGRAPH_PORT: await freePort(),
      ISSUER_SUBGRAPH_PORT: await freePort(),
      ARCHIVE_SUBGRAPH_PORT: await freePort(),
    };
    const env = processEnv({
      DATABASE_URL: database.url(),
      PASSPORT_DATA_DIR: join(work, 'data'),
      PASSPORT_KEK_FILE: previousReleaseFile.kek,
      METRICS: 'off',
      LOG_LEVEL: 'warn',
      ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)])),
      ...PREVIOUS_RELEASE_PUBLIC_URLS,
    });
    const command = (entry: string, args: string[]) => run(process.execPath, ['bin/run.mjs', entry, ...args], { cwd: checkout, env, timeout: 180_000 });
    await command('bin/keys.ts', ['create-kek']);

    platform = spawn(process.execPath, ['bin/run.mjs', 'bin/start.ts'], { cwd: checkout, env, stdio: ['ignore', 'inherit', 'inherit'] });
    const base = `http://127.0.0.1:${ports.FACADE_PORT}`;
    await until(async () => (await fetch(`${base}/readyz`)).ok);
    // The tokens its first start made, as an operator finds them when its output is no terminal (README).
    const tokens = Object.fromEntries(
      (await readFile(join(work, 'data', 'new-tokens.txt'), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/)),
    ) as PreviousReleaseTokens;
    await writeFile(previousReleaseFile.tokens, `${JSON.stringify(tokens, null, 2)}\n`);
    await copyFile(join(work, 'data', 'tokens.json'), previousReleaseFile.tokensFile);

    const served: Record<string, Served> = {};
    const call = async (path: string, init: { body?: unknown; as?: keyof PreviousReleaseTokens; record?: boolean } = {}) => {
      const headers: Record<string, string> = { 'accept-encoding': 'identity' };
      if (init.as) headers.authorization = `Bearer ${tokens[init.as]}`;
      if (init.body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${base}${path}`, { method: init.body === undefined ? 'GET' : 'POST', headers, ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }) });
      const bytes = Buffer.from(await response.arrayBuffer());
      if (response.status >= 300) throw new Error(`${path}: ${response.status} ${bytes.toString('utf8').slice(0, 600)}`);
      if (init.record) served[path] = { status: response.status, contentType: response.headers.get('content-type') ?? '', base64: bytes.toString('base64') };
      return bytes.toString('utf8') && response.headers.get('content-type')?.includes('json') ? JSON.parse(bytes.toString('utf8')) : undefined;
    };

    // Registry: the sample register, a model of our own, an item record in two versions.
    await call('/registry/admin/seed', { as: 'admin', body: {} });
    await call('/registry/', { as: 'writer', body: { kind: 'model', id: 'upgrade-cell', body: { title: 'Cell (upgrade fixture)', schema: CELL_SCHEMA } } });
    await call('/registry/', { as: 'writer', body: { kind: 'item', id: 'upgrade-item', body: { label: 'v1' } } });
    await call('/registry/items/upgrade-item/versions', { as: 'writer', body: { expected_version: 1, body: { label: 'v2' } } });
    // Trust: a trust list with an entry.
    await call('/trust/trust-lists', { as: 'writer', body: { jurisdiction: 'DE', framework: 'eIDAS' } });
    await call('/trust/trust-lists/DE/entries', { as: 'writer', body: { id: 'upgrade-entry', service_type: 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC', name: 'Upgrade GmbH' } });

    // Issuer: a battery passport of the sample model (verify-offline), active with a pack and a snapshot;
    // a cell passport suspended after traceability events, with a pack; a draft.
    const battery = (await call('/registry/models/battery-passport')).body.schema.examples[0];
    const create = async (serial: string, typeRef: { id: string; version: number }, configVector: unknown, capabilityClass: string) =>
      String(
        (
          await call('/issuer/passports', {
            as: 'writer',
            body: { identity: identityOf(serial), granularity: 'item', type_ref: typeRef, config_vector: configVector, capability_class: capabilityClass },
          })
        ).passport_id,
      );
    const append = (id: string, type: string, payload: unknown) => call(`/issuer/passports/${encodeURIComponent(id)}/events`, { as: 'writer', body: { type, payload } });
    const active = await create('UPG-1', { id: 'battery-passport', version: 1 }, battery, 'verify-offline');
    await append(active, 'activated', { placed_on_market_at: '2026-11-01T00:00:00Z' });
    await append(active, 'ObjectEvent', objectEvent('UPG-1', 1, 'inspecting'));
    await append(active, 'ObjectEvent', objectEvent('UPG-1', 2, 'shipping'));
    await call(`/issuer/passports/${encodeURIComponent(active)}/pack`, { as: 'writer', body: {} });
    const suspended = await create('UPG-2', { id: 'upgrade-cell', version: 1 }, { chemistry: 'LFP', capacity_kwh: 12 }, 'trace');
    await append(suspended, 'activated', {});
    await append(suspended, 'ObjectEvent', objectEvent('UPG-2', 1, 'inspecting'));
    await append(suspended, 'suspended', { reason: 'recall investigation' });
    await call(`/issuer/passports/${encodeURIComponent(suspended)}/pack`, { as: 'writer', body: {} });
    const draft = await create('UPG-3', { id: 'upgrade-cell', version: 1 }, { chemistry: 'NMC' }, 'trace');
    const snapshot = String((await call('/archive/snapshots', { as: 'writer', body: { passport_id: active } })).id);

    // What it served, byte for byte.
    const passports = [active, suspended, draft];
    for (const id of passports) {
      const path = `/issuer/passports/${encodeURIComponent(id)}`;
      for (const read of [path, `${path}?include_events=true`, `${path}/credential`, `${path}/verdict`]) await call(read, { record: true });
    }
    for (const read of [
      '/issuer/keyring',
      '/trust/keyring',
      '/archive/keyring',
      '/issuer/did.json',
      '/issuer/status-lists/revocation/0',
      '/issuer/status-lists/suspension/0',
      `/archive/snapshots/${snapshot}`,
      `/archive/snapshots/${snapshot}/notarization`,
      '/registry/models/upgrade-cell',
      '/registry/items/upgrade-item?version=1',
      '/registry/items/upgrade-item',
      '/registry/items/upgrade-item/supersession',
      '/trust/trust-lists/DE',
      '/trust/anchor-bundle',
    ])
      await call(read, { record: true });

    await command('bin/backup.ts', [previousReleaseFile.backup]);
    platform.kill('SIGTERM');
    await new Promise((done) => platform!.once('exit', done));
    platform = undefined;
    // As docs/OPERATIONS.md writes it ("With your own PostgreSQL").
    await database.client('pg_dump', [
      '--format=custom',
      '--serializable-deferrable',
      '--schema=trust',
      '--schema=registry',
      '--schema=issuer',
      '--schema=archive',
      `--file=${previousReleaseFile.dump}`,
      database.url(),
    ]);

    const manifest = { release: PREVIOUS_RELEASE, madeAt: new Date().toISOString(), passports: { active, suspended, draft }, snapshot, served };
    await writeFile(previousReleaseFile.served, gzipSync(`${JSON.stringify(manifest, null, 1)}\n`));
    // Labelled where it lies (the release read it last at the backup; today's reads skip comment lines).
    await writeFile(
      previousReleaseFile.kek,
      `# TEST-ONLY key-encryption key of the upgrade fixture: it seals the fixture's signing keys and nothing else.\n${await readFile(previousReleaseFile.kek, 'utf8')}`,
    );
    const sizes = await Promise.all(Object.values(previousReleaseFile).map(async (file) => `${file.slice(out.length + 1)}: ${(await readFile(file)).length} bytes`));
    console.log(`Wrote ${PREVIOUS_RELEASE_FIXTURE}:\n  ${sizes.join('\n  ')}`);
  } finally {
    if (platform) {
      platform.kill('SIGTERM');
      await new Promise((done) => platform!.once('exit', done));
    }
    await database?.remove();
    await run('git', ['worktree', 'remove', '--force', checkout], { cwd: ROOT }).catch(() => {});
    await rm(work, { recursive: true, force: true });
  }
}

async function until(ready: () => Promise<boolean>, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ready().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error('the previous release did not become ready');
    await new Promise((done) => setTimeout(done, 500));
  }
}

await main();
