/**
 * One verifier (issue 43, item 2): the command line and the verification page run the same library.
 * One table of genuine and tampered material, made once against a running platform (packs, event
 * logs, delegation paths, trust path material, revoked and retired keys, altered anchor bundles), is
 * judged by the library in Node, as the command line runs it (verifier/index.ts), and in Chromium,
 * as the page runs it: the page's own bundle, /verify/verifier.js, loaded in the page from the
 * platform. Both must give every row its expected verdict, and the same findings (check, status,
 * code), one for one.
 */
import { readFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeCbor, encodeCbor } from '../../lib/formats/issuer/cose.js';
import { encodeBase45 } from '../../lib/formats/issuer/base45.js';
import { decodePack, PACK_PREFIX } from '../../lib/formats/issuer/pack.js';
import * as library from '../../verifier/index.js';
import type { Material, PinSources, Verdict } from '../../verifier/index.js';
import { appendEvent, PAYLOADS } from '../issuer/support.js';
import { closeContexts, sharedBrowser } from '../support/browser.js';
import type { TestStack } from '../support/stack.js';
import { newKey, signedJsonCredential } from '../trust/support.js';
import { foreignSigned, mintedPack, openPage, pageTestStack, pastTheSecondOf } from './page-support.js';
import { cli, failedCodes, scratch } from './support.js';

const ROOT = 'root-one-verifier';
const ISSUER = 'issuer-one-verifier';
const DAY = 86_400_000;

interface Row {
  readonly name: string;
  readonly material: Material;
  readonly pins: PinSources;
  /** When the row is judged: the age of fetched trust material is counted to it. */
  readonly now: string;
  readonly expected: { readonly verdict: Verdict; readonly failed: readonly string[] };
}

/** What a side answers for a row: the verdict and every finding's check, status and code (messages may word an engine's error apart). */
type Outcome = { verdict: string; findings: [string, string, string | null][] } | { error: string };

/**
 * The one call both sides make for a row, with the library each loaded. It runs in the browser as
 * its source text, so it uses nothing but its arguments.
 */
async function outcomeOf(verifier: typeof library, row: Row): Promise<Outcome> {
  try {
    const report = await verifier.verifyMaterial(row.material, verifier.pinsFrom(row.pins), new Date(row.now));
    return { verdict: report.verdict, findings: report.findings.map((finding) => [finding.check, finding.status, finding.code ?? null]) };
  } catch (error) {
    return { error: (error as { code?: string }).code ?? String(error) };
  }
}

let platform: TestStack;
let browser: Browser;
const rows: Row[] = [];
/** Files of the material, for the command line. */
const files = scratch('one-verifier');
const saved = {} as Record<'genuine' | 'afterRevocation' | 'keyPath' | 'keyPathNow' | 'anchors' | 'trustKeyring', string>;

/** The pack with one claim changed and the original signature kept. */
function tampered(text: string, key: number, value: unknown): string {
  const { cose } = decodePack(text);
  const claims = decodeCbor(cose.payload) as Map<number, unknown>;
  claims.set(key, value);
  const message = encodeCbor([cose.protected_header, new Map(), encodeCbor(claims), cose.signature]);
  return PACK_PREFIX + encodeBase45(deflateSync(new Uint8Array([0xd2, ...message])));
}

beforeAll(async () => {
  const started = await pageTestStack({ model: 'battery-one-verifier', root: ROOT, issuer: ISSUER });
  platform = started.platform;
  const passport = started.passport;
  expect((await appendEvent(platform, passport, 'ObjectEvent', PAYLOADS.ObjectEvent!())).status).toBe(201);
  const genuine = await mintedPack(platform, passport);
  const get = async (service: 'issuer' | 'trust', path: string) => (await platform.rest(service, path)).body;
  const issuerKeyring = await get('issuer', '/keyring');
  const trustKeyring = await get('trust', '/keyring');
  const anchorBundle = await get('trust', '/anchor-bundle');
  const graph = await get('trust', '/graph');
  const keyPath = await get('trust', `/keys/${genuine.kid}/path`);
  const forged = foreignSigned(genuine.text);
  const foreignKeyPath = await get('trust', `/keys/${forged.jwk.kid}/path`);
  const exported = await platform.graphql('query Export($id: ID!) { passport(id: $id) { id events logHead } }', { id: passport });
  expect(exported.errors).toBeUndefined();
  const log = library.logExportFrom(exported);

  // Then the carrier key is revoked at the trust service; a pack minted after it is signed by a revoked key.
  const revoked = await platform.rest('trust', '/revocations', { body: { subject: `${ISSUER}#${genuine.kid}`, reason: 'keyCompromise' }, as: 'admin' });
  expect(revoked.status, JSON.stringify(revoked.body)).toBe(201);
  await pastTheSecondOf(revoked.body.effective_at);
  const afterRevocation = await mintedPack(platform, passport);
  const keyPathNow = await get('trust', `/keys/${genuine.kid}/path`);

  Object.assign(saved, {
    genuine: files.bytes('genuine.txt', genuine.text),
    afterRevocation: files.bytes('after-revocation.txt', afterRevocation.text),
    keyPath: files.json('key-path.json', keyPath),
    keyPathNow: files.json('key-path-now.json', keyPathNow),
    anchors: files.json('anchor-bundle.json', anchorBundle),
    trustKeyring: files.json('trust-keyring.json', trustKeyring),
  });

  const now = new Date().toISOString();
  const issuerPins: PinSources = { keySets: [issuerKeyring] };
  const anchorPins: PinSources = { anchorBundle, keySets: [trustKeyring] };
  const row = (name: string, material: Material, pins: PinSources, verdict: Verdict, failed: string[] = [], at = now) => rows.push({ name, material, pins, now: at, expected: { verdict, failed } });
  const pack = (text: string, keyPathMaterial?: unknown): Material => ({ kind: 'pack', text, ...(keyPathMaterial !== undefined && { keyPath: keyPathMaterial }) });
  const path = (graphMaterial: unknown, question: library.PathQuestion): Material => ({ kind: 'path', graph: graphMaterial, question });
  const { iat } = decodePack(genuine.text).claims;
  const carrier = (issuerKeyring.keys as { kid: string; iat: number }[]).find((key) => key.kid === genuine.kid)!;

  // Packs under the pinned issuer keyring (passport-verify pack).
  row('pack, genuine, pinned issuer keyring', pack(genuine.text), issuerPins, 'valid');
  row('pack, a claim edited', pack(tampered(genuine.text, -3, 'suspended')), issuerPins, 'invalid', ['BAD_SIGNATURE']);
  row('pack, signed by a key nobody pinned', pack(forged.text), issuerPins, 'invalid', ['KEY_NOT_PINNED']);
  row('pack, damaged text', pack(`${genuine.text.slice(0, 40)}${genuine.text.slice(60)}`), issuerPins, 'invalid', ['MALFORMED_PACK']);
  row('pack, nothing pinned', pack(genuine.text), {}, 'unchecked');
  const retired = { keys: issuerKeyring.keys.map((key: { kid: string }) => (key.kid === genuine.kid ? { ...key, exp: iat - 60 } : key)) };
  row('pack, carrier key retired before it signed', pack(genuine.text), { keySets: [issuerKeyring], keyrings: [retired] }, 'invalid', ['KEY_NOT_IN_FORCE']);
  const revokedCopy = { keys: issuerKeyring.keys.map((key: { kid: string }) => (key.kid === genuine.kid ? { ...carrier, revoked: { revoked_at: iat - 60, reason: 'keyCompromise' } } : key)) };
  row('pack, carrier key revoked before it signed (keyring)', pack(genuine.text), { keySets: [issuerKeyring], keyrings: [revokedCopy] }, 'invalid', ['KEY_NOT_IN_FORCE']);

  // Packs judged by the trust graph from the pinned anchors, as the page judges them (pack --key-path).
  row('pack by trust path, genuine', pack(genuine.text, keyPath), anchorPins, 'valid');
  row('pack by trust path, a claim edited', pack(tampered(genuine.text, -3, 'suspended'), keyPath), anchorPins, 'invalid', ['BAD_SIGNATURE']);
  row('pack by trust path, a key no node lists', pack(forged.text, foreignKeyPath), anchorPins, 'invalid', ['KEY_NOT_LISTED']);
  row("pack by trust path, another key's material", pack(forged.text, keyPath), anchorPins, 'invalid', ['TRUST_PATH_INVALID']);
  const slipped = structuredClone(keyPath);
  slipped.nodes.find((node: { id: string }) => node.id === ISSUER).keys.push({ ...forged.jwk, iat: iat - 3600 });
  row('pack by trust path, material altered (a key slipped into the issuer)', pack(forged.text, { ...slipped, kid: forged.jwk.kid }), anchorPins, 'invalid', ['TRUST_PATH_INVALID']);
  const forgedBundle = structuredClone(anchorBundle);
  forgedBundle.roots[0].id = 'root-of-a-forger';
  row('pack by trust path, anchor bundle altered', pack(genuine.text, keyPath), { anchorBundle: forgedBundle, keySets: [trustKeyring] }, 'invalid', ['ANCHOR_BUNDLE_BAD_SIGNATURE']);
  row('pack by trust path, anchors and material 8 days old', pack(genuine.text, keyPath), anchorPins, 'invalid', ['ANCHORS_EXPIRED'], new Date(Date.now() + 8 * DAY).toISOString());
  row('pack by trust path, signed after its key was revoked', pack(afterRevocation.text, keyPathNow), anchorPins, 'invalid', ['KEY_REVOKED']);
  row('pack by trust path, signed before its key was revoked', pack(genuine.text, keyPathNow), anchorPins, 'valid');

  // Event logs under the pinned issuer keyring (passport-verify log).
  row('log, genuine', { kind: 'log', log }, issuerPins, 'valid');
  const edited = structuredClone(log) as unknown as { events: { payload: Record<string, unknown> }[] };
  edited.events[1]!.payload = { ...edited.events[1]!.payload, quantity: 999 };
  row('log, an event edited', { kind: 'log', log: edited }, issuerPins, 'invalid', ['ROOT_MISMATCH', 'EVENT_SIGNATURE_INVALID']);
  const swapped = structuredClone(log) as unknown as { events: unknown[] };
  swapped.events.reverse();
  row('log, events out of order', { kind: 'log', log: swapped }, issuerPins, 'invalid', [
    'SEQ_OUT_OF_ORDER',
    'PREV_HASH_MISMATCH',
    'SEQ_OUT_OF_ORDER',
    'PREV_HASH_MISMATCH',
    'TIME_REGRESSION',
    'ROOT_MISMATCH',
  ]);
  const headless = { ...log, head: undefined };
  row('log, no signed head', { kind: 'log', log: headless }, issuerPins, 'invalid', ['HEAD_MISSING']);
  row('log, signed by keys nobody pinned', { kind: 'log', log }, { keySets: [trustKeyring] }, 'invalid', ['KEY_NOT_PINNED', 'KEY_NOT_PINNED', 'KEY_NOT_PINNED']);

  // Delegation paths in the exported graph and in the signed trust path material (passport-verify path).
  row('path, genuine', path(graph, { to: ISSUER, at: now, kid: genuine.kid }), anchorPins, 'valid');
  row('path, after the delegation expired', path(graph, { to: ISSUER, at: new Date(Date.now() + 400 * DAY).toISOString() }), anchorPins, 'invalid', ['NO_PATH', 'EXPIRED']);
  row('path, the key not yet issued at the signing time', path(graph, { to: ISSUER, at: new Date((carrier.iat - 60) * 1000).toISOString(), kid: genuine.kid }), anchorPins, 'invalid', [
    'KEY_NOT_CURRENT',
  ]);
  const revokedNode = structuredClone(graph);
  revokedNode.revocations.push({ subject: ISSUER, reason: 'cessationOfOperation', effective_at: new Date(Date.now() - DAY).toISOString(), recorded_at: now, retroactive: true });
  row('path, the node revoked before the signing time', path(revokedNode, { to: ISSUER, at: now }), anchorPins, 'invalid', ['NO_PATH', 'NODE_REVOKED']);
  const attacker = await newKey();
  const swappedRoot = structuredClone(graph);
  const root = swappedRoot.nodes.find((node: { id: string }) => node.id === ROOT);
  root.keys = [{ ...attacker.jwk, iat: root.keys[0].iat }];
  const rootEdge = swappedRoot.edges.find((edge: { sub: string }) => edge.sub === ISSUER);
  const { signature: _signature, ...claims } = rootEdge.credential;
  Object.assign(rootEdge, { credential: await signedJsonCredential(claims, attacker), kid: attacker.jwk.kid });
  row('path, the root key swapped and the credential signed again', path(swappedRoot, { to: ISSUER, at: now }), anchorPins, 'invalid', ['NO_PATH', 'BAD_SIGNATURE']);
  const editedCredential = structuredClone(graph);
  editedCredential.edges.find((edge: { sub: string }) => edge.sub === ISSUER).credential.exp = new Date(Date.now() + 3000 * DAY).toISOString();
  row('path, a credential edited', path(editedCredential, { to: ISSUER, at: now }), anchorPins, 'invalid', ['BAD_SIGNATURE']);
  row('path in trust path material, genuine', path(keyPath, { to: ISSUER, at: now, kid: genuine.kid }), anchorPins, 'valid');
  row('path in trust path material, the key revoked', path(keyPathNow, { to: ISSUER, at: new Date().toISOString(), kid: genuine.kid }), anchorPins, 'invalid', ['KEY_REVOKED']);
  row('path in trust path material, altered', path(slipped, { to: ISSUER, at: now }), anchorPins, 'invalid', ['TRUST_PATH_INVALID']);
  row('path, nothing pinned', path(graph, { to: ISSUER, at: now }), {}, 'unchecked');
  row('path, not a graph', path({ nodes: 'none' }, { to: ISSUER, at: now }), anchorPins, 'unchecked', ['MALFORMED_GRAPH']);

  browser = await sharedBrowser();
}, 180_000);
afterAll(async () => {
  await closeContexts(browser);
  await platform?.stop();
});

describe('one table of genuine and tampered material', () => {
  it('gets every expected verdict from the library in Node and from the page’s own bundle in Chromium, finding for finding', async () => {
    const inNode: Outcome[] = [];
    for (const row of rows) inNode.push(await outcomeOf(library, row));

    const context = await browser.newContext();
    const page = await context.newPage();
    await openPage(page, `${platform.stack.facade.url}/verify/`);
    // The page's script runs the library from that module, and holds no rules of its own.
    const app = await (await fetch(`${platform.stack.facade.url}/verify/app.js`)).text();
    expect(/from\s*"\.\/verifier\.js"/.test(app), 'app.js imports the library from ./verifier.js').toBe(true);
    const inChromium = (await page.evaluate(
      `(async (rows) => { const verifier = await import(new URL('verifier.js', location.href).href); const outcomes = []; for (const row of rows) outcomes.push(await (${outcomeOf.toString()})(verifier, row)); return outcomes; })(${JSON.stringify(rows)})`,
    )) as Outcome[];
    await context.close();

    const failedOf = (outcome: Outcome) => ('error' in outcome ? [outcome.error] : outcome.findings.filter(([, status]) => status === 'failed').map(([, , code]) => code));
    const table = rows.map((row, index) => ({
      row: row.name,
      node: inNode[index]!,
      chromium: inChromium[index]!,
      expected: row.expected,
    }));
    for (const { row, node, chromium, expected } of table) {
      expect(chromium, `${row}: Chromium as Node`).toEqual(node);
      // Material that cannot be read is what the command line exits 2 for, as it does for unchecked.
      expect(['error' in node ? 'unchecked' : node.verdict, failedOf(node)], row).toEqual([expected.verdict, expected.failed]);
    }
    console.log(
      `${rows.length} rows, the same findings in Node and Chromium:\n${table.map(({ row, node }) => `  ${'error' in node ? `could not read (${node.error})` : node.verdict.padEnd(9)} ${row}`).join('\n')}`,
    );
  });

  it("gives the page's verdict on the command line: pack --key-path, and path on a key's trust path material", async () => {
    const anchors = ['--anchors', saved.anchors, '--pin', saved.trustKeyring, '--json'];
    const genuine = await cli('pack', `@${saved.genuine}`, '--key-path', saved.keyPath, ...anchors);
    expect([genuine.code, genuine.report.verdict], genuine.stdout + genuine.stderr).toEqual([0, 'valid']);
    const revoked = await cli('pack', `@${saved.afterRevocation}`, '--key-path', saved.keyPathNow, ...anchors);
    expect([revoked.code, failedCodes(revoked.report)]).toEqual([1, ['KEY_REVOKED']]);
    expect(revoked.report.findings.find((finding: { code?: string }) => finding.code === 'KEY_REVOKED').message).toContain('(keyCompromise)');
    const path = await cli('path', saved.keyPathNow, '--to', ISSUER, ...anchors);
    expect([path.code, path.report.findings[0].check, path.report.findings[0].status]).toEqual([0, 'trust_path', 'ok']);
    // Material without its signature is not the service's word.
    const unsignedMaterial = await cli('path', files.json('unsigned.json', { ...JSON.parse(readFileSync(saved.keyPath, 'utf8')), signature: undefined }), '--to', ISSUER, ...anchors);
    expect([unsignedMaterial.code, failedCodes(unsignedMaterial.report)]).toEqual([1, ['TRUST_PATH_INVALID']]);
  });
});
