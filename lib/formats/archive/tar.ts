/**
 * A deterministic POSIX ustar writer (IEEE Std 1003.1, pax "ustar Interchange Format").
 *
 * Only what an archive of plain files needs: regular files and directories, owner 0:0 with empty
 * user and group names, mode 0644 for files and 0755 for directories, one mtime given by the
 * caller. Nothing of the machine that writes the archive leaks into it, so equal input gives
 * equal bytes. Paths longer than the 100-byte name field are split into the 155-byte prefix
 * field; a path that cannot be split is refused rather than written with a pax or GNU extension.
 */
import { ArchiveError } from './errors.js';

export const TAR_BLOCK_SIZE = 512;
/** The end of an archive: two zero-filled blocks. */
export const TAR_TRAILER_SIZE = 2 * TAR_BLOCK_SIZE;
/** The largest size an 11-digit octal size field can state. */
export const TAR_MAX_ENTRY_SIZE = 8 ** 11 - 1;

/** Chunks of bytes, read once, in order. */
export type ByteSource = Iterable<Uint8Array> | AsyncIterable<Uint8Array>;

export interface TarEntry {
  /** Path inside the archive, `/`-separated, relative; a directory's path ends with `/`. */
  readonly path: string;
  readonly type: 'file' | 'directory';
  /** Content length in bytes; 0 for a directory. */
  readonly size: number;
  /** Modification time, whole seconds since 1970-01-01T00:00:00Z. */
  readonly mtime: number;
  /** A file's content, exactly `size` bytes in all; absent for a directory. */
  readonly content?: ByteSource;
}

const FILE_MODE = 0o644;
const DIRECTORY_MODE = 0o755;
const NAME_FIELD = 100;
const PREFIX_FIELD = 155;
const encoder = new TextEncoder();

/** The archive bytes an entry takes: its header block plus its content padded to whole blocks. */
export function tarEntryLength(size: number): number {
  return TAR_BLOCK_SIZE + Math.ceil(size / TAR_BLOCK_SIZE) * TAR_BLOCK_SIZE;
}

/** The 512-byte ustar header of an entry. */
export function ustarHeader(entry: Omit<TarEntry, 'content'>): Uint8Array {
  const isDirectory = entry.type === 'directory';
  if (isDirectory !== entry.path.endsWith('/')) {
    throw new ArchiveError('INVALID_PAYLOAD_PATH', `"${entry.path}": only a directory's path ends with "/"`);
  }
  if (entry.path.includes('\0')) throw new ArchiveError('INVALID_PAYLOAD_PATH', 'a tar path cannot contain NUL');
  if (!Number.isSafeInteger(entry.size) || entry.size < 0 || (isDirectory && entry.size !== 0)) {
    throw new ArchiveError('PAYLOAD_SIZE_MISMATCH', `"${entry.path}": size ${entry.size} is not a valid entry size`);
  }
  if (entry.size > TAR_MAX_ENTRY_SIZE) {
    throw new ArchiveError('ENTRY_TOO_LARGE', `"${entry.path}" has ${entry.size} bytes; ustar allows at most ${TAR_MAX_ENTRY_SIZE}`);
  }
  if (!Number.isSafeInteger(entry.mtime) || entry.mtime < 0 || entry.mtime > 8 ** 11 - 1) {
    throw new ArchiveError('INVALID_BAGGING_DATE', `mtime ${entry.mtime} does not fit a ustar header`);
  }

  const header = new Uint8Array(TAR_BLOCK_SIZE);
  const { name, prefix } = splitUstarPath(entry.path);
  header.set(name, 0);
  writeOctal(header, 100, 8, isDirectory ? DIRECTORY_MODE : FILE_MODE);
  writeOctal(header, 108, 8, 0); // uid
  writeOctal(header, 116, 8, 0); // gid
  writeOctal(header, 124, 12, entry.size);
  writeOctal(header, 136, 12, entry.mtime);
  header[156] = isDirectory ? 0x35 : 0x30; // typeflag '5' or '0'
  header.set(encoder.encode('ustar\0'), 257); // magic
  header.set(encoder.encode('00'), 263); // version
  // uname and gname (265, 297) stay empty: readers fall back to the numeric ids.
  writeOctal(header, 329, 8, 0); // devmajor
  writeOctal(header, 337, 8, 0); // devminor
  header.set(prefix, 345);

  // The checksum is the sum of all header bytes with its own field read as eight spaces.
  header.fill(0x20, 148, 156);
  const checksum = header.reduce((sum, byte) => sum + byte, 0);
  writeOctal(header, 148, 7, checksum);
  header[155] = 0x20;
  return header;
}

/**
 * Serializes entries in the order given. Content is passed through chunk by chunk, so memory
 * holds one chunk and one header at a time however large the files are.
 */
export async function* writeTar(entries: Iterable<TarEntry> | AsyncIterable<TarEntry>): AsyncGenerator<Uint8Array, void, undefined> {
  for await (const entry of entries) {
    yield ustarHeader(entry);
    if (entry.type === 'directory') continue;
    let written = 0;
    for await (const chunk of entry.content ?? []) {
      written += chunk.byteLength;
      if (written > entry.size) break;
      if (chunk.byteLength > 0) yield chunk;
    }
    if (written !== entry.size) {
      throw new ArchiveError('PAYLOAD_SIZE_MISMATCH', `"${entry.path}" declared ${entry.size} bytes but ${written > entry.size ? 'yielded more' : `yielded ${written}`}`);
    }
    const padding = (TAR_BLOCK_SIZE - (entry.size % TAR_BLOCK_SIZE)) % TAR_BLOCK_SIZE;
    if (padding > 0) yield new Uint8Array(padding);
  }
  yield new Uint8Array(TAR_TRAILER_SIZE);
}

/**
 * Splits a path over the ustar name and prefix fields at a `/`, keeping the longest name that
 * fits; throws `PATH_TOO_LONG` when no split fits.
 */
export function splitUstarPath(path: string): { name: Uint8Array; prefix: Uint8Array } {
  const bytes = encoder.encode(path);
  if (bytes.length <= NAME_FIELD) return { name: bytes, prefix: new Uint8Array(0) };
  // The separating slash belongs to neither field; the name after it must not be empty.
  for (let slash = bytes.length - NAME_FIELD - 1; slash <= Math.min(PREFIX_FIELD, bytes.length - 2); slash += 1) {
    if (slash >= 1 && bytes[slash] === 0x2f) {
      return { name: bytes.subarray(slash + 1), prefix: bytes.subarray(0, slash) };
    }
  }
  throw new ArchiveError('PATH_TOO_LONG', `"${path}" (${bytes.length} bytes) does not fit ustar: at most ${PREFIX_FIELD} bytes of directories, "/", then at most ${NAME_FIELD} bytes`);
}

/** Zero-padded octal digits followed by a NUL, filling `length` bytes. */
function writeOctal(target: Uint8Array, offset: number, length: number, value: number): void {
  const digits = value.toString(8).padStart(length - 1, '0');
  if (digits.length > length - 1) throw new RangeError(`${value} does not fit ${length - 1} octal digits`);
  target.set(encoder.encode(digits), offset);
  target[offset + length - 1] = 0;
}
