/**
 * The suite passes whatever platform settings the caller's shell holds (issue 43): the tests drop
 * every variable the platform reads as its configuration (test/support/environment.ts). Here, that
 * the list of them keeps up with the README's table and with what the platform's code reads; that
 * the suite runs with such settings set is bin/test-layers.mjs's part (every `npm test`).
 */
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICES } from '../../lib/config/services.js';
import { isPlatformSetting, processEnv } from '../support/environment.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** The variables a text names, `TRUST_X` … `ARCHIVE_X` standing for each service's. */
function namesIn(text: string): string[] {
  const names = [...text.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1]!);
  return names.flatMap((name) => (name.startsWith('TRUST_') ? SERVICES.map((service) => name.replace(/^TRUST_/, `${service.toUpperCase()}_`)) : [name]));
}

async function sources(directory: string): Promise<string[]> {
  const entries = await readdir(join(ROOT, directory), { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile() && /\.(ts|mjs)$/.test(entry.name) && !entry.parentPath.includes('generated')).map((entry) => join(entry.parentPath, entry.name));
}

describe("the platform's settings the tests drop", () => {
  it("are every variable of the README's configuration table", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const rows = readme.split('\n').filter((line) => /^\| `[A-Z][A-Z0-9_]*`/.test(line));
    const documented = rows.flatMap((row) => namesIn(row.split(' | ')[0]!));
    expect(documented.length).toBeGreaterThan(40);
    expect(documented.filter((name) => !isPlatformSetting(name))).toEqual([]);
  });

  it("are every variable the platform's code reads from its environment (but PATH)", async () => {
    const read = new Set<string>();
    for (const directory of ['lib', 'subgraphs', 'gateway', 'rest-facade', 'bin', 'verifier']) {
      for (const file of await sources(directory)) {
        // bin/formats-examples.ts is the docs' tool (npm run docs:formats), not the platform; bin/test-layers.mjs runs the suite.
        if (/bin\/(formats-examples\.ts|test-layers\.mjs)$/.test(file)) continue;
        const text = readFileSync(file, 'utf8');
        // env.NAME, env['NAME'], and a helper given env and a name: integer(env, 'NAME', …).
        for (const match of text.matchAll(/\benv\??\.([A-Z][A-Z0-9_]+)|\benv\[['`]([A-Z][A-Z0-9_]*)['`]\]|\(env, '([A-Z][A-Z0-9_]*)'/g)) read.add(match[1] ?? match[2] ?? match[3]!);
        for (const match of text.matchAll(/\benv\[`\$\{service\.toUpperCase\(\)\}(_[A-Z0-9_]+)`\]/g)) for (const service of SERVICES) read.add(`${service.toUpperCase()}${match[1]}`);
      }
    }
    read.delete('PATH');
    expect([...read]).toEqual(expect.arrayContaining(['DATABASE_URL', 'PASSPORT_ADMIN_TOKEN', 'LOG_LEVEL', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'ISSUER_DATABASE_URL']));
    expect([...read].filter((name) => !isPlatformSetting(name))).toEqual([]);
  });

  it('are not passed on to a process a test starts; what else the test process has is', () => {
    const caller = { PASSPORT_ADMIN_TOKEN: 'callers-admin-token', DATABASE_URL: 'postgresql://caller@127.0.0.1:9/caller', PGPASSWORD: 'caller', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' };
    const before = { ...process.env };
    Object.assign(process.env, caller);
    try {
      const env = processEnv({ PASSPORT_DATA_DIR: '/tmp/given' });
      for (const name of Object.keys(caller)) expect(env[name], name).toBeUndefined();
      expect(env).toMatchObject({ PATH: process.env.PATH, PASSPORT_DATA_DIR: '/tmp/given' });
    } finally {
      for (const name of Object.keys(caller)) if (before[name] === undefined) delete process.env[name];
      Object.assign(process.env, before);
    }
  });
});
