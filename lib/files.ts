/**
 * Files the platform writes whole or not at all (a backup, the tokens file, the key-encryption key),
 * in folders where someone else may be able to write too.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Why a file could not be put in place safely; its message is one sentence for the operator. */
export class FilePlacementError extends Error {
  override name = 'FilePlacementError';
}

/**
 * Writes `file` through a staging file beside it, then renames it over `file`. The staging name has
 * random bytes in it, so no one can plant a link there ahead, and it is created exclusively without
 * following a link (O_CREAT | O_EXCL | O_NOFOLLOW), mode 0600: a planted link makes the open fail,
 * never redirects the write. Before the rename the staging name must still be the file written (same
 * device and inode), so a link swapped in meanwhile is not moved into place; the rename acts on names,
 * so a link planted at `file` itself is replaced, not followed. On a failure the staging file is
 * removed and `file` is left as it was.
 */
export async function replaceFile(file: string, write: (handle: FileHandle) => Promise<void>): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const staged = `${file}.${randomBytes(8).toString('hex')}.partial`;
  const handle = await open(staged, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    try {
      await write(handle);
      await handle.sync();
      const [written, named] = await Promise.all([handle.stat(), lstat(staged)]);
      if (written.ino !== named.ino || written.dev !== named.dev) {
        throw new FilePlacementError(`${staged} was replaced while it was written, so ${file} was left as it was: make its folder writable by this user alone.`);
      }
    } finally {
      await handle.close();
    }
    await rename(staged, file);
  } catch (error) {
    // Removes the name only: a link put there is unlinked, not followed.
    await rm(staged, { force: true }).catch(() => {});
    throw error;
  }
}

/** Writes every chunk of `source` to `handle` in turn (a stream into a file replaceFile writes; the handle stays open). */
export async function writeChunks(handle: FileHandle, source: AsyncIterable<Uint8Array>): Promise<void> {
  for await (const chunk of source) await handle.write(chunk);
}
