/**
 * An independent reader of ustar archives and validator of BagIt 1.0 bags, written from POSIX
 * ustar and RFC 8493 for the tests only. It shares no code with the archive's producer and hashes
 * with @noble/hashes where the producer uses node:crypto.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

export interface TarMember {
  path: string;
  type: 'file' | 'directory';
  mode: number;
  uid: number;
  gid: number;
  uname: string;
  gname: string;
  mtime: number;
  size: number;
  content: Uint8Array;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Parses a ustar archive, checking every header checksum, the magic and the end-of-archive blocks. */
export function readTar(archive: Uint8Array): TarMember[] {
  const members: TarMember[] = [];
  let offset = 0;
  for (;;) {
    if (offset + 512 > archive.length) throw new Error('archive ends without two zero blocks');
    const header = archive.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) {
      const next = archive.subarray(offset + 512, offset + 1024);
      if (next.length !== 512 || !next.every((byte) => byte === 0)) throw new Error('a zero block not followed by a second one');
      if (offset + 1024 !== archive.length) throw new Error('bytes after the end-of-archive blocks');
      return members;
    }
    let sum = 0;
    for (let index = 0; index < 512; index += 1) sum += index >= 148 && index < 156 ? 32 : header[index]!;
    if (octal(header, 148, 8) !== sum) throw new Error(`bad header checksum at offset ${offset}`);
    if (text(header, 257, 6) !== 'ustar' || header[262] !== 0 || text(header, 263, 2) !== '00') throw new Error('not a POSIX ustar header');
    const name = text(header, 0, 100);
    const prefix = text(header, 345, 155);
    const typeflag = String.fromCharCode(header[156]!);
    if (typeflag !== '0' && typeflag !== '5') throw new Error(`unexpected typeflag ${typeflag}`);
    const size = octal(header, 124, 12);
    const start = offset + 512;
    members.push({
      path: prefix ? `${prefix}/${name}` : name,
      type: typeflag === '5' ? 'directory' : 'file',
      mode: octal(header, 100, 8),
      uid: octal(header, 108, 8),
      gid: octal(header, 116, 8),
      uname: text(header, 265, 32),
      gname: text(header, 297, 32),
      mtime: octal(header, 136, 12),
      size,
      content: archive.slice(start, start + size),
    });
    const padded = Math.ceil(size / 512) * 512;
    if (archive.subarray(start + size, start + padded).some((byte) => byte !== 0)) throw new Error('non-zero padding');
    offset = start + padded;
  }
}

function text(block: Uint8Array, offset: number, length: number): string {
  const field = block.subarray(offset, offset + length);
  const end = field.indexOf(0);
  return decoder.decode(end === -1 ? field : field.subarray(0, end));
}

function octal(block: Uint8Array, offset: number, length: number): number {
  const digits = text(block, offset, length).trim();
  if (!/^[0-7]+$/.test(digits)) throw new Error(`not an octal field: "${digits}"`);
  return parseInt(digits, 8);
}

/** A bag as a validator sees it: files and directories by path relative to the bag's base directory. */
export interface BagTree {
  files: Map<string, Uint8Array>;
  directories: Set<string>;
}

/** The bag inside a serialized archive, which must hold exactly one top-level directory. */
export function bagFromTar(archive: Uint8Array): { name: string; bag: BagTree } {
  const members = readTar(archive);
  const roots = new Set(members.map((member) => member.path.split('/')[0]!));
  if (roots.size !== 1) throw new Error(`expected one top-level directory, found ${[...roots].join(', ')}`);
  const [name] = roots as Set<string>;
  const bag: BagTree = { files: new Map(), directories: new Set() };
  for (const member of members) {
    const relative = member.path.slice(name!.length + 1).replace(/\/$/, '');
    if (member.type === 'directory') bag.directories.add(relative);
    else bag.files.set(relative, member.content);
  }
  return { name: name!, bag };
}

/** The bag in a directory on disk, e.g. one GNU tar extracted. */
export function bagFromDirectory(root: string): BagTree {
  const bag: BagTree = { files: new Map(), directories: new Set(['']) };
  const walk = (relative: string): void => {
    for (const entry of readdirSync(join(root, relative), { withFileTypes: true })) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        bag.directories.add(path);
        walk(path);
      } else {
        bag.files.set(path, new Uint8Array(readFileSync(join(root, path))));
      }
    }
  };
  walk('');
  return bag;
}

/** Every way the bag fails to be complete and valid under RFC 8493 §3; empty when it is valid. */
export function validateBag(bag: BagTree): string[] {
  const problems: string[] = [];

  const declaration = bag.files.get('bagit.txt');
  if (!declaration) return ['bagit.txt is missing'];
  const declarationLines = lines(declaration);
  if (declaration[0] === 0xef && declaration[1] === 0xbb && declaration[2] === 0xbf) problems.push('bagit.txt starts with a byte order mark');
  if (declarationLines.length !== 2 || !/^BagIt-Version: \d+\.\d+$/.test(declarationLines[0]!) || !/^Tag-File-Character-Encoding: \S+$/.test(declarationLines[1]!)) {
    problems.push('bagit.txt is not the two-line bag declaration');
  }
  if (!bag.directories.has('data')) problems.push('the payload directory data/ is missing');

  const payloadFiles = [...bag.files.keys()].filter((path) => path.startsWith('data/'));
  const manifests = [...bag.files.keys()].filter((path) => /^manifest-[a-z0-9]+\.txt$/.test(path));
  if (manifests.length === 0) problems.push('no payload manifest');
  for (const manifest of manifests) {
    const algorithm = /^manifest-(.+)\.txt$/.exec(manifest)![1]!;
    const entries = parseManifest(bag.files.get(manifest)!, manifest, problems);
    for (const path of entries.keys()) {
      if (!path.startsWith('data/') || path.split('/').includes('..')) problems.push(`${manifest} lists ${path}, outside the payload`);
    }
    for (const path of payloadFiles) if (!entries.has(path)) problems.push(`${path} is not listed in ${manifest}`);
    checkDigests(bag, entries, algorithm, manifest, problems);
  }

  const tagFiles = [...bag.files.keys()].filter((path) => !path.startsWith('data/'));
  for (const tagManifest of tagFiles.filter((path) => /^tagmanifest-[a-z0-9]+\.txt$/.test(path))) {
    const algorithm = /^tagmanifest-(.+)\.txt$/.exec(tagManifest)![1]!;
    const entries = parseManifest(bag.files.get(tagManifest)!, tagManifest, problems);
    for (const path of entries.keys()) if (path.startsWith('data/')) problems.push(`${tagManifest} lists the payload file ${path}`);
    for (const path of tagFiles) {
      if (!path.startsWith('tagmanifest-') && !entries.has(path)) problems.push(`${path} is not listed in ${tagManifest}`);
    }
    checkDigests(bag, entries, algorithm, tagManifest, problems);
  }

  const bagInfo = bag.files.get('bag-info.txt');
  if (bagInfo) {
    const info = parseBagInfo(bagInfo);
    const date = info.get('Bagging-Date');
    if (date && !date.every((value) => /^\d{4}-\d{2}-\d{2}$/.test(value))) problems.push('Bagging-Date is not YYYY-MM-DD');
    const oxum = info.get('Payload-Oxum');
    if (oxum) {
      const octets = payloadFiles.reduce((sum, path) => sum + bag.files.get(path)!.length, 0);
      if (oxum.length !== 1 || oxum[0] !== `${octets}.${payloadFiles.length}`) {
        problems.push(`Payload-Oxum ${oxum.join(',')} differs from the payload's ${octets}.${payloadFiles.length}`);
      }
    }
  }
  return problems;
}

/** bag-info.txt as label → values, with continuation lines unfolded (RFC 8493 §2.2.2). */
export function parseBagInfo(bytes: Uint8Array): Map<string, string[]> {
  const elements = new Map<string, string[]>();
  let last: { label: string; index: number } | undefined;
  for (const line of lines(bytes)) {
    if (/^[ \t]/.test(line) && last) {
      const values = elements.get(last.label)!;
      values[last.index] = `${values[last.index]} ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`bag-info.txt line without a label: ${line}`);
    const label = line.slice(0, colon).trim();
    const values = elements.get(label) ?? [];
    values.push(line.slice(colon + 1).trim());
    elements.set(label, values);
    last = { label, index: values.length - 1 };
  }
  return elements;
}

function parseManifest(bytes: Uint8Array, name: string, problems: string[]): Map<string, string> {
  const entries = new Map<string, string>();
  for (const line of lines(bytes)) {
    const match = /^([0-9A-Fa-f]+)[ \t]+(.+)$/.exec(line);
    if (!match) {
      problems.push(`${name} has a malformed line: ${line}`);
      continue;
    }
    const path = match[2]!.replace(/%(25|0A|0D)/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (entries.has(path)) problems.push(`${name} lists ${path} twice`);
    entries.set(path, match[1]!.toLowerCase());
  }
  return entries;
}

function checkDigests(bag: BagTree, entries: Map<string, string>, algorithm: string, manifest: string, problems: string[]): void {
  if (algorithm !== 'sha512') {
    problems.push(`${manifest}: this checker knows only sha512`);
    return;
  }
  for (const [path, digest] of entries) {
    const content = bag.files.get(path);
    if (!content) problems.push(`${manifest} lists ${path}, which is missing`);
    else if (bytesToHex(sha512(content)) !== digest) problems.push(`${path} does not match its digest in ${manifest}`);
  }
}

/** Lines terminated by LF, CR or CRLF (RFC 8493 §2.1.3); the last line must be terminated too. */
function lines(bytes: Uint8Array): string[] {
  const content = decoder.decode(bytes);
  if (content === '') return [];
  const parts = content.split(/\r\n|\n|\r/);
  if (parts.pop() !== '') parts.push('(unterminated last line)');
  return parts;
}
