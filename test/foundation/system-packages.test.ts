// The first layer of `npm test` (bin/system-packages.ts): which Debian packages it finds missing in a
// real PATH, and the one sentence it gives someone who cannot install them.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decide, missingPackages, SYSTEM_PACKAGES } from '../../bin/system-packages.js';

const root = join(import.meta.dirname, '..', '..');
const folder = mkdtempSync(join(tmpdir(), 'system-packages-'));
chmodSync(folder, 0o755); // nobody (below) reads it
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** A PATH folder holding links to the real commands named, and files of the other names that are not executable. */
function pathWith(name: string, commands: string[], notExecutable: string[] = []): string {
  const bin = join(folder, name);
  mkdirSync(bin);
  for (const command of commands) symlinkSync(`/usr/bin/${command}`, join(bin, command));
  for (const file of notExecutable) writeFileSync(join(bin, file), '#!/bin/sh\n', { mode: 0o644 });
  return bin;
}

describe('the system packages layer', () => {
  it('finds every package present on this PATH (the layer ran before this one)', () => {
    expect(missingPackages(process.env.PATH ?? '')).toEqual([]);
  });

  it('names exactly the packages whose commands a PATH lacks, a non-executable file not counting', () => {
    const path = pathWith('some', ['g++', 'make', 'python3', 'promtool', 'curl', 'jq'], ['softhsm2-util']);
    expect(missingPackages(path).map(({ name }) => name)).toEqual(['softhsm2', 'prometheus']);
    expect(missingPackages(`${path}:${pathWith('rest', ['prometheus', 'softhsm2-util'])}`)).toEqual([]);
    // chromium, the fonts and PostgreSQL 15 are files at fixed places, present on this machine whatever the PATH.
    expect(missingPackages('').map(({ name }) => name)).toEqual(['softhsm2', 'prometheus', 'curl', 'jq', 'g++', 'make', 'python3']);
  });

  it('installs as root with apt-get, and otherwise says in one sentence what to run', () => {
    const missing = SYSTEM_PACKAGES.filter(({ name }) => name === 'chromium' || name === 'softhsm2');
    expect(decide([], { root: false, aptGet: true })).toEqual({ kind: 'ready' });
    expect(decide(missing, { root: true, aptGet: true })).toEqual({ kind: 'install', names: ['chromium', 'softhsm2'] });
    expect(decide(missing, { root: false, aptGet: true })).toEqual({
      kind: 'refuse',
      sentence: 'The tests need Debian packages that are not installed (chromium, softhsm2): run `sudo apt-get install -y --no-install-recommends chromium softhsm2`, then npm test again.',
    });
    expect(decide(missing, { root: true, aptGet: false })).toMatchObject({ kind: 'refuse', sentence: expect.stringContaining('(on Debian: `apt-get install') });
  });

  it('stops an ordinary user with that one sentence and exit 1', () => {
    const path = pathWith('user', ['g++', 'make', 'python3', 'curl', 'jq', 'apt-get']);
    // As root, run it as nobody: root would install instead.
    const result = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'bin', 'system-packages.ts')], {
      cwd: root,
      env: { PATH: path },
      encoding: 'utf8',
      ...(process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}),
    });
    expect(result.stderr).toBe(
      'The tests need Debian packages that are not installed (softhsm2, prometheus): run `sudo apt-get install -y --no-install-recommends softhsm2 prometheus`, then npm test again.\n',
    );
    expect(result.stdout).toBe('');
    expect(result.status).toBe(1);
  });
});
