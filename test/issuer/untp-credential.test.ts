/**
 * The issuer's passports as the DPP ecosystem reads them, checked with the ecosystem's libraries
 * only: UNTP's own JSON Schema (release 0.6.1, committed) through Ajv, did:web through did-resolver
 * and web-did-resolver, the vc+jwt signature through jose, and the Bitstring Status List through
 * @digitalbazaar/bitstring. The issuer's public base URL is https behind a TLS proxy on loopback (as
 * in production: did:web is resolved over https only), with a test certificate the process trusts.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { Bitstring } from '@digitalbazaar/bitstring';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { Resolver, type DIDDocument } from 'did-resolver';
import * as jose from 'jose';
import { getResolver } from 'web-did-resolver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { expandSafely, pinnedPassportContext, productsWithClaims } from '../support/json-ld.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { appendEvent, CONFIG_VECTOR, createModel, createPassport, PAYLOADS } from './support.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const fixtures = join(import.meta.dirname, 'fixtures');
const UNTP_SCHEMA = JSON.parse(readFileSync(join(fixtures, 'untp-dpp-schema-0.6.1.json'), 'utf8')) as object;
const validateUntp = addFormats(new Ajv2020({ allErrors: true, strict: false })).compile(UNTP_SCHEMA);
const TLS = { key: readFileSync(join(fixtures, 'tls-key.pem')), cert: readFileSync(join(fixtures, 'tls-cert.pem')) };

let platform: TestStack;
let proxy: https.Server;
let publicBase: string;
let did: string;
const trustedBefore = https.globalAgent.options.ca;
const MODEL = 'untp-battery';

/** A TLS-terminating reverse proxy to the facade, as a deployment puts in front of it. */
function startTlsProxy(port: number, upstream: string): Promise<https.Server> {
  const target = new URL(upstream);
  const server = https.createServer(TLS, (request, response) => {
    const forwarded = http.request(
      { host: target.hostname, port: target.port, path: request.url, method: request.method, headers: { ...request.headers, host: target.host, 'x-forwarded-proto': 'https' } },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => response.destroy());
    request.pipe(forwarded);
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

/** GET through the TLS proxy, as a client of the public base URL. */
async function publicGet(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    https
      .get(`${publicBase}${path}`, { headers, ca: TLS.cert }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, text }));
      })
      .on('error', reject);
  });
}

/** The issuer's key for a vc+jwt, found only through did:web: resolve the issuer, take the method the kid names. */
async function keyThroughDidWeb(jwt: string): Promise<{ key: Awaited<ReturnType<typeof jose.importJWK>>; document: DIDDocument }> {
  const header = jose.decodeProtectedHeader(jwt);
  const issuer = (jose.decodeJwt(jwt) as { issuer: { id: string } }).issuer.id;
  const resolution = await new Resolver(getResolver()).resolve(issuer);
  expect(resolution.didResolutionMetadata.error, resolution.didResolutionMetadata.message as string).toBeUndefined();
  const document = resolution.didDocument!;
  expect(document.id).toBe(issuer);
  expect(header.kid!.startsWith(`${issuer}#`)).toBe(true);
  expect(document.assertionMethod).toContain(header.kid);
  const method = document.verificationMethod!.find((candidate) => candidate.id === header.kid)!;
  expect(method.type).toBe('JsonWebKey');
  return { key: await jose.importJWK(method.publicKeyJwk as jose.JWK, header.alg), document };
}

async function verifiedCredential(jwt: string): Promise<Record<string, any>> {
  const { key } = await keyThroughDidWeb(jwt);
  const { payload, protectedHeader } = await jose.jwtVerify(jwt, key, { typ: 'vc+jwt' });
  expect(protectedHeader).toMatchObject({ alg: 'EdDSA', typ: 'vc+jwt', cty: 'vc' });
  return payload as Record<string, any>;
}

async function credentialOf(passportId: string): Promise<string> {
  const response = await publicGet(`/passports/${passportId}/credential`);
  expect(response.status, response.text).toBe(200);
  expect(response.headers['content-type']).toBe('application/vc+jwt');
  return response.text;
}

/** The bit of a passport's entry of a purpose, read from the list its credential names, with an independent decoder. */
async function statusBit(credential: Record<string, any>, purpose: 'revocation' | 'suspension'): Promise<boolean> {
  const entry = (credential.credentialStatus as any[]).find((candidate) => candidate.statusPurpose === purpose);
  expect(entry).toMatchObject({ type: 'BitstringStatusListEntry', statusPurpose: purpose });
  const listPath = new URL(entry.statusListCredential).pathname.slice(new URL(publicBase).pathname.length);
  const response = await publicGet(listPath);
  expect(response.status, response.text).toBe(200);
  const list = await verifiedCredential(response.text);
  expect(list.type).toEqual(['VerifiableCredential', 'BitstringStatusListCredential']);
  expect(list.id).toBe(entry.statusListCredential);
  expect(list.credentialSubject).toMatchObject({ type: 'BitstringStatusList', statusPurpose: purpose });
  const encoded = list.credentialSubject.encodedList as string;
  expect(encoded[0]).toBe('u');
  const bits = new Bitstring({ buffer: await Bitstring.decodeBits({ encoded: encoded.slice(1) }) });
  expect(bits.length).toBeGreaterThanOrEqual(131_072);
  return bits.get(Number(entry.statusListIndex));
}

beforeAll(async () => {
  const port = await freePort();
  publicBase = `https://127.0.0.1:${port}/issuer`;
  did = `did:web:127.0.0.1%3A${port}:issuer`;
  platform = await startTestStack({ env: { ISSUER_PUBLIC_URL: publicBase } });
  proxy = await startTlsProxy(port, platform.base('issuer'));
  // web-did-resolver fetches with the default https agent: it trusts the test certificate for this file.
  https.globalAgent.options.ca = [TLS.cert];
  await createModel(platform, MODEL);
}, 120_000);

afterAll(async () => {
  https.globalAgent.options.ca = trustedBefore;
  await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
  await platform?.stop();
});

describe('the UNTP passport credential', () => {
  it('is valid against UNTP DPP 0.6.1’s JSON Schema and maps the passport', async () => {
    const passport = await createPassport(platform, MODEL);
    const jwt = await credentialOf(passport.passport_id);
    const credential = jose.decodeJwt(jwt) as Record<string, any>;
    expect(validateUntp(credential), JSON.stringify(validateUntp.errors)).toBe(true);

    const identity = passport.core.identity;
    expect(credential['@context']).toEqual(['https://www.w3.org/ns/credentials/v2', 'https://test.uncefact.org/vocabulary/untp/dpp/0.6.1/', `${publicBase}/contexts/passport/v1`]);
    expect(credential.id).toBe(`${publicBase}/passports/${passport.passport_id}/credential`);
    expect(credential.issuer).toEqual({ type: ['CredentialIssuer'], id: did, name: 'passport-issuer' });
    expect(credential.validFrom).toBe(passport.log_head.timestamp);
    const subject = credential.credentialSubject;
    expect(subject.granularityLevel).toBe('item');
    expect(subject.product).toMatchObject({ id: identity.digital_link, registeredId: identity.gtin, serialNumber: identity.serial, characteristics: { type: ['Characteristics'], ...CONFIG_VECTOR } });
    expect(subject.product.productCategory[0]).toMatchObject({ code: `${MODEL}@1`, id: `${platform.base('registry')}/models/${MODEL}?version=1` });
    expect(subject.product.furtherInformation.map((link: { linkURL: string }) => link.linkURL)).toContain(`${platform.base('archive')}/snapshots?passport_id=${passport.passport_id}`);
    expect(subject.passportStatus).toBe('draft');
    expect(subject.signedLogHead).toEqual(passport.log_head);
    expect(credential.credentialStatus.map((entry: { statusPurpose: string }) => entry.statusPurpose)).toEqual(['revocation', 'suspension']);
  });

  it('is JSON-LD with every term defined, as tests-untp reads it: safe-mode expansion over pinned contexts, the platform’s as its issuer serves it, and a product with claims', async () => {
    const passport = await createPassport(platform, MODEL);
    const credential = await verifiedCredential(await credentialOf(passport.passport_id));
    // The platform's context, fetched where the credential names it: the pinned bytes, with the digest the credential carries.
    const [related] = credential.relatedResource as { id: string; digestSRI: string }[];
    expect(related!.id).toBe(`${publicBase}/contexts/passport/v1`);
    const served = await publicGet('/contexts/passport/v1');
    expect([served.status, served.headers['content-type'], served.headers['cache-control']]).toEqual([200, 'application/ld+json', 'public, max-age=31536000, immutable']);
    expect(served.text).toBe(pinnedPassportContext(publicBase));
    expect(related!.digestSRI).toBe(`sha384-${createHash('sha384').update(served.text).digest('base64')}`);
    expect((await publicGet('/contexts/passport/v1', { 'if-none-match': served.headers.etag! })).status).toBe(304);

    await expandSafely(credential, publicBase);
    const [product] = await productsWithClaims(credential, publicBase);
    expect(product!.claims.map((claim) => [claim.topic.split('#')[1], claim.conformance, claim.criteria])).toEqual([
      ['governance.transparency', 'true', [`Product data valid against registry model ${MODEL} v1`]],
    ]);
    // Each of the platform's terms is described where its IRI points.
    const vocabulary = JSON.parse((await publicGet('/vocab')).text) as { '@graph': { '@id': string; 'rdfs:comment': string }[] };
    const context = JSON.parse(served.text)['@context'] as Record<string, { '@id': string }>;
    const ownTerms = Object.values(context).flatMap((term) => (typeof term === 'object' && term['@id'].startsWith(`${publicBase}/vocab#`) ? [term['@id']] : []));
    expect(vocabulary['@graph'].map((term) => term['@id']).sort()).toEqual(ownTerms.sort());
    expect(ownTerms.sort()).toEqual(['capabilityClass', 'passportStatus', 'profileClaims', 'signedLogHead'].map((term) => `${publicBase}/vocab#${term}`));
  });

  it('verifies with jose under the key did:web resolves to, through a TLS proxy', async () => {
    const passport = await createPassport(platform, MODEL);
    const jwt = await credentialOf(passport.passport_id);
    const { document } = await keyThroughDidWeb(jwt);
    expect(document.alsoKnownAs).toEqual([publicBase]);
    const credential = await verifiedCredential(jwt);
    expect(credential.credentialSubject.id).toBe(`${publicBase}/passports/${passport.passport_id}`);
    // The kid is the credential key of the keyring, the one key in assertionMethod.
    const keyring = (await platform.rest('issuer', '/keyring')).body as { keys: { kid: string; purpose: string; x: string }[] };
    const credentialKey = keyring.keys.find((key) => key.purpose === 'credential')!;
    expect(jose.decodeProtectedHeader(jwt).kid).toBe(`${did}#${credentialKey.kid}`);
    expect(document.assertionMethod).toEqual([`${did}#${credentialKey.kid}`]);
    // A signature over other bytes fails under the same key.
    const [header, payload, signature] = jwt.split('.');
    const forged = `${header}.${jose.base64url.encode(JSON.stringify({ ...credential, validFrom: '2000-01-01T00:00:00Z' }))}.${signature}`;
    const { key } = await keyThroughDidWeb(jwt);
    await expect(jose.jwtVerify(forged, key)).rejects.toThrow(/signature/);
    expect(payload).toBeTruthy();
  });

  it('is served as an EnvelopedVerifiableCredential when JSON is asked for, and through GraphQL', async () => {
    const passport = await createPassport(platform, MODEL);
    const jwt = await credentialOf(passport.passport_id);
    for (const accept of ['application/vc', 'application/json', 'application/json;q=0.9, application/vc+jwt;q=0.5']) {
      const response = await publicGet(`/passports/${passport.passport_id}/credential`, { accept });
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(accept.startsWith('application/vc') ? /^application\/vc$/ : /^application\/json/);
      expect(JSON.parse(response.text)).toEqual({ '@context': 'https://www.w3.org/ns/credentials/v2', id: `data:application/vc+jwt,${jwt}`, type: 'EnvelopedVerifiableCredential' });
      expect(response.headers.vary).toBe('accept');
    }
    const answer = await platform.graphql(`query ($id: ID!) { passport(id: $id) { credential { jwt kid credential } } }`, { id: passport.passport_id });
    expect(answer.errors).toBeUndefined();
    expect(answer.data.passport.credential.jwt).toBe(jwt);
    expect(answer.data.passport.credential.kid).toBe(jose.decodeProtectedHeader(jwt).kid);
    expect(answer.data.passport.credential.credential).toEqual(jose.decodeJwt(jwt));
  });

  it('is the same for the same state, answers If-None-Match with 304, and is re-issued when the passport changes', async () => {
    const passport = await createPassport(platform, MODEL);
    const first = await publicGet(`/passports/${passport.passport_id}/credential`);
    const again = await publicGet(`/passports/${passport.passport_id}/credential`);
    expect(again.text).toBe(first.text);
    expect(again.headers.etag).toBe(first.headers.etag);
    const unchanged = await publicGet(`/passports/${passport.passport_id}/credential`, { 'if-none-match': first.headers.etag! });
    expect(unchanged.status).toBe(304);
    expect(unchanged.text).toBe('');

    const appended = await appendEvent(platform, passport.passport_id, 'activated', PAYLOADS.activated!());
    expect(appended.status).toBe(201);
    const changed = await publicGet(`/passports/${passport.passport_id}/credential`, { 'if-none-match': first.headers.etag! });
    expect(changed.status).toBe(200);
    const credential = jose.decodeJwt(changed.text) as Record<string, any>;
    expect(credential.validFrom).toBe(appended.body.event.recorded_at);
    expect(credential.credentialSubject.passportStatus).toBe('active');
    expect(credential.credentialSubject.signedLogHead).toEqual(appended.body.log_head);
  });

  it('is, with ?at=, the credential as it was then: the status and signed head of then, the same bytes for the same state', async () => {
    const passport = await createPassport(platform, MODEL);
    const events: Record<string, any>[] = [];
    for (const type of ['activated', 'suspended', 'reinstated']) {
      const appended = await appendEvent(platform, passport.passport_id, type, PAYLOADS[type]!());
      expect(appended.status).toBe(201);
      events.push(appended.body);
      // Distinct instants, so that each event's time names one state.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const suspendedAt = events[1]!.event.recorded_at as string;
    const then = await publicGet(`/passports/${passport.passport_id}/credential?at=${encodeURIComponent(suspendedAt)}`);
    expect(then.status, then.text).toBe(200);
    const credential = await verifiedCredential(then.text);
    expect(validateUntp(credential), JSON.stringify(validateUntp.errors)).toBe(true);
    expect(credential.validFrom).toBe(suspendedAt);
    expect(credential.credentialSubject.passportStatus).toBe('suspended');
    expect(credential.credentialSubject.signedLogHead).toEqual(events[1]!.log_head);
    // Today's state asked at a later instant is today's credential, byte for byte.
    const now = await credentialOf(passport.passport_id);
    const later = await publicGet(`/passports/${passport.passport_id}/credential?at=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    expect(later.text).toBe(now);
    const before = await platform.rest('issuer', `/passports/${passport.passport_id}/credential?at=2000-01-01T00:00:00Z`);
    expect([before.status, before.body.code]).toEqual([404, 'NOT_YET_ISSUED']);
    expect((await platform.rest('issuer', `/passports/${passport.passport_id}/credential?at=yesterday`)).status).toBe(400);
  });

  it('is a 404 problem for an unknown passport', async () => {
    const response = await platform.rest('issuer', '/passports/no-such-passport/credential');
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});

describe('the did:web document', () => {
  it('is at the path form under the prefix and at the well-known path, with every unrevoked key as JsonWebKey', async () => {
    const pathForm = await publicGet('/did.json');
    const wellKnown = await publicGet('/.well-known/did.json');
    expect(pathForm.status).toBe(200);
    expect(pathForm.headers['content-type']).toBe('application/did+ld+json');
    expect(wellKnown.text).toBe(pathForm.text);
    const document = JSON.parse(pathForm.text) as DIDDocument;
    expect(document.id).toBe(did);
    const keyring = (await platform.rest('issuer', '/keyring')).body as { keys: { kid: string; x: string; purpose: string }[] };
    expect(document.verificationMethod!.map((method) => method.id).sort()).toEqual(keyring.keys.map((key) => `${did}#${key.kid}`).sort());
    for (const method of document.verificationMethod!) {
      expect(method).toMatchObject({ type: 'JsonWebKey', controller: did });
      expect(Object.keys(method.publicKeyJwk!).every((member) => ['kty', 'crv', 'x', 'y', 'alg', 'kid'].includes(member))).toBe(true);
    }
    const conditional = await publicGet('/did.json', { 'if-none-match': pathForm.headers.etag! });
    expect(conditional.status).toBe(304);
  });
});

describe('the Bitstring Status List', () => {
  it('turns a passport’s bits in the transaction of its suspension, reinstatement and revocation', async () => {
    const passport = await createPassport(platform, MODEL);
    const credential = jose.decodeJwt(await credentialOf(passport.passport_id)) as Record<string, any>;
    const bits = async () => ({ revocation: await statusBit(credential, 'revocation'), suspension: await statusBit(credential, 'suspension') });
    expect(await bits()).toEqual({ revocation: false, suspension: false });

    const steps: [string, { revocation: boolean; suspension: boolean }][] = [
      ['activated', { revocation: false, suspension: false }],
      ['suspended', { revocation: false, suspension: true }],
      ['reinstated', { revocation: false, suspension: false }],
      ['suspended', { revocation: false, suspension: true }],
      ['revoked', { revocation: true, suspension: false }],
    ];
    for (const [type, expected] of steps) {
      const appended = await appendEvent(platform, passport.passport_id, type, PAYLOADS[type]!());
      expect(appended.status, appended.text).toBe(201);
      expect(await bits(), type).toEqual(expected);
    }
    // A refused event (nothing follows revocation, rule I6) changes no bit.
    const refused = await appendEvent(platform, passport.passport_id, 'reinstated', PAYLOADS.reinstated!());
    expect(refused.status).toBe(409);
    expect(await bits()).toEqual({ revocation: true, suspension: false });
    // The credential keeps naming the same entries.
    const now = jose.decodeJwt(await credentialOf(passport.passport_id)) as Record<string, any>;
    expect(now.credentialStatus).toEqual(credential.credentialStatus);
  });

  it('gives other passports their own entries, left alone by a neighbour’s revocation', async () => {
    const [one, two] = [await createPassport(platform, MODEL), await createPassport(platform, MODEL)];
    const [first, second] = await Promise.all([one, two].map(async (passport) => jose.decodeJwt(await credentialOf(passport.passport_id)) as Record<string, any>));
    expect(first!.credentialStatus[0].statusListIndex).not.toBe(second!.credentialStatus[0].statusListIndex);
    expect((await appendEvent(platform, one!.passport_id, 'revoked', PAYLOADS.revoked!())).status).toBe(201);
    expect(await statusBit(first!, 'revocation')).toBe(true);
    expect(await statusBit(second!, 'revocation')).toBe(false);
  });

  it('is served with an ETag, 304 while no bit changes, a new tag once one does', async () => {
    const passport = await createPassport(platform, MODEL);
    const credential = jose.decodeJwt(await credentialOf(passport.passport_id)) as Record<string, any>;
    const url = new URL(credential.credentialStatus[1].statusListCredential).pathname.slice('/issuer'.length);
    const before = await publicGet(url);
    expect(before.headers['cache-control']).toBe('no-cache');
    expect((await publicGet(url, { 'if-none-match': before.headers.etag! })).status).toBe(304);
    const json = await publicGet(url, { accept: 'application/json' });
    expect(JSON.parse(json.text).id).toBe(`data:application/vc+jwt,${before.text}`);
    expect(json.headers.etag).not.toBe(before.headers.etag);

    expect((await appendEvent(platform, passport.passport_id, 'activated', PAYLOADS.activated!())).status).toBe(201);
    expect((await publicGet(url, { 'if-none-match': before.headers.etag! })).status).toBe(304);
    expect((await appendEvent(platform, passport.passport_id, 'suspended', PAYLOADS.suspended!())).status).toBe(201);
    const after = await publicGet(url, { 'if-none-match': before.headers.etag! });
    expect(after.status).toBe(200);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(Date.parse(String(jose.decodeJwt(after.text).validFrom))).toBeGreaterThan(Date.parse(String(jose.decodeJwt(before.text).validFrom)));
  });

  it('answers 404 for a list that does not exist', async () => {
    for (const path of ['/status-lists/revocation/7', '/status-lists/refresh/0', '/status-lists/suspension/x', '/status-lists/suspension/99999999999']) {
      const response = await platform.rest('issuer', path);
      expect(response.status, path).toBe(404);
    }
  });
});
