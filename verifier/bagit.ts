/**
 * A validator of BagIt 1.0 bags (RFC 8493) serialized as one POSIX ustar archive, for bags received
 * from elsewhere: it trusts nothing of the archive and reports every departure it finds.
 *
 * - ustar: header checksums, magic, sizes within the archive, regular files and directories only
 *   (links, devices and pax/GNU extension headers are refused), relative paths without `..`, no
 *   path twice, the end-of-archive blocks and nothing but zeros after them;
 * - one top-level directory, the bag's base directory;
 * - `bagit.txt`: exactly `BagIt-Version: 1.0` (or 0.97) and `Tag-File-Character-Encoding: UTF-8`;
 * - `bag-info.txt` labels and values (continuation lines folded), `Payload-Oxum` against the payload;
 * - every payload manifest (`manifest-<alg>.txt`, at least one) and tag manifest
 *   (`tagmanifest-<alg>.txt`): every line well formed (`<digest> <path>`, CR, LF and % percent-
 *   encoded), its file present and its digest right; no payload file missing from any payload
 *   manifest; payload manifests list only `data/…`, tag manifests no payload file and no tag manifest;
 * - `fetch.txt` makes a bag incomplete: such a bag cannot be checked offline.
 */
import { createHash, getHashes } from 'node:crypto';
import { failed, notChecked, ok, type Finding } from './report.js';

export interface TarFile {
  readonly path: string;
  readonly bytes: Uint8Array;
}

export interface BagOptions {
  /** bag-info.txt must carry Payload-Oxum (RFC 8493 makes it optional). */
  readonly requirePayloadOxum?: boolean;
  /** Every tag file but the tag manifests must be listed in every tag manifest (RFC 8493: SHOULD). */
  readonly requireCompleteTagManifests?: boolean;
}

export interface BagValidation {
  readonly findings: Finding[];
  /** The bag's base directory name, when the archive has one. */
  readonly name?: string;
  /** Every file by its path relative to the base directory. */
  readonly files: ReadonlyMap<string, Uint8Array>;
  /** bag-info.txt elements, label to values, in order. */
  readonly info: ReadonlyMap<string, readonly string[]>;
}

const BLOCK = 512;
const DIGEST_ALGORITHMS: Readonly<Record<string, string>> = { md5: 'md5', sha1: 'sha1', sha224: 'sha224', sha256: 'sha256', sha384: 'sha384', sha512: 'sha512' };
const utf8 = new TextDecoder('utf-8', { fatal: true });

class TarError extends Error {}

/** Reads a ustar archive of regular files and directories; throws TarError with the first problem. */
export function readUstar(archive: Uint8Array): { files: TarFile[]; directories: string[] } {
  const files: TarFile[] = [];
  const directories: string[] = [];
  const seen = new Set<string>();
  let offset = 0;
  for (;;) {
    if (offset + BLOCK > archive.length) throw new TarError(`the archive ends at byte ${archive.length} without its two end-of-archive blocks`);
    const header = archive.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) {
      const next = archive.subarray(offset + BLOCK, offset + 2 * BLOCK);
      if (next.length < BLOCK || !next.every((byte) => byte === 0)) throw new TarError(`a lone zero block at byte ${offset} instead of the two end-of-archive blocks`);
      if (!archive.subarray(offset + 2 * BLOCK).every((byte) => byte === 0)) throw new TarError('data follows the end-of-archive blocks');
      return { files, directories };
    }
    const stored = octal(header, 148, 8, 'checksum', offset);
    let sum = 0;
    for (let index = 0; index < BLOCK; index += 1) sum += index >= 148 && index < 156 ? 0x20 : header[index]!;
    if (stored !== sum) throw new TarError(`the header at byte ${offset} has checksum ${stored}, its bytes sum to ${sum}`);
    const magic = Buffer.from(header.subarray(257, 265)).toString('latin1');
    if (magic !== 'ustar\u000000' && magic !== 'ustar  \u0000') throw new TarError(`the header at byte ${offset} is not a ustar header`);
    const name = text(header.subarray(0, 100), offset);
    const prefix = text(header.subarray(345, 500), offset);
    const path = prefix === '' ? name : `${prefix}/${name}`;
    const size = octal(header, 124, 12, 'size', offset);
    const typeflag = String.fromCharCode(header[156]!);
    const start = offset + BLOCK;
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
    if (start + size > archive.length) throw new TarError(`"${path}" declares ${size} bytes, past the end of the archive`);
    if (typeflag !== '0' && typeflag !== '\u0000' && typeflag !== '5') throw new TarError(`"${path}" has entry type "${typeflag}": only regular files and directories are accepted`);
    const clean = path.replace(/\/+$/, '');
    if (clean === '' || path.startsWith('/') || clean.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
      throw new TarError(`"${path}" is not a relative path without empty, "." or ".." segments`);
    }
    if (seen.has(clean)) throw new TarError(`"${clean}" appears twice in the archive`);
    seen.add(clean);
    if (typeflag === '5') {
      if (size !== 0) throw new TarError(`directory "${path}" declares ${size} bytes`);
      directories.push(clean);
    } else {
      if (path.endsWith('/')) throw new TarError(`regular file "${path}" has a directory's path`);
      files.push({ path: clean, bytes: archive.subarray(start, start + size) });
    }
  }
}

function text(field: Uint8Array, offset: number): string {
  const end = field.indexOf(0);
  try {
    return utf8.decode(end < 0 ? field : field.subarray(0, end));
  } catch {
    throw new TarError(`a path in the header at byte ${offset} is not UTF-8`);
  }
}

function octal(header: Uint8Array, at: number, length: number, what: string, offset: number): number {
  if ((header[at]! & 0x80) !== 0) throw new TarError(`the ${what} field at byte ${offset} uses base-256, which ustar does not`);
  const digits = Buffer.from(header.subarray(at, at + length))
    .toString('latin1')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ustar pads numbers with NULs
    .replace(/[\u0000 ]+$/, '')
    .replace(/^ +/, '');
  if (!/^[0-7]+$/.test(digits)) throw new TarError(`the ${what} field of the header at byte ${offset} is not octal`);
  return Number.parseInt(digits, 8);
}

/** Splits a tag file into lines: LF, CRLF or CR end a line (RFC 8493 §2.1); a final unterminated line counts. */
function lines(content: string): string[] {
  const split = content.split(/\r\n|\n|\r/);
  if (split[split.length - 1] === '') split.pop();
  return split;
}

export function validateBag(archive: Uint8Array, options: BagOptions = {}): BagValidation {
  const findings: Finding[] = [];
  const files = new Map<string, Uint8Array>();
  const info = new Map<string, string[]>();
  let read: ReturnType<typeof readUstar>;
  try {
    read = readUstar(archive);
  } catch (error) {
    if (!(error instanceof TarError)) throw error;
    findings.push(failed('bagit.tar', 'MALFORMED_TAR', error.message));
    return { findings, files, info };
  }
  const tops = new Set([...read.files.map((file) => file.path), ...read.directories].map((path) => path.split('/')[0]!));
  if (tops.size !== 1 || read.files.some((file) => !file.path.includes('/'))) {
    findings.push(failed('bagit.layout', 'BAG_LAYOUT', `a serialized bag has one top-level directory; this archive has ${[...tops].join(', ') || 'nothing'}`));
    return { findings, files, info };
  }
  const name = [...tops][0]!;
  for (const file of read.files) files.set(file.path.slice(name.length + 1), file.bytes);
  findings.push(ok('bagit.tar', `a ustar archive of ${read.files.length} files under ${name}/`));

  const declaration = decodeTag(files, 'bagit.txt', findings);
  if (declaration === undefined) {
    if (!files.has('bagit.txt')) findings.push(failed('bagit.declaration', 'BAGIT_TXT_MISSING', 'the bag has no bagit.txt'));
  } else {
    const declared = lines(declaration);
    const version = /^BagIt-Version: (\d+\.\d+)$/.exec(declared[0] ?? '')?.[1];
    const encoding = /^Tag-File-Character-Encoding: (.+)$/.exec(declared[1] ?? '')?.[1];
    if (declared.length !== 2 || version === undefined || encoding === undefined) {
      findings.push(failed('bagit.declaration', 'BAGIT_TXT_INVALID', 'bagit.txt must be exactly the lines "BagIt-Version: M.N" and "Tag-File-Character-Encoding: ENCODING"'));
    } else if (version !== '1.0' && version !== '0.97') {
      findings.push(failed('bagit.declaration', 'BAGIT_VERSION_UNSUPPORTED', `BagIt-Version ${version}: this validator reads 1.0 (RFC 8493) and 0.97`));
    } else if (encoding.toUpperCase() !== 'UTF-8') {
      findings.push(failed('bagit.declaration', 'TAG_ENCODING_UNSUPPORTED', `Tag-File-Character-Encoding ${encoding}: this validator reads UTF-8 tag files`));
    } else findings.push(ok('bagit.declaration', `BagIt-Version ${version}, tag files in ${encoding}`));
  }

  if (files.has('fetch.txt')) findings.push(notChecked('bagit.fetch', 'BAG_INCOMPLETE', 'fetch.txt lists payload to download: an incomplete bag cannot be checked offline'));

  const payload = [...files.keys()].filter((path) => path.startsWith('data/'));
  const bagInfo = decodeTag(files, 'bag-info.txt', findings);
  if (bagInfo !== undefined) readBagInfo(bagInfo, info, findings);
  const oxum = info.get('Payload-Oxum');
  const octets = payload.reduce((sum, path) => sum + files.get(path)!.length, 0);
  if (oxum === undefined) {
    if (options.requirePayloadOxum) findings.push(failed('bagit.oxum', 'PAYLOAD_OXUM_MISSING', 'bag-info.txt has no Payload-Oxum'));
  } else if (oxum.length !== 1 || !/^\d+\.\d+$/.test(oxum[0]!)) {
    findings.push(failed('bagit.oxum', 'PAYLOAD_OXUM_INVALID', 'Payload-Oxum must appear once, as <octets>.<count>'));
  } else if (oxum[0] !== `${octets}.${payload.length}`) {
    findings.push(failed('bagit.oxum', 'PAYLOAD_OXUM_MISMATCH', `Payload-Oxum says ${oxum[0]}, the payload is ${octets} octets in ${payload.length} files`));
  } else findings.push(ok('bagit.oxum', `Payload-Oxum ${oxum[0]} matches the payload`));

  const topLevel = [...files.keys()].filter((path) => !path.includes('/'));
  const payloadManifests = topLevel.filter((path) => /^manifest-[a-z0-9]+\.txt$/.test(path)).sort();
  const tagManifests = topLevel.filter((path) => /^tagmanifest-[a-z0-9]+\.txt$/.test(path)).sort();
  if (payloadManifests.length === 0) findings.push(failed('bagit.manifest', 'PAYLOAD_MANIFEST_MISSING', 'the bag has no payload manifest (manifest-<algorithm>.txt)'));
  for (const manifest of payloadManifests) {
    const listed = checkManifest(manifest, files, findings, 'payload');
    if (!listed) continue;
    const unlisted = payload.filter((path) => !listed.has(path));
    for (const path of unlisted) findings.push(failed('bagit.manifest', 'PAYLOAD_FILE_UNLISTED', `payload file ${path} is not listed in ${manifest}`));
  }
  const tagFiles = [...files.keys()].filter((path) => !path.startsWith('data/') && !tagManifests.includes(path));
  for (const manifest of tagManifests) {
    const listed = checkManifest(manifest, files, findings, 'tag');
    if (!listed) continue;
    const unlisted = tagFiles.filter((path) => !listed.has(path));
    for (const path of unlisted) {
      const message = `tag file ${path} is not listed in ${manifest}`;
      findings.push(options.requireCompleteTagManifests ? failed('bagit.tagmanifest', 'TAG_FILE_UNLISTED', message) : { check: 'bagit.tagmanifest', status: 'info', message });
    }
  }
  if (options.requireCompleteTagManifests && tagManifests.length === 0) findings.push(failed('bagit.tagmanifest', 'TAG_MANIFEST_MISSING', 'the bag has no tag manifest (tagmanifest-<algorithm>.txt)'));
  return { findings, name, files, info };
}

function decodeTag(files: ReadonlyMap<string, Uint8Array>, path: string, findings: Finding[]): string | undefined {
  const bytes = files.get(path);
  if (bytes === undefined) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    findings.push(failed('bagit.encoding', 'TAG_FILE_NOT_UTF8', `${path} is not UTF-8`));
    return undefined;
  }
}

function readBagInfo(content: string, info: Map<string, string[]>, findings: Finding[]): void {
  let last: { label: string; index: number } | undefined;
  for (const [number, line] of lines(content).entries()) {
    if (/^[ \t]/.test(line) && last) {
      const values = info.get(last.label)!;
      values[last.index] = `${values[last.index]} ${line.trim()}`;
      continue;
    }
    const match = /^([^:\s][^:]*?)[ \t]*:[ \t]*(.*)$/.exec(line);
    if (!match) {
      findings.push(failed('bagit.info', 'BAG_INFO_INVALID', `line ${number + 1} of bag-info.txt is not "Label: value"`));
      continue;
    }
    const values = info.get(match[1]!) ?? [];
    values.push(match[2]!);
    info.set(match[1]!, values);
    last = { label: match[1]!, index: values.length - 1 };
  }
}

/** Checks every line of one manifest; the set of paths it lists, or undefined when it could not be read. */
function checkManifest(manifest: string, files: ReadonlyMap<string, Uint8Array>, findings: Finding[], kind: 'payload' | 'tag'): Set<string> | undefined {
  const check = kind === 'payload' ? 'bagit.manifest' : 'bagit.tagmanifest';
  const algorithm = /^(?:tag)?manifest-([a-z0-9]+)\.txt$/.exec(manifest)![1]!;
  const hash = DIGEST_ALGORITHMS[algorithm];
  if (!hash || !getHashes().includes(hash)) {
    findings.push(notChecked(check, 'UNSUPPORTED_ALGORITHM', `${manifest}: digest algorithm ${algorithm} is not one this validator computes`));
    return undefined;
  }
  const content = decodeTag(files, manifest, findings);
  if (content === undefined) return undefined;
  const listed = new Set<string>();
  let problems = 0;
  const problem = (code: string, message: string) => {
    problems += 1;
    findings.push(failed(check, code, `${manifest}: ${message}`));
  };
  const hexLength = createHash(hash).digest('hex').length;
  for (const [number, line] of lines(content).entries()) {
    const match = /^([0-9A-Fa-f]+)[ \t]+(.+)$/.exec(line);
    if (!match || match[1]!.length !== hexLength) {
      problem('MANIFEST_LINE_INVALID', `line ${number + 1} is not "<${algorithm} digest> <path>"`);
      continue;
    }
    const path = match[2]!.replace(/%(0A|0D|25)/gi, (_encoded, code: string) => String.fromCharCode(Number.parseInt(code, 16)));
    if (path.startsWith('/') || path.includes('\\') || path.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
      problem('MANIFEST_PATH_INVALID', `line ${number + 1}: "${path}" is not a relative path inside the bag`);
      continue;
    }
    if (kind === 'payload' && !path.startsWith('data/')) {
      problem('MANIFEST_PATH_INVALID', `line ${number + 1}: ${path} is not a payload file (under data/)`);
      continue;
    }
    if (kind === 'tag' && (path.startsWith('data/') || /^tagmanifest-[a-z0-9]+\.txt$/.test(path))) {
      problem('MANIFEST_PATH_INVALID', `line ${number + 1}: a tag manifest lists neither payload files nor tag manifests, not ${path}`);
      continue;
    }
    if (listed.has(path)) {
      problem('MANIFEST_DUPLICATE', `line ${number + 1}: ${path} is listed twice`);
      continue;
    }
    listed.add(path);
    const bytes = files.get(path);
    if (bytes === undefined) {
      problem('MANIFEST_FILE_MISSING', `line ${number + 1}: ${path} is not in the bag`);
      continue;
    }
    const digest = createHash(hash).update(bytes).digest('hex');
    if (digest !== match[1]!.toLowerCase()) problem('MANIFEST_DIGEST_MISMATCH', `${path} has ${algorithm} ${digest}, the manifest says ${match[1]!.toLowerCase()}`);
  }
  if (problems === 0) findings.push(ok(check, `${manifest}: all ${listed.size} ${kind} files present with the listed ${algorithm} digests`));
  return listed;
}
