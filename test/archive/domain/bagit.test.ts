import { execFileSync, spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { afterAll, describe, expect, it } from 'vitest';
import { ArchiveError, bagStream, buildBag, encodeManifestPath, type BagRequest, type PayloadFile } from '../../../subgraphs/archive/domain/index.js';
import { bagFromDirectory, bagFromTar, parseBagInfo, readTar, validateBag } from '../support/bagit-check.js';

const encoder = new TextEncoder();
const scratch = mkdtempSync(join(tmpdir(), 'bagit-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const BAGGED_AT = '2025-03-14T15:09:26.535Z';
const BAGGED_SECONDS = Math.floor(Date.parse(BAGGED_AT) / 1000);

function chunked(text: string, size: number): PayloadFile & { path: string } {
  const bytes = encoder.encode(text);
  return {
    path: 'data/log/events.jsonl',
    size: bytes.length,
    *open() {
      for (let offset = 0; offset < bytes.length; offset += size) yield bytes.slice(offset, offset + size);
    },
  };
}

function request(overrides: Partial<BagRequest> = {}): BagRequest {
  return {
    name: 'snap-01',
    baggedAt: BAGGED_AT,
    info: {
      sourceOrganization: 'Example Archive',
      externalIdentifier: 'urn:passport:42',
      internalSenderIdentifier: 'snap-01',
      bagSoftwareAgent: 'passport-archive/test',
    },
    payload: [
      { path: 'data/passport/core.json', bytes: encoder.encode('{"id":"42"}') },
      { path: 'data/a.txt', bytes: encoder.encode('x'.repeat(1300)) },
      { path: 'data/empty.bin', bytes: new Uint8Array(0) },
      chunked(Array.from({ length: 400 }, (_, index) => `{"seq":${index}}\n`).join(''), 777),
    ],
    ...overrides,
  };
}

function writeArchive(name: string, bytes: Uint8Array): string {
  const path = join(scratch, name);
  writeFileSync(path, bytes);
  return path;
}

function gnuTar(args: string[], cwd = scratch): string {
  return execFileSync('tar', args, { cwd, env: { ...process.env, TZ: 'UTC', LC_ALL: 'C' }, encoding: 'utf8' });
}

describe('BagIt bag', () => {
  it('is a complete and valid bag by an independent RFC 8493 validator', async () => {
    const { bytes } = await buildBag(request());
    const { name, bag } = bagFromTar(bytes);
    expect(name).toBe('snap-01');
    expect(validateBag(bag)).toEqual([]);
    expect(new TextDecoder().decode(bag.files.get('bagit.txt'))).toBe('BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n');
    expect([...bag.files.keys()].sort()).toEqual([
      'bag-info.txt',
      'bagit.txt',
      'data/a.txt',
      'data/empty.bin',
      'data/log/events.jsonl',
      'data/passport/core.json',
      'manifest-sha512.txt',
      'tagmanifest-sha512.txt',
    ]);
  });

  it('writes bag-info.txt with the bagging date, Payload-Oxum and the fixed metadata', async () => {
    const { bytes, summary } = await buildBag(request());
    const info = parseBagInfo(bagFromTar(bytes).bag.files.get('bag-info.txt')!);
    const payloadSizes = request().payload.map((file) => ('bytes' in file ? file.bytes.length : file.size));
    const oxum = `${payloadSizes.reduce((a, b) => a + b, 0)}.${payloadSizes.length}`;
    expect(Object.fromEntries(info)).toEqual({
      'Source-Organization': ['Example Archive'],
      'Bagging-Date': ['2025-03-14'],
      'External-Identifier': ['urn:passport:42'],
      'Payload-Oxum': [oxum],
      'Internal-Sender-Identifier': ['snap-01'],
      'Bag-Software-Agent': ['passport-archive/test'],
    });
    expect(summary.payloadOxum).toBe(oxum);
  });

  it('summarizes the archive with digests an independent SHA-512 agrees with', async () => {
    const { bytes, summary } = await buildBag(request());
    expect(summary.size).toBe(bytes.length);
    expect(summary.sha512).toBe(bytesToHex(sha512(bytes)));
    const { bag } = bagFromTar(bytes);
    for (const file of [...summary.payload, ...summary.tagFiles]) {
      expect(file.sha512).toBe(bytesToHex(sha512(bag.files.get(file.path)!)));
      expect(file.size).toBe(bag.files.get(file.path)!.length);
    }
    expect(summary.tagmanifestSha512).toBe(bytesToHex(sha512(bag.files.get('tagmanifest-sha512.txt')!)));
  });

  it('is byte-identical across builds and across chunkings of the same payload', async () => {
    const first = await buildBag(request());
    const second = await buildBag(request());
    const rechunked = request();
    const events = rechunked.payload[3] as { open: () => Iterable<Uint8Array>; size: number; path: string };
    const whole = new Uint8Array(events.size);
    let offset = 0;
    for (const chunk of events.open()) {
      whole.set(chunk, offset);
      offset += chunk.length;
    }
    const third = await buildBag({ ...rechunked, payload: [{ path: events.path, bytes: whole }, ...rechunked.payload.slice(0, 3).reverse()] });
    expect(Buffer.compare(first.bytes, second.bytes)).toBe(0);
    expect(Buffer.compare(first.bytes, third.bytes)).toBe(0);
  });

  it('streams the same bytes it builds, with the size known before the first chunk', async () => {
    const stream = bagStream(request());
    expect(() => stream.summary()).toThrow(ArchiveError);
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const streamed = Buffer.concat(chunks);
    expect(streamed.length).toBe(stream.size);
    expect(Buffer.compare(streamed, (await buildBag(request())).bytes)).toBe(0);
    expect(stream.summary().sha512).toBe(bytesToHex(sha512(streamed)));
    expect(stream.summary().size % 512).toBe(0);
  });

  it('pipes as a Node Readable into a file GNU tar reads', async () => {
    const path = join(scratch, 'piped.tar');
    const stream = bagStream(request());
    await pipeline(Readable.from(stream), createWriteStream(path));
    expect(Buffer.compare(readFileSync(path), (await buildBag(request())).bytes)).toBe(0);
    expect(gnuTar(['-tf', path]).trim().split('\n')).toHaveLength(readTar(new Uint8Array(readFileSync(path))).length);
    expect(stream.summary().size).toBe(readFileSync(path).length);
  });

  it('opens each streamed payload file only when its turn comes', async () => {
    const opened: string[] = [];
    const lazy = (path: string): PayloadFile => ({
      path,
      size: 3,
      open() {
        opened.push(path);
        return [encoder.encode('abc')];
      },
    });
    const stream = bagStream(request({ payload: [lazy('data/z'), lazy('data/b'), lazy('data/m/n')] }));
    expect(opened).toEqual([]);
    for await (const _chunk of stream) {
      if (opened.length === 1) expect(opened).toEqual(['data/b']);
    }
    expect(opened).toEqual(['data/b', 'data/m/n', 'data/z']);
  });

  it('writes deterministic ustar headers: sorted, owner 0:0 without names, fixed modes, mtime = bagging instant', async () => {
    const { bytes } = await buildBag(request());
    const members = readTar(bytes);
    const paths = members.map((member) => member.path);
    expect(paths).toEqual([...paths].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
    expect(paths[0]).toBe('snap-01/');
    expect(paths.at(-1)).toBe('snap-01/tagmanifest-sha512.txt');
    for (const member of members) {
      expect(member).toMatchObject({ uid: 0, gid: 0, uname: '', gname: '', mtime: BAGGED_SECONDS, mode: member.type === 'directory' ? 0o755 : 0o644 });
    }
    expect(paths.filter((_, index) => members[index]!.type === 'directory')).toEqual(['snap-01/', 'snap-01/data/', 'snap-01/data/log/', 'snap-01/data/passport/']);
  });

  it('is listed by GNU tar with the same metadata and no warnings', async () => {
    const archive = writeArchive('list.tar', (await buildBag(request())).bytes);
    const listed = spawnSync('tar', ['-tvf', archive, '--full-time'], { env: { ...process.env, TZ: 'UTC', LC_ALL: 'C' }, encoding: 'utf8' });
    expect(listed.status).toBe(0);
    expect(listed.stderr).toBe('');
    const rows = listed.stdout
      .trim()
      .split('\n')
      .map((line) => line.split(/\s+/));
    expect(rows.map((row) => row[5])).toEqual(readTar(new Uint8Array(readFileSync(archive))).map((member) => member.path));
    for (const row of rows) {
      expect(row[0]).toMatch(row[5]!.endsWith('/') ? /^drwxr-xr-x$/ : /^-rw-r--r--$/);
      expect(row[1]).toBe('0/0');
      expect(`${row[3]}T${row[4]}Z`).toBe('2025-03-14T15:09:26Z');
    }
  });

  it('extracts with GNU tar into a bag that validates on disk and with sha512sum -c', async () => {
    const archive = writeArchive('extract.tar', (await buildBag(request())).bytes);
    const target = mkdtempSync(join(scratch, 'x-'));
    gnuTar(['-xf', archive], target);
    const root = join(target, 'snap-01');
    expect(validateBag(bagFromDirectory(root))).toEqual([]);
    const checked = execFileSync('sha512sum', ['-c', '--strict', 'manifest-sha512.txt', 'tagmanifest-sha512.txt'], { cwd: root, encoding: 'utf8' });
    expect(checked.trim().split('\n')).toHaveLength(4 + 3);
    expect(checked).not.toMatch(/FAILED/);
  });

  it('detects a flipped payload byte in the validator and in the archive digest', async () => {
    const { bytes, summary } = await buildBag(request());
    const needle = Buffer.from('{"seq":200}');
    const at = Buffer.from(bytes).indexOf(needle);
    expect(at).toBeGreaterThan(0);
    const tampered = bytes.slice();
    tampered[at + 7]! ^= 0x01;
    expect(validateBag(bagFromTar(tampered).bag)).toEqual(['data/log/events.jsonl does not match its digest in manifest-sha512.txt']);
    expect(bytesToHex(sha512(tampered))).not.toBe(summary.sha512);

    const target = mkdtempSync(join(scratch, 'tampered-'));
    gnuTar(['-xf', writeArchive('tampered.tar', tampered)], target);
    expect(() => execFileSync('sha512sum', ['-c', '--quiet', 'manifest-sha512.txt'], { cwd: join(target, 'snap-01'), stdio: 'pipe' })).toThrow(/did NOT match/);
  });

  it('detects a changed Payload-Oxum and a changed tag file', async () => {
    const { bytes } = await buildBag(request());
    const { bag } = bagFromTar(bytes);
    const info = new TextDecoder().decode(bag.files.get('bag-info.txt'));
    bag.files.set('bag-info.txt', encoder.encode(info.replace(/Payload-Oxum: (\d+)\./, (_, octets: string) => `Payload-Oxum: ${Number(octets) + 1}.`)));
    const problems = validateBag(bag);
    expect(problems).toContain('bag-info.txt does not match its digest in tagmanifest-sha512.txt');
    expect(problems.some((problem) => problem.startsWith('Payload-Oxum'))).toBe(true);
  });

  it('changes only the dates and mtimes when the bagging instant changes', async () => {
    const first = readTar((await buildBag(request())).bytes);
    const later = readTar((await buildBag(request({ baggedAt: '2025-03-15T00:00:00Z' }))).bytes);
    expect(later.map((member) => member.mtime)).toEqual(later.map(() => Math.floor(Date.parse('2025-03-15T00:00:00Z') / 1000)));
    const differing = later.filter((member, index) => Buffer.compare(member.content, first[index]!.content) !== 0).map((member) => member.path);
    expect(differing).toEqual(['snap-01/bag-info.txt', 'snap-01/tagmanifest-sha512.txt']);
  });

  it('is a valid bag with an empty payload', async () => {
    const { bytes, summary } = await buildBag(request({ payload: [] }));
    expect(summary.payloadOxum).toBe('0.0');
    expect(validateBag(bagFromTar(bytes).bag)).toEqual([]);
  });
});

describe('paths', () => {
  it('percent-encodes CR, LF and % in manifests and nothing else (RFC 8493 §2.1.3)', async () => {
    expect(encodeManifestPath('data/100%\r\nsure é.txt')).toBe('data/100%25%0D%0Asure é.txt');
    const odd = 'data/100% line\nbreak é.txt';
    const { bytes } = await buildBag(request({ payload: [{ path: odd, bytes: encoder.encode('odd') }] }));
    const { bag } = bagFromTar(bytes);
    expect(new TextDecoder().decode(bag.files.get('manifest-sha512.txt'))).toContain('  data/100%25 line%0Abreak é.txt\n');
    expect(validateBag(bag)).toEqual([]);

    const target = mkdtempSync(join(scratch, 'odd-'));
    gnuTar(['-xf', writeArchive('odd.tar', bytes)], target);
    expect(validateBag(bagFromDirectory(join(target, 'snap-01')))).toEqual([]);
  });

  it('puts a long path in the ustar prefix field so GNU tar reads it back whole', async () => {
    const deep = `data/${'d'.repeat(60)}/${'e'.repeat(60)}/${'f'.repeat(90)}.json`;
    const { bytes } = await buildBag(request({ payload: [{ path: deep, bytes: encoder.encode('{}') }] }));
    expect(readTar(bytes).map((member) => member.path)).toContain(`snap-01/${deep}`);
    const listing = gnuTar(['-tf', writeArchive('deep.tar', bytes)]);
    expect(listing.split('\n')).toContain(`snap-01/${deep}`);
  });

  it('refuses a path that no ustar split can hold', () => {
    expect(() => bagStream(request({ payload: [{ path: `data/${'g'.repeat(120)}`, bytes: new Uint8Array(1) }] }))).toThrow(expect.objectContaining({ code: 'PATH_TOO_LONG' }));
    expect(() => bagStream(request({ payload: [{ path: `data/${'h/'.repeat(130)}i`, bytes: new Uint8Array(1) }] }))).toThrow(expect.objectContaining({ code: 'PATH_TOO_LONG' }));
  });

  it.each(['a.txt', '/data/a', 'data/', 'data//a', 'data/./a', 'data/../bagit.txt', 'data/a\0b', 'data'])('refuses the payload path %j', (path) => {
    expect(() => bagStream(request({ payload: [{ path, bytes: new Uint8Array(1) }] }))).toThrow(expect.objectContaining({ code: 'INVALID_PAYLOAD_PATH' }));
  });

  it('refuses duplicate paths and a path used as file and directory', () => {
    const one = encoder.encode('1');
    for (const payload of [
      [
        { path: 'data/a', bytes: one },
        { path: 'data/a', bytes: one },
      ],
      [
        { path: 'data/a/b', bytes: one },
        { path: 'data/a', bytes: one },
      ],
    ]) {
      expect(() => bagStream(request({ payload }))).toThrow(expect.objectContaining({ code: 'DUPLICATE_PAYLOAD_PATH' }));
    }
  });

  it.each(['', '.', '..', 'a/b', 'a\\b'])('refuses the bag name %j', (name) => {
    expect(() => bagStream(request({ name }))).toThrow(expect.objectContaining({ code: 'INVALID_BAG_NAME' }));
  });
});

describe('refusals', () => {
  it.each(['2025-02-30T00:00:00Z', '2025-03-14', '2025-03-14T15:09:26+01:00', '1969-12-31T23:59:59Z', 'yesterday'])('refuses the bagging instant %j', (baggedAt) => {
    expect(() => bagStream(request({ baggedAt }))).toThrow(expect.objectContaining({ code: 'INVALID_BAGGING_DATE' }));
  });

  it.each(['', ' padded', 'two\nlines'])('refuses the bag-info value %j', (sourceOrganization) => {
    expect(() => bagStream(request({ info: { ...request().info, sourceOrganization } }))).toThrow(expect.objectContaining({ code: 'INVALID_BAG_INFO' }));
  });

  it.each([
    ['fewer', 5],
    ['more', 3],
  ])('fails the stream when a payload file yields %s bytes than declared', async (_, declared) => {
    const payload: PayloadFile[] = [{ path: 'data/x', size: declared, open: () => [encoder.encode('abcd')] }];
    await expect(buildBag(request({ payload }))).rejects.toMatchObject({ code: 'PAYLOAD_SIZE_MISMATCH' });
  });

  it('refuses a file larger than a ustar size field', () => {
    const payload: PayloadFile[] = [{ path: 'data/huge', size: 8 ** 11, open: () => [] }];
    expect(() => bagStream(request({ payload }))).toThrow(expect.objectContaining({ code: 'ENTRY_TOO_LARGE' }));
  });

  it('reads a bag stream only once', async () => {
    const stream = bagStream(request());
    for await (const _chunk of stream);
    await expect(
      (async () => {
        for await (const _chunk of stream);
      })(),
    ).rejects.toThrow(/only once/);
  });
});
