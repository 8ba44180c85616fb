/**
 * The verifier's BagIt (RFC 8493) validator on bags made here: the archive's own bag writer for a
 * valid bag, and hand-made tars for every departure it must name. No stack is needed.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildBag } from '../../lib/formats/archive/bagit.js';
import { ustarHeader, writeTar, type TarEntry } from '../../lib/formats/archive/tar.js';
import { run, USAGE } from '../../verifier/cli.js';
import { readUstar, validateBag } from '../../verifier/bagit.js';
import { failedCodes } from './support.js';

const sha = (algorithm: string, text: string | Uint8Array) => createHash(algorithm).update(text).digest('hex');

/** A bag `b` with the given payload, tag files computed unless overridden, as a ustar archive. */
async function handMade(payload: Record<string, string>, override: Record<string, string | null> = {}, extra: TarEntry[] = []): Promise<Uint8Array> {
  const files: Record<string, string> = { ...payload };
  const octets = Object.values(payload).reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  files['bagit.txt'] = 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n';
  files['bag-info.txt'] = `Source-Organization: test\nPayload-Oxum: ${octets}.${Object.keys(payload).length}\n`;
  files['manifest-sha256.txt'] = Object.entries(payload)
    .map(([path, text]) => `${sha('sha256', text)}  ${path.replace(/%/g, '%25')}\n`)
    .join('');
  for (const [path, text] of Object.entries(override)) if (text !== null && !path.startsWith('tagmanifest')) files[path] = text;
  files['tagmanifest-sha256.txt'] = ['bag-info.txt', 'bagit.txt', 'manifest-sha256.txt']
    .filter((path) => files[path] !== undefined)
    .map((path) => `${sha('sha256', files[path]!)}  ${path}\n`)
    .join('');
  for (const [path, text] of Object.entries(override)) {
    if (text === null) delete files[path];
    else files[path] = text;
  }
  const entries: TarEntry[] = [
    { path: 'b/', type: 'directory', size: 0, mtime: 0 },
    ...Object.entries(files).map(([path, text]) => ({ path: `b/${path}`, type: 'file' as const, size: Buffer.byteLength(text), mtime: 0, content: [Buffer.from(text)] })),
    ...extra,
  ];
  const chunks: Uint8Array[] = [];
  for await (const chunk of writeTar(entries)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

const PAYLOAD = { 'data/a.txt': 'alpha\n', 'data/sub/b 100%.json': '{"b":1}' };

describe('validateBag', () => {
  it("accepts the archive service's own bags and hand-made ones, with percent-encoded paths and CRLF tag files", async () => {
    const { bytes } = await buildBag({
      name: 'snap-1',
      baggedAt: '2026-01-02T03:04:05Z',
      info: { sourceOrganization: 'test', externalIdentifier: 'p-1', bagSoftwareAgent: 'test/1' },
      payload: [
        { path: 'data/x.json', bytes: Buffer.from('{}') },
        { path: 'data/y/z.txt', bytes: Buffer.from('zzz') },
      ],
    });
    const checked = validateBag(bytes, { requirePayloadOxum: true, requireCompleteTagManifests: true });
    expect(failedCodes(checked)).toEqual([]);
    expect(checked.name).toBe('snap-1');
    expect(checked.info.get('External-Identifier')).toEqual(['p-1']);
    expect([...checked.files.keys()]).toEqual(expect.arrayContaining(['data/x.json', 'data/y/z.txt', 'bagit.txt']));

    const crlf = await handMade(PAYLOAD, { 'bagit.txt': 'BagIt-Version: 1.0\r\nTag-File-Character-Encoding: UTF-8\r\n' });
    expect(validateBag(crlf, { requirePayloadOxum: true, requireCompleteTagManifests: true }).findings.filter((finding) => finding.status !== 'ok')).toEqual([]);
  });

  it.each([
    ['a wrong bagit.txt', { 'bagit.txt': 'BagIt-Version: 1.0\n' }, ['BAGIT_TXT_INVALID']],
    ['an unknown BagIt version', { 'bagit.txt': 'BagIt-Version: 2.0\nTag-File-Character-Encoding: UTF-8\n' }, ['BAGIT_VERSION_UNSUPPORTED']],
    ['no bagit.txt (still in the tag manifest)', { 'bagit.txt': null }, ['BAGIT_TXT_MISSING', 'MANIFEST_FILE_MISSING']],
    ['a malformed manifest line', { 'manifest-sha256.txt': `${sha('sha256', 'alpha\n')}  data/a.txt\nnot-a-digest data/sub/b 100%25.json\n` }, ['MANIFEST_LINE_INVALID', 'PAYLOAD_FILE_UNLISTED']],
    ['a wrong digest', { 'manifest-sha256.txt': `${sha('sha256', 'beta\n')}  data/a.txt\n${sha('sha256', '{"b":1}')}  data/sub/b 100%25.json\n` }, ['MANIFEST_DIGEST_MISMATCH']],
    [
      'a listed file that is missing',
      { 'manifest-sha256.txt': `${sha('sha256', 'alpha\n')}  data/a.txt\n${sha('sha256', '{"b":1}')}  data/sub/b 100%25.json\n${sha('sha256', '')}  data/gone.txt\n` },
      ['MANIFEST_FILE_MISSING'],
    ],
    [
      'a path leaving the bag',
      { 'manifest-sha256.txt': `${sha('sha256', 'alpha\n')}  data/../a.txt\n${sha('sha256', '{"b":1}')}  data/sub/b 100%25.json\n` },
      ['MANIFEST_PATH_INVALID', 'PAYLOAD_FILE_UNLISTED'],
    ],
    [
      'a payload file listed twice',
      { 'manifest-sha256.txt': `${sha('sha256', 'alpha\n')}  data/a.txt\n${sha('sha256', 'alpha\n')}  data/a.txt\n${sha('sha256', '{"b":1}')}  data/sub/b 100%25.json\n` },
      ['MANIFEST_DUPLICATE'],
    ],
    ['no payload manifest (still in the tag manifest)', { 'manifest-sha256.txt': null }, ['PAYLOAD_MANIFEST_MISSING', 'MANIFEST_FILE_MISSING']],
    ['a Payload-Oxum that does not add up', { 'bag-info.txt': 'Payload-Oxum: 13.3\n' }, ['PAYLOAD_OXUM_MISMATCH']],
    ['no Payload-Oxum', { 'bag-info.txt': 'Source-Organization: test\n' }, ['PAYLOAD_OXUM_MISSING']],
    [
      'a tag manifest listing a payload file',
      { 'tagmanifest-sha256.txt': `${sha('sha256', 'alpha\n')}  data/a.txt\n` },
      ['MANIFEST_PATH_INVALID', 'TAG_FILE_UNLISTED', 'TAG_FILE_UNLISTED', 'TAG_FILE_UNLISTED'],
    ],
    [
      'a wrong tag manifest digest',
      { 'tagmanifest-sha256.txt': `${sha('sha256', 'x')}  bagit.txt\n${sha('sha256', 'x')}  bag-info.txt\n${sha('sha256', 'x')}  manifest-sha256.txt\n` },
      ['MANIFEST_DIGEST_MISMATCH', 'MANIFEST_DIGEST_MISMATCH', 'MANIFEST_DIGEST_MISMATCH'],
    ],
  ])('names %s', async (_name, override, codes) => {
    const checked = validateBag(await handMade(PAYLOAD, override), { requirePayloadOxum: true, requireCompleteTagManifests: true });
    expect(failedCodes(checked)).toEqual(codes);
  });

  it('names an unlisted payload file, and cannot check a bag with fetch.txt or an unknown algorithm', async () => {
    const unlisted = await handMade(PAYLOAD, {}, [{ path: 'b/data/sneaked.txt', type: 'file', size: 1, mtime: 0, content: [Buffer.from('!')] }]);
    expect(failedCodes(validateBag(unlisted))).toEqual(['PAYLOAD_OXUM_MISMATCH', 'PAYLOAD_FILE_UNLISTED']);
    const fetch = validateBag(await handMade(PAYLOAD, { 'fetch.txt': 'http://example.com/x - data/x\n' }));
    expect(fetch.findings.find((finding) => finding.status === 'not_checked')?.code).toBe('BAG_INCOMPLETE');
    const whirlpool = validateBag(await handMade(PAYLOAD, { 'manifest-whirlpool.txt': 'ab  data/a.txt\n' }));
    expect(whirlpool.findings.find((finding) => finding.status === 'not_checked')?.code).toBe('UNSUPPORTED_ALGORITHM');
  });

  it('names a broken tar: a header checksum, a symbolic link, two top-level directories, data after the end', async () => {
    const good = await handMade(PAYLOAD);
    const corrupt = Buffer.from(good);
    corrupt[512 + 10]! ^= 0x20; // the second header's name
    expect(validateBag(corrupt).findings).toEqual([expect.objectContaining({ code: 'MALFORMED_TAR', message: expect.stringMatching(/checksum/) })]);

    const link = Buffer.from(ustarHeader({ path: 'b/data/link', type: 'file', size: 0, mtime: 0 }));
    link[156] = '2'.charCodeAt(0);
    link.fill(0x20, 148, 156);
    const sum = link.reduce((total, byte) => total + byte, 0);
    link.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
    const linked = Buffer.concat([link, good]);
    expect(validateBag(linked).findings[0]).toMatchObject({ code: 'MALFORMED_TAR', message: expect.stringContaining('entry type "2"') });

    const twoTops = await handMade(PAYLOAD, {}, [{ path: 'other/x.txt', type: 'file', size: 1, mtime: 0, content: [Buffer.from('x')] }]);
    expect(failedCodes(validateBag(twoTops))).toEqual(['BAG_LAYOUT']);
    expect(failedCodes(validateBag(Buffer.concat([good, Buffer.from('trailing')])))).toEqual(['MALFORMED_TAR']);
    expect(failedCodes(validateBag(good.subarray(0, good.length - 1024)))).toEqual(['MALFORMED_TAR']);
    expect(readUstar(good).files.map((file) => file.path)).toContain('b/data/sub/b 100%.json');
  });
});

describe('the command line, in process', () => {
  it('prints its usage and refuses unknown commands and options as could-not-check', async () => {
    expect(await run(['--help'])).toEqual({ code: 0, stdout: `${USAGE}\n`, stderr: '' });
    const unknown = await run(['frobnicate', 'x']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command frobnicate');
    const option = await run(['pack', 'DPP1:', '--bogus', '--json']);
    expect(option.code).toBe(2);
    expect(JSON.parse(option.stdout)).toMatchObject({ verdict: 'unchecked', exit_code: 2, findings: [{ code: 'USAGE' }] });
  });
});
