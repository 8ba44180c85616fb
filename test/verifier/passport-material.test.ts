/**
 * The verifier on material a running stack produced: a passport with events, a verify-offline pack
 * (as text and as a QR image), the log exported through GraphQL, and a notarised snapshot. All of
 * it is verified after the stack has stopped, then tampered with, each tampering caught and named.
 */
import { deflateSync, inflateSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import QRCode from 'qrcode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ed25519PublicJwk, generateSecretKey, jwkThumbprint, p256PublicJwk, publicKeyOf, rawKeySigner, signJson } from '../../lib/crypto/index.js';
import { writeTar, type TarEntry } from '../../lib/formats/archive/tar.js';
import { decodeBase45, encodeBase45 } from '../../lib/formats/issuer/base45.js';
import { decodePack, mintPack } from '../../lib/formats/issuer/pack.js';
import { readUstar } from '../../verifier/bagit.js';
import { logExportFrom, verifyLogExport } from '../../verifier/log.js';
import { verifyPackText } from '../../verifier/pack.js';
import { pinsFrom } from '../../verifier/pins.js';
import { verifySnapshot } from '../../verifier/snapshot.js';
import { appendEvent, createModel, createPassport, PAYLOADS } from '../issuer/support.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { cli, cliProcess, failedCodes, scratch } from './support.js';

const files = scratch('passport');
let platform: TestStack | undefined;
const material = {} as {
  passportId: string;
  pack: string;
  exported: any;
  restExport: any;
  snapshotId: string;
  archive: Buffer;
  notarization: any;
  issuerKeyring: any;
  archiveKeyring: any;
  trustKeyring: any;
  anchorBundle: any;
};
const path = {} as Record<'pack' | 'qr' | 'export' | 'snapshot' | 'notarization' | 'issuerKeyring' | 'archiveKeyring' | 'trustKeyring' | 'anchors', string>;

beforeAll(async () => {
  platform = await startTestStack();
  await createModel(platform, 'verifier-battery');
  const passport = await createPassport(platform, 'verifier-battery', { capability_class: 'verify-offline' });
  material.passportId = passport.passport_id;
  for (const type of ['activated', 'ObjectEvent', 'ObjectEvent', 'suspended', 'reinstated']) {
    expect((await appendEvent(platform, passport.passport_id, type, PAYLOADS[type]!())).status).toBe(201);
  }
  const minted = await platform.rest('issuer', `/passports/${passport.passport_id}/pack`, { method: 'POST', as: 'writer' });
  expect(minted.status).toBe(201);
  material.pack = minted.body.text;
  const exported = await platform.graphql('query Export($id: ID!) { passport(id: $id) { id events logHead } }', { id: passport.passport_id });
  expect(exported.errors).toBeUndefined();
  material.exported = exported;
  material.restExport = (await platform.rest('issuer', `/passports/${passport.passport_id}?include_events=true`)).body;
  const snapshot = await platform.rest('archive', '/snapshots', { as: 'writer', body: { passport_id: passport.passport_id } });
  expect(snapshot.status).toBe(201);
  material.snapshotId = snapshot.body.id;
  const served = await fetch(`${platform.base('archive')}/snapshots/${snapshot.body.id}`);
  material.archive = Buffer.from(await served.arrayBuffer());
  material.notarization = (await platform.rest('archive', `/snapshots/${snapshot.body.id}/notarization`)).body;
  material.issuerKeyring = (await platform.rest('issuer', '/keyring')).body;
  material.archiveKeyring = (await platform.rest('archive', '/keyring')).body;
  material.trustKeyring = (await platform.rest('trust', '/keyring')).body;
  material.anchorBundle = (await platform.rest('trust', '/anchor-bundle')).body;
  // Everything is saved; nothing below talks to a service.
  await platform.stop();
  platform = undefined;

  path.pack = files.bytes('pack.txt', `${material.pack}\n`);
  path.qr = files.bytes('pack.png', await QRCode.toBuffer(material.pack, { errorCorrectionLevel: 'M', margin: 4, scale: 4 }));
  path.export = files.json('export.json', material.exported);
  path.snapshot = files.bytes('snapshot.tar', material.archive);
  path.notarization = files.json('notarization.json', material.notarization);
  path.issuerKeyring = files.json('issuer-keyring.json', material.issuerKeyring);
  path.archiveKeyring = files.json('archive-keyring.json', material.archiveKeyring);
  path.trustKeyring = files.json('trust-keyring.json', material.trustKeyring);
  path.anchors = files.json('anchor-bundle.json', material.anchorBundle);
}, 120_000);
afterAll(() => platform?.stop());

const issuerPins = () => pinsFrom({ keySets: [material.issuerKeyring] });
const allPins = () => pinsFrom({ keySets: [material.issuerKeyring, material.archiveKeyring, material.trustKeyring], anchorBundle: material.anchorBundle });
const attackerEd25519 = () => {
  const secret = generateSecretKey('Ed25519');
  const jwk = ed25519PublicJwk(publicKeyOf('Ed25519', secret));
  const kid = jwkThumbprint(jwk);
  return { signer: rawKeySigner('Ed25519', kid, secret), jwk: { ...jwk, kid, alg: 'Ed25519', use: 'sig', iat: 0 } };
};

/** Rebuilds the archive with its files edited (a forger's tar, entries in any order). */
async function rebuilt(edit: (files: Map<string, Uint8Array>) => void): Promise<Buffer> {
  const { files: read, directories } = readUstar(material.archive);
  const contents = new Map(read.map((file) => [file.path, file.bytes]));
  edit(contents);
  const entries: TarEntry[] = [
    ...directories.map((directory) => ({ path: `${directory}/`, type: 'directory' as const, size: 0, mtime: 0 })),
    ...[...contents].map(([name, bytes]) => ({ path: name, type: 'file' as const, size: bytes.length, mtime: 0, content: [bytes] })),
  ];
  const chunks: Uint8Array[] = [];
  for await (const chunk of writeTar(entries)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('a Tier-A pack', () => {
  it('verifies offline as text, from a file and from its QR image, under the pinned issuer keyring', async () => {
    const { report, claims } = verifyPackText(material.pack, issuerPins());
    expect(report.verdict, JSON.stringify(report.findings)).toBe('valid');
    expect(claims).toMatchObject({ sub: material.passportId, capability_class: 'verify-offline', status: 'active', log: { size: 5 } });
    expect(report.findings.map((finding) => finding.check)).toEqual(expect.arrayContaining(['pack.signature', 'pack.log_head', 'pack.carrier_key', 'pack.log_head_key']));

    // The command itself once for each exit status (0 here, 2 below); its other runs in this process.
    for (const [input, verify] of [
      [material.pack, cliProcess],
      [`@${path.pack}`, cli],
      [path.qr, cli],
    ] as const) {
      const run = await verify('pack', input, '--pin', path.issuerKeyring);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^VALID: pack /);
    }
    const json = await cliProcess('pack', path.qr, '--pin', path.issuerKeyring, '--json');
    expect(json.report).toMatchObject({ kind: 'pack', subject: material.passportId, verdict: 'valid', exit_code: 0 });
  });

  it('names a flipped character of the text (MALFORMED_PACK) and a flipped byte of the signed COSE (BAD_SIGNATURE)', async () => {
    const at = 40;
    const flippedText = material.pack.slice(0, at) + (material.pack[at] === 'A' ? 'B' : 'A') + material.pack.slice(at + 1);
    const text = await cli('pack', flippedText, '--pin', path.issuerKeyring, '--json');
    expect(text.code).toBe(1);
    expect(failedCodes(text.report)).toEqual(['MALFORMED_PACK']);

    const cose = Buffer.from(inflateSync(decodeBase45(material.pack.slice(5))));
    cose[cose.length - 10]! ^= 0x01; // inside the ES256 signature, the last member of the COSE_Sign1 array
    const flippedCose = `DPP1:${encodeBase45(deflateSync(cose))}`;
    expect(decodePack(flippedCose).claims.sub).toBe(material.passportId);
    const run = await cli('pack', flippedCose, '--pin', path.issuerKeyring, '--json');
    expect(run.code).toBe(1);
    expect(run.report.verdict).toBe('invalid');
    expect(failedCodes(run.report)).toEqual(['BAD_SIGNATURE']);
  });

  it('refuses a pack re-minted under a swapped carrier key (KEY_NOT_PINNED), even when that key comes with a keyring', async () => {
    const secret = generateSecretKey('ES256');
    const jwk = p256PublicJwk(publicKeyOf('ES256', secret));
    const kid = jwkThumbprint(jwk);
    const forged = mintPack(decodePack(material.pack).claims, rawKeySigner('ES256', kid, secret)).text;
    const forgedKeyring = files.json('forged-keyring.json', { keys: [{ ...jwk, kid, alg: 'ES256', use: 'sig', iat: 0 }] });
    const run = await cli('pack', forged, '--pin', path.issuerKeyring, '--keyring', forgedKeyring, '--json');
    expect(run.code).toBe(1);
    expect(failedCodes(run.report)).toEqual(['KEY_NOT_PINNED']);
    expect(run.report.findings.find((finding: any) => finding.code === 'KEY_NOT_PINNED').message).toContain(kid);
  });

  it('could not check without a pinned key (exit 2), nor with a kid pinned but no key material', async () => {
    const none = await cliProcess('pack', material.pack, '--json');
    expect(none.code).toBe(2);
    expect(none.report.findings.find((finding: any) => finding.status === 'not_checked').code).toBe('NO_PINNED_KEY');
    const kids = files.bytes('issuer-kids.txt', material.issuerKeyring.keys.map((key: any) => key.kid).join('\n'));
    const kidOnly = await cli('pack', material.pack, '--pin', kids, '--json');
    expect(kidOnly.code).toBe(2);
    expect(kidOnly.report.findings.find((finding: any) => finding.status === 'not_checked').code).toBe('PINNED_KEY_MATERIAL_MISSING');
    // The same kids with a keyring fetched later supplying the material: valid.
    const withMaterial = await cli('pack', material.pack, '--pin', kids, '--keyring', path.issuerKeyring);
    expect(withMaterial.code).toBe(0);
    const unreadable = await cli('pack', `@${files.path('no-such-file.txt')}`, '--pin', path.issuerKeyring, '--json');
    expect(unreadable.code).toBe(2);
    expect(unreadable.report.findings[0].code).toBe('UNREADABLE_INPUT');
  });
});

describe('an event log with its signed head', () => {
  it('verifies the GraphQL export (and the REST one) offline: chain, transitions, head, root, every signature, key lifetimes', async () => {
    const report = await verifyLogExport(logExportFrom(material.exported), issuerPins());
    expect(report.verdict, JSON.stringify(report.findings)).toBe('valid');
    expect(report.subject).toBe(material.passportId);
    const rest = await verifyLogExport(logExportFrom(material.restExport), issuerPins());
    expect(rest.verdict, JSON.stringify(rest.findings)).toBe('valid');
    expect(rest.findings.find((finding) => finding.check === 'log.signatures')!.message).toBe('all 5 event signatures verify under pinned keys');
    const run = await cli('log', path.export, '--pin', path.issuerKeyring, '--json');
    expect(run.code).toBe(0);
    expect(run.report.findings.filter((finding: any) => finding.status === 'ok').map((finding: any) => finding.check)).toEqual(
      expect.arrayContaining(['log.chain', 'log.transitions', 'log.head', 'log.root', 'log.signatures', 'log.key_lifetime']),
    );
  });

  it('names a reordered event: out of order, chain broken, root no longer the signed one', async () => {
    const passport = structuredClone(material.exported.data.passport);
    [passport.events[1], passport.events[2]] = [passport.events[2], passport.events[1]];
    const run = await cli('log', files.json('reordered.json', { data: { passport } }), '--pin', path.issuerKeyring, '--json');
    expect(run.code).toBe(1);
    const codes = failedCodes(run.report);
    expect(codes).toEqual(expect.arrayContaining(['SEQ_OUT_OF_ORDER', 'PREV_HASH_MISMATCH', 'ROOT_MISMATCH']));
    expect(run.report.findings.find((finding: any) => finding.code === 'SEQ_OUT_OF_ORDER').message).toBe('event 1 carries seq 2');
  });

  it('names an event re-signed under a swapped key (KEY_NOT_PINNED) and a changed payload (EVENT_SIGNATURE_INVALID)', async () => {
    const attacker = attackerEd25519();
    const passport = structuredClone(material.exported.data.passport);
    const { signature: _signature, ...last } = passport.events[4];
    passport.events[4] = signJson({ ...last, kid: attacker.signer.kid }, attacker.signer);
    const swapped = await cli('log', files.json('swapped.json', passport), '--pin', path.issuerKeyring, '--keyring', files.json('attacker.json', { keys: [attacker.jwk] }), '--json');
    expect(swapped.code).toBe(1);
    expect(failedCodes(swapped.report)).toContain('KEY_NOT_PINNED');
    expect(swapped.report.findings.find((finding: any) => finding.code === 'KEY_NOT_PINNED').message).toBe(`event 4: key ${attacker.signer.kid} is not among the pinned keys`);

    const edited = structuredClone(material.exported.data.passport);
    edited.events[1].payload.bizStep = 'shipping';
    const run = await cli('log', files.json('edited.json', edited), '--pin', path.issuerKeyring, '--json');
    expect(run.code).toBe(1);
    expect(run.report.findings.find((finding: any) => finding.code === 'EVENT_SIGNATURE_INVALID').message).toMatch(/^event 1: /);
  });

  it('reads the log as a snapshot stores it (events.jsonl and log-head.json)', async () => {
    const { files: read } = readUstar(material.archive);
    const file = (suffix: string) => read.find((entry) => entry.path.endsWith(suffix))!.bytes;
    const events = files.bytes('events.jsonl', file('data/passport/events.jsonl'));
    const head = files.bytes('log-head.json', file('data/passport/log-head.json'));
    const run = await cli('log', events, '--head', head, '--pin', path.issuerKeyring);
    expect(run.code, run.stdout).toBe(0);
    const missingHead = await cli('log', events, '--pin', path.issuerKeyring);
    expect(missingHead.code).toBe(2);
  });
});

describe('an archive snapshot', () => {
  it('verifies offline: BagIt and fixity, the notarization, the anchor bundle, the log and the pack inside', async () => {
    const report = await verifySnapshot(material.archive, material.notarization, allPins());
    expect(report.verdict, JSON.stringify(report.findings.filter((finding) => finding.status !== 'ok'))).toBe('valid');
    expect(report.subject).toBe(material.snapshotId);
    const checks = new Set(report.findings.map((finding) => finding.check));
    for (const check of [
      'bagit.tar',
      'bagit.declaration',
      'bagit.oxum',
      'bagit.manifest',
      'bagit.tagmanifest',
      'notarization',
      'snapshot.anchors',
      'log.root',
      'log.signatures',
      'pack.signature',
      'pack.log',
    ]) {
      expect(checks, check).toContain(check);
    }
    const run = await cli(
      'snapshot',
      path.snapshot,
      '--notarization',
      path.notarization,
      '--pin',
      path.issuerKeyring,
      '--pin',
      path.archiveKeyring,
      '--pin',
      path.trustKeyring,
      '--anchors',
      path.anchors,
      '--json',
    );
    expect(run.code, run.stdout).toBe(0);
    expect(run.report).toMatchObject({ kind: 'snapshot', subject: material.snapshotId, verdict: 'valid', exit_code: 0 });
  });

  it('takes key material from the keyrings inside the bag for keys pinned by thumbprint', async () => {
    const kids = [...material.issuerKeyring.keys, ...material.trustKeyring.keys].map((key: any) => key.kid);
    const report = await verifySnapshot(material.archive, material.notarization, pinsFrom({ kids, keySets: [material.archiveKeyring] }));
    expect(report.verdict, JSON.stringify(report.findings.filter((finding) => finding.status !== 'ok'))).toBe('valid');
  });

  it('names a flipped byte in the payload: manifest digest, notarized digest, and the event signature', async () => {
    const tampered = Buffer.from(material.archive);
    const at = tampered.indexOf(Buffer.from('"type":"suspended"'));
    expect(at).toBeGreaterThan(0);
    tampered[at + 9] = 'S'.charCodeAt(0);
    const report = await verifySnapshot(tampered, material.notarization, allPins());
    expect(report.verdict).toBe('invalid');
    const codes = failedCodes(report);
    expect(codes).toEqual(expect.arrayContaining(['MANIFEST_DIGEST_MISMATCH', 'NOTARIZATION_DIGEST_MISMATCH', 'EVENT_SIGNATURE_INVALID']));
    expect(report.findings.find((finding) => finding.code === 'MANIFEST_DIGEST_MISMATCH')!.message).toContain('data/passport/events.jsonl');
  });

  it('names reordered event lines and an unlisted payload file in a rebuilt archive', async () => {
    const reordered = await rebuilt((contents) => {
      const name = [...contents.keys()].find((key) => key.endsWith('data/passport/events.jsonl'))!;
      const lines = Buffer.from(contents.get(name)!).toString('utf8').split('\n');
      [lines[1], lines[2]] = [lines[2]!, lines[1]!];
      contents.set(name, Buffer.from(lines.join('\n')));
    });
    const first = await verifySnapshot(reordered, material.notarization, allPins());
    expect(failedCodes(first)).toEqual(expect.arrayContaining(['MANIFEST_DIGEST_MISMATCH', 'NOTARIZATION_DIGEST_MISMATCH', 'SEQ_OUT_OF_ORDER', 'ROOT_MISMATCH']));

    const extra = await rebuilt((contents) => contents.set(`${material.snapshotId}/data/extra.txt`, Buffer.from('not in any manifest')));
    const second = await verifySnapshot(extra, material.notarization, allPins());
    expect(failedCodes(second)).toEqual(expect.arrayContaining(['PAYLOAD_FILE_UNLISTED', 'PAYLOAD_OXUM_MISMATCH', 'NOTARIZATION_DIGEST_MISMATCH']));
    expect(second.findings.find((finding) => finding.code === 'PAYLOAD_FILE_UNLISTED')!.message).toBe('payload file data/extra.txt is not listed in manifest-sha512.txt');
  });

  it('names a notarization re-signed under a swapped key, and cannot check without a notarization', async () => {
    const attacker = attackerEd25519();
    const forged = signJson(material.notarization, attacker.signer);
    const run = await cli(
      'snapshot',
      path.snapshot,
      '--notarization',
      files.json('forged-notarization.json', forged),
      '--pin',
      path.issuerKeyring,
      '--pin',
      path.archiveKeyring,
      '--pin',
      path.trustKeyring,
      '--json',
    );
    expect(run.code).toBe(1);
    expect(failedCodes(run.report)).toEqual(['KEY_NOT_PINNED']);

    const missing = await cli('snapshot', path.snapshot, '--pin', path.issuerKeyring, '--pin', path.trustKeyring);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toMatch(/^COULD NOT CHECK: snapshot /);
    expect(missing.stdout).toContain('NOTARIZATION_MISSING');
  });

  it('the notarized digest is the SHA-512 of the file as saved', () => {
    expect(createHash('sha512').update(readFileSync(path.snapshot)).digest('hex')).toBe(material.notarization.bag_sha512);
  });
});
