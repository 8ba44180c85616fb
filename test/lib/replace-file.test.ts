/**
 * Files written whole through a staging file beside them (lib/files.ts), in a folder where someone
 * else plants links: the write never goes where a link points, and no link is moved into place.
 */
import { lstat, mkdtemp, readdir, readFile, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FilePlacementError, replaceFile } from '../../lib/files.js';

let folder: string;
let victim: string;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'replace-file-'));
  victim = join(folder, 'victim');
  await writeFile(victim, 'not yours\n', { mode: 0o644 });
});

afterEach(() => rm(folder, { recursive: true, force: true }));

describe('replaceFile', () => {
  it('replaces a link planted at the file itself with a file of its own, mode 0600, leaving the link’s target alone', async () => {
    const file = join(folder, 'tokens.json');
    await symlink(victim, file);
    await replaceFile(file, (handle) => handle.writeFile('secret\n'));
    expect((await lstat(file)).isFile()).toBe(true);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).toBe('secret\n');
    expect(await readFile(victim, 'utf8')).toBe('not yours\n');
    expect(await readdir(folder)).toEqual(['tokens.json', 'victim']);
  });

  it('refuses when the staging file is swapped for a link while it is written, moving nothing into place', async () => {
    const file = join(folder, 'platform.backup');
    await writeFile(file, 'the previous backup\n');
    const attempt = replaceFile(file, async (handle) => {
      await handle.writeFile('the new backup\n');
      const [staged] = (await readdir(folder)).filter((name) => name.endsWith('.partial'));
      await unlink(join(folder, staged!));
      await symlink(victim, join(folder, staged!));
    });
    await expect(attempt).rejects.toThrow(FilePlacementError);
    await expect(attempt).rejects.toThrow(/was replaced while it was written, so .*platform\.backup was left as it was/);
    expect((await lstat(file)).isFile()).toBe(true);
    expect(await readFile(file, 'utf8')).toBe('the previous backup\n');
    expect(await readFile(victim, 'utf8')).toBe('not yours\n');
    expect((await readdir(folder)).sort()).toEqual(['platform.backup', 'victim']);
  });

  it('leaves the file as it was and no staging file behind when the write fails', async () => {
    const file = join(folder, 'platform.backup');
    await writeFile(file, 'the previous backup\n');
    await expect(
      replaceFile(file, async (handle) => {
        await handle.writeFile('half');
        throw new Error('the database went away');
      }),
    ).rejects.toThrow('the database went away');
    expect(await readFile(file, 'utf8')).toBe('the previous backup\n');
    expect((await readdir(folder)).sort()).toEqual(['platform.backup', 'victim']);
  });
});
