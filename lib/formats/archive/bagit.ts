/**
 * BagIt 1.0 (RFC 8493) bags with SHA-512 manifests, serialized as one deterministic ustar archive.
 *
 * Layout inside the archive, in this (byte-wise sorted) order:
 *
 *   <name>/  bag-info.txt  bagit.txt  data/…  manifest-sha512.txt  tagmanifest-sha512.txt
 *
 * The sort puts every file whose content depends on digests after the files being digested: the
 * two tag files before `data/` need only sizes, which are declared up front; `manifest-sha512.txt`
 * follows the payload and `tagmanifest-sha512.txt` the other tag files. So the bag is written in
 * one pass: each payload file is read once, hashed as its chunks go by, and its chunks are handed
 * on without being copied or kept. Memory holds one chunk plus the small tag files, whatever the
 * payload size, and the total archive size is known before the first byte.
 */
import { createHash, type Hash } from 'node:crypto';
import { ArchiveError } from './errors.js';
import { splitUstarPath, tarEntryLength, TAR_MAX_ENTRY_SIZE, TAR_TRAILER_SIZE, writeTar, type ByteSource, type TarEntry } from './tar.js';

/** A payload file, at a bag-relative path under `data/`, given whole or as chunks of a declared size. */
export type PayloadFile =
  | { readonly path: string; readonly bytes: Uint8Array }
  | {
      readonly path: string;
      readonly size: number;
      /** Called once, when the file's turn comes; must yield exactly `size` bytes. */
      readonly open: () => ByteSource;
    };

/** bag-info.txt metadata chosen by the archive; the derived elements are computed. */
export interface BagInfo {
  readonly sourceOrganization: string;
  readonly contactEmail?: string;
  readonly externalDescription?: string;
  /** The identifier of what the bag holds (the passport id). */
  readonly externalIdentifier: string;
  readonly bagGroupIdentifier?: string;
  /** The archive's own identifier for the bag (the snapshot id). */
  readonly internalSenderIdentifier?: string;
  /** The software that made the bag, e.g. `passport-archive/0.1.0`. */
  readonly bagSoftwareAgent: string;
}

export interface BagRequest {
  /** The top-level directory of the serialized bag (the snapshot id): one safe path segment. */
  readonly name: string;
  /** RFC 3339 UTC instant: `Bagging-Date` is its date, and every archive entry's mtime is it. */
  readonly baggedAt: string;
  readonly info: BagInfo;
  readonly payload: readonly PayloadFile[];
}

export interface BagFileDigest {
  /** Path relative to the bag's base directory, as manifests name it (before percent-encoding). */
  readonly path: string;
  readonly size: number;
  /** Lowercase hex SHA-512 of the file's bytes. */
  readonly sha512: string;
}

export interface BagSummary {
  readonly name: string;
  /** Length of the serialized archive in bytes. */
  readonly size: number;
  /** Lowercase hex SHA-512 of the serialized archive: what a notarization signs. */
  readonly sha512: string;
  readonly payloadOxum: string;
  /** Payload files in manifest order. */
  readonly payload: readonly BagFileDigest[];
  /** Tag files in archive order, the tag manifest last. */
  readonly tagFiles: readonly BagFileDigest[];
  /** Lowercase hex SHA-512 of `tagmanifest-sha512.txt`, which fixes the whole bag independently of its serialization. */
  readonly tagmanifestSha512: string;
}

/** The serialized bag as chunks, readable once; `Readable.from(bag)` makes it a Node stream. */
export interface BagStream extends AsyncIterable<Uint8Array> {
  readonly name: string;
  /** Total archive length, known before the first chunk is read. */
  readonly size: number;
  /** Digests of the archive and its files; throws `BAG_INCOMPLETE` until every chunk was read. */
  summary(): BagSummary;
}

/** The bag declaration of RFC 8493 §2.1.1. */
export const BAGIT_DECLARATION = 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n';
export const PAYLOAD_MANIFEST = 'manifest-sha512.txt';
export const TAG_MANIFEST = 'tagmanifest-sha512.txt';

const encoder = new TextEncoder();
const SHA512_HEX_LENGTH = 128;
const RFC3339_UTC = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?Z$/;

/**
 * Validates the request at once (throwing `ArchiveError`) and returns the bag as a one-shot stream.
 * A payload file's `open` is called only when the stream reaches that file.
 */
export function bagStream(request: BagRequest): BagStream {
  const name = checkBagName(request.name);
  const mtime = baggingSeconds(request.baggedAt);
  const payload = sortPayload(request.payload);
  const octets = payload.reduce((sum, file) => sum + fileSize(file), 0);
  const payloadOxum = `${octets}.${payload.length}`;
  const bagInfo = encoder.encode(formatBagInfo(request.info, request.baggedAt.slice(0, 10), payloadOxum));
  const declaration = encoder.encode(BAGIT_DECLARATION);
  const directories = payloadDirectories(payload);
  // Refuse an unwritable path now rather than halfway through the stream.
  for (const path of ['', ...directories, ...payload.map((file) => file.path), TAG_MANIFEST]) splitUstarPath(`${name}/${path}`);

  const payloadManifestLength = payload.reduce((sum, file) => sum + manifestLineLength(file.path), 0);
  const tagManifestLength = ['bag-info.txt', 'bagit.txt', PAYLOAD_MANIFEST].reduce((sum, path) => sum + manifestLineLength(path), 0);
  const size =
    tarEntryLength(0) * (1 + directories.length) +
    [bagInfo.length, declaration.length, payloadManifestLength, tagManifestLength].reduce((sum, length) => sum + tarEntryLength(length), 0) +
    payload.reduce((sum, file) => sum + tarEntryLength(fileSize(file)), 0) +
    TAR_TRAILER_SIZE;

  const payloadDigests: BagFileDigest[] = [];
  const tagDigests: BagFileDigest[] = [];
  let summary: BagSummary | undefined;
  let started = false;

  const tagFile = (path: string, bytes: Uint8Array): TarEntry => {
    tagDigests.push({ path, size: bytes.length, sha512: sha512Hex(bytes) });
    return { path: `${name}/${path}`, type: 'file', size: bytes.length, mtime, content: [bytes] };
  };

  // Pulled lazily by the tar writer, which drains each file before asking for the next entry:
  // by the time the manifests are generated, every digest they list has been computed.
  async function* entries(): AsyncGenerator<TarEntry> {
    yield { path: `${name}/`, type: 'directory', size: 0, mtime };
    yield tagFile('bag-info.txt', bagInfo);
    yield tagFile('bagit.txt', declaration);
    const pending = [...directories.map((path) => ({ path, file: undefined })), ...payload.map((file) => ({ path: file.path, file }))];
    pending.sort((a, b) => compareBytes(a.path, b.path));
    for (const { path, file } of pending) {
      if (!file) {
        yield { path: `${name}/${path}`, type: 'directory', size: 0, mtime };
        continue;
      }
      const size = fileSize(file);
      const content = 'bytes' in file ? [file.bytes] : file.open();
      yield {
        path: `${name}/${path}`,
        type: 'file',
        size,
        mtime,
        content: hashing(content, (sha512) => payloadDigests.push({ path, size, sha512 })),
      };
    }
    const manifest = encoder.encode(payloadDigests.map(({ path, sha512 }) => manifestLine(sha512, path)).join(''));
    yield tagFile(PAYLOAD_MANIFEST, manifest);
    const tagManifest = encoder.encode(tagDigests.map(({ path, sha512 }) => manifestLine(sha512, path)).join(''));
    yield tagFile(TAG_MANIFEST, tagManifest);
  }

  async function* chunks(): AsyncGenerator<Uint8Array> {
    if (started) throw new Error('a bag stream can be read only once');
    started = true;
    const whole = createHash('sha512');
    let written = 0;
    for await (const chunk of writeTar(entries())) {
      whole.update(chunk);
      written += chunk.byteLength;
      yield chunk;
    }
    if (written !== size) throw new Error(`bag length ${written} differs from the precomputed ${size}`);
    const tagmanifest = tagDigests[tagDigests.length - 1]!;
    summary = { name, size, sha512: whole.digest('hex'), payloadOxum, payload: payloadDigests, tagFiles: tagDigests, tagmanifestSha512: tagmanifest.sha512 };
  }

  return {
    name,
    size,
    [Symbol.asyncIterator]: () => chunks(),
    summary() {
      if (!summary) throw new ArchiveError('BAG_INCOMPLETE', 'the bag has not been read to its end');
      return summary;
    },
  };
}

/** Builds the bag into one buffer of its precomputed size: the only copy of the archive bytes. */
export async function buildBag(request: BagRequest): Promise<{ bytes: Uint8Array; summary: BagSummary }> {
  const stream = bagStream(request);
  const bytes = new Uint8Array(stream.size);
  let offset = 0;
  for await (const chunk of stream) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, summary: stream.summary() };
}

/** RFC 8493 §2.1.3: in manifests, CR, LF and `%` in a path (and only those) are percent-encoded. */
export function encodeManifestPath(path: string): string {
  return path.replace(/[%\r\n]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/**
 * A manifest line. Two spaces separate digest and path: RFC 8493 allows any run of linear
 * whitespace, and two spaces is the form `sha512sum -c` reads.
 */
function manifestLine(sha512: string, path: string): string {
  return `${sha512}  ${encodeManifestPath(path)}\n`;
}

function manifestLineLength(path: string): number {
  return SHA512_HEX_LENGTH + 2 + encoder.encode(encodeManifestPath(path)).length + 1;
}

/**
 * bag-info.txt: the reserved elements in the order RFC 8493 §2.2.2 lists them, then
 * Bag-Software-Agent, the unreserved element bagit-python and other tools write.
 */
function formatBagInfo(info: BagInfo, baggingDate: string, payloadOxum: string): string {
  const elements: [string, string | undefined][] = [
    ['Source-Organization', info.sourceOrganization],
    ['Contact-Email', info.contactEmail],
    ['External-Description', info.externalDescription],
    ['Bagging-Date', baggingDate],
    ['External-Identifier', info.externalIdentifier],
    ['Payload-Oxum', payloadOxum],
    ['Bag-Group-Identifier', info.bagGroupIdentifier],
    ['Internal-Sender-Identifier', info.internalSenderIdentifier],
    ['Bag-Software-Agent', info.bagSoftwareAgent],
  ];
  return elements
    .filter((element): element is [string, string] => element[1] !== undefined)
    .map(([label, value]) => {
      // A value is written on one line, unfolded, so readers need no continuation-line handling.
      if (value.trim() === '' || /[\r\n]/.test(value) || value !== value.trim()) {
        throw new ArchiveError('INVALID_BAG_INFO', `${label} must be a non-empty single line without surrounding whitespace`);
      }
      return `${label}: ${value}\n`;
    })
    .join('');
}

function checkBagName(name: string): string {
  if (name === '' || name === '.' || name === '..' || /[/\\\0\r\n]/.test(name)) {
    throw new ArchiveError('INVALID_BAG_NAME', `"${name}" is not a single path segment`);
  }
  return name;
}

function baggingSeconds(baggedAt: string): number {
  const match = RFC3339_UTC.exec(baggedAt);
  const milliseconds = match ? Date.parse(baggedAt) : Number.NaN;
  // The round trip rejects dates Date.parse would roll over, such as February 30.
  if (!match || Number.isNaN(milliseconds) || new Date(milliseconds).toISOString().slice(0, 19) !== `${match[1]}T${match[2]}` || milliseconds < 0) {
    throw new ArchiveError('INVALID_BAGGING_DATE', `"${baggedAt}" is not an RFC 3339 UTC instant (YYYY-MM-DDTHH:MM:SSZ) after 1970`);
  }
  return Math.floor(milliseconds / 1000);
}

function sortPayload(files: readonly PayloadFile[]): PayloadFile[] {
  for (const file of files) checkPayloadPath(file.path);
  const sorted = [...files].sort((a, b) => compareBytes(a.path, b.path));
  const paths = new Set(sorted.map((file) => file.path));
  for (const [index, file] of sorted.entries()) {
    if (index > 0 && sorted[index - 1]!.path === file.path) {
      throw new ArchiveError('DUPLICATE_PAYLOAD_PATH', `"${file.path}" is given twice`);
    }
    for (let slash = file.path.indexOf('/', 5); slash !== -1; slash = file.path.indexOf('/', slash + 1)) {
      if (paths.has(file.path.slice(0, slash))) {
        throw new ArchiveError('DUPLICATE_PAYLOAD_PATH', `"${file.path.slice(0, slash)}" is both a file and a directory`);
      }
    }
    fileSize(file);
  }
  return sorted;
}

function checkPayloadPath(path: string): void {
  const segments = path.split('/');
  if (segments[0] !== 'data' || segments.length < 2 || segments.some((segment) => segment === '' || segment === '.' || segment === '..') || path.includes('\0')) {
    throw new ArchiveError('INVALID_PAYLOAD_PATH', `"${path}" is not a relative file path under data/ without empty, "." or ".." segments`);
  }
}

function fileSize(file: PayloadFile): number {
  const size = 'bytes' in file ? file.bytes.byteLength : file.size;
  if (!Number.isSafeInteger(size) || size < 0) throw new ArchiveError('PAYLOAD_SIZE_MISMATCH', `"${file.path}" declares an invalid size ${size}`);
  if (size > TAR_MAX_ENTRY_SIZE) throw new ArchiveError('ENTRY_TOO_LARGE', `"${file.path}" has ${size} bytes; ustar allows at most ${TAR_MAX_ENTRY_SIZE}`);
  return size;
}

/** `data/` and every directory between it and a payload file, each ending with `/`. */
function payloadDirectories(payload: readonly PayloadFile[]): string[] {
  const directories = new Set<string>(['data/']);
  for (const { path } of payload) {
    for (let slash = path.indexOf('/'); slash !== -1; slash = path.indexOf('/', slash + 1)) directories.add(path.slice(0, slash + 1));
  }
  return [...directories];
}

/** Orders paths by their UTF-8 bytes, which is independent of locale and of UTF-16 surrogates. */
function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

async function* hashing(source: ByteSource, done: (sha512: string) => void): AsyncGenerator<Uint8Array> {
  const hash: Hash = createHash('sha512');
  for await (const chunk of source) {
    hash.update(chunk);
    yield chunk;
  }
  done(hash.digest('hex'));
}

function sha512Hex(bytes: Uint8Array): string {
  return createHash('sha512').update(bytes).digest('hex');
}
