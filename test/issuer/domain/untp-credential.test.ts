/**
 * The credential mapping as a plain function of a passport state, and the wire formats it is carried
 * in, checked with other parties' code: UNTP's schema through Ajv, signatures through jose, status
 * lists through @digitalbazaar/bitstring, did:web against its specification's examples.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Bitstring } from '@digitalbazaar/bitstring';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import * as jose from 'jose';
import { describe, expect, it } from 'vitest';
import { signLogHead, EMPTY_FRONTIER } from '../../../lib/formats/issuer/index.js';
import {
  decodeStatusList,
  didDocument,
  didDocumentPath,
  didWebDocumentUrl,
  didWebOf,
  encodeStatusList,
  envelope,
  passportContext,
  signVcJwt,
  statusListCredential,
  STATUS_LIST_BYTES,
  verifyVcJwt,
} from '../../../lib/formats/vc/index.js';
import { credentialMediaType } from '../../../rest-facade/routes/credentials/mappers.js';
import { statusBits, untpPassportCredential, type PassportCredentialState } from '../../../subgraphs/issuer/domain/untp-credential.js';
import { PASSPORT_STATUSES } from '../../../lib/formats/issuer/status.js';
import { validateIdentity } from '../../../subgraphs/issuer/domain/identity.js';
import { expandSafely, PINNED_CONTEXT_BASE, pinnedPassportContext, productsWithClaims } from '../../support/json-ld.js';
import { at, ed25519Key, resolverOf } from './fixtures.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const UNTP_SCHEMA = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'untp-dpp-schema-0.6.1.json'), 'utf8')) as object;
const validateUntp = addFormats(new Ajv2020({ allErrors: true, strict: false })).compile(UNTP_SCHEMA);

const eventKey = ed25519Key();
const CONTEXT = {
  issuer: { did: 'did:web:dpp.example.com:issuer', name: 'Example issuer' },
  baseUrls: { issuer: 'https://dpp.example.com/issuer', registry: 'https://dpp.example.com/registry', archive: 'https://dpp.example.com/archive' },
};

function state(identity: string, more: Partial<PassportCredentialState> = {}): PassportCredentialState {
  return {
    id: 'p-1',
    identity: validateIdentity(identity),
    typeRef: { id: 'battery-passport', version: 2 },
    manifest: { chemistry: 'LFP', capacity_kwh: 75 },
    capabilityClass: 'trace',
    claims: {},
    status: 'active',
    logHead: signLogHead('p-1', EMPTY_FRONTIER, eventKey.signer, at(0)),
    statusIndex: 131_072 + 5,
    createdAt: at(-3600).toISOString(),
    ...more,
  };
}

describe('the UNTP passport credential of a passport state', () => {
  it.each([
    ['https://id.gs1.org/01/09520123456788/21/SN-42', 'item'],
    ['https://id.gs1.org/01/09520123456788/10/LOT-7', 'batch'],
    ['https://id.gs1.org/01/09520123456788', 'model'],
    ['urn:epc:id:sgtin:9520123.045678.SN-9', 'item'],
  ])('is valid against UNTP DPP 0.6.1 for %s (%s)', (identity, granularity) => {
    const credential = untpPassportCredential(state(identity), CONTEXT) as Record<string, any>;
    expect(validateUntp(credential), JSON.stringify(validateUntp.errors)).toBe(true);
    expect(credential.credentialSubject.granularityLevel).toBe(granularity);
    const product = credential.credentialSubject.product;
    expect(product.id).toMatch(/^https:\/\/id\.gs1\.org\/01\/\d{14}/);
    expect('serialNumber' in product).toBe(granularity === 'item');
    expect('batchNumber' in product).toBe(granularity === 'batch');
  });

  it('is a function of the state: equal states, equal credentials; a new head, a new validFrom', () => {
    const one = state('https://id.gs1.org/01/09520123456788/21/SN-42');
    expect(untpPassportCredential(one, CONTEXT)).toEqual(untpPassportCredential(structuredClone(one), CONTEXT));
    const later = { ...one, logHead: signLogHead('p-1', EMPTY_FRONTIER, eventKey.signer, at(60)) };
    expect((untpPassportCredential(later, CONTEXT) as any).validFrom).toBe(at(60).toISOString());
  });

  it('names its two status entries at the index’s list and position', () => {
    const credential = untpPassportCredential(state('https://id.gs1.org/01/09520123456788/21/SN-42'), CONTEXT) as Record<string, any>;
    expect(credential.credentialStatus).toEqual([
      {
        id: 'https://dpp.example.com/issuer/status-lists/revocation/1#5',
        type: 'BitstringStatusListEntry',
        statusPurpose: 'revocation',
        statusListIndex: '5',
        statusListCredential: 'https://dpp.example.com/issuer/status-lists/revocation/1',
      },
      {
        id: 'https://dpp.example.com/issuer/status-lists/suspension/1#5',
        type: 'BitstringStatusListEntry',
        statusPurpose: 'suspension',
        statusListIndex: '5',
        statusListCredential: 'https://dpp.example.com/issuer/status-lists/suspension/1',
      },
    ]);
  });

  it('uses the manifest’s product name when it has one, keeps UNTP’s type in characteristics, and carries profile claims', () => {
    const named = state('https://id.gs1.org/01/09520123456788/21/SN-42', { manifest: { product_name: 'Cell pack 75', type: 'x', capacity_kwh: 75 }, claims: { regulation: 'EU 2023/1542' } });
    const credential = untpPassportCredential(named, CONTEXT) as Record<string, any>;
    expect(validateUntp(credential), JSON.stringify(validateUntp.errors)).toBe(true);
    expect(credential.credentialSubject.product.name).toBe('Cell pack 75');
    expect(credential.credentialSubject.product.characteristics).toEqual({ type: ['Characteristics'], product_name: 'Cell pack 75', capacity_kwh: 75 });
    expect(credential.credentialSubject.profileClaims).toEqual({ regulation: 'EU 2023/1542' });
    const unnamed = untpPassportCredential(state('https://id.gs1.org/01/09520123456788/21/SN-42'), CONTEXT) as Record<string, any>;
    expect(unnamed.credentialSubject.product.name).toBe('battery-passport v2, GTIN 09520123456788');
  });

  it('sets the revocation bit for revoked only and the suspension bit for suspended only', () => {
    expect(Object.fromEntries(PASSPORT_STATUSES.map((status) => [status, statusBits(status)]))).toEqual({
      draft: { revocation: false, suspension: false },
      active: { revocation: false, suspension: false },
      suspended: { revocation: false, suspension: true },
      end_of_life: { revocation: false, suspension: false },
      revoked: { revocation: true, suspension: false },
    });
  });
});

describe('the UNTP passport credential as JSON-LD', () => {
  const issuerBase = CONTEXT.baseUrls.issuer;

  it('defines every term it uses: it expands in JSON-LD safe mode over the pinned VC 2.0, UNTP DPP 0.6.1 and platform contexts', async () => {
    // Product data members are the registry model's: nested, and named as JSON-LD keywords and aliases.
    const manifest = { chemistry: { short_name: 'NMC811', type: 'cell', id: 7 }, '@context': 'https://elsewhere.example/context', '@type': 'x', capacity_kwh: 75 };
    for (const more of [{}, { manifest, claims: { regulation: 'EU 2023/1542', annex: { number: 'XIII' } } }]) {
      const credential = untpPassportCredential(state('https://id.gs1.org/01/09520123456788/21/SN-42', more), CONTEXT) as Record<string, any>;
      expect(validateUntp(credential), JSON.stringify(validateUntp.errors)).toBe(true);
      const [expanded] = (await expandSafely(credential, issuerBase)) as Record<string, any>[];
      const subject = expanded!['https://www.w3.org/2018/credentials#credentialSubject'][0];
      expect(subject[`${issuerBase}/vocab#passportStatus`]).toEqual([{ '@value': 'active' }]);
      expect(subject[`${issuerBase}/vocab#signedLogHead`]).toEqual([{ '@value': credential.credentialSubject.signedLogHead, '@type': '@json' }]);
      // The product data is one JSON literal, whatever its members are named.
      const product = subject['https://test.uncefact.org/vocabulary/untp/core/0/product'][0];
      expect(product['https://test.uncefact.org/vocabulary/untp/core/0/characteristics']).toEqual([{ '@value': credential.credentialSubject.product.characteristics, '@type': '@json' }]);
    }
  });

  it('names the platform context v1 with the SHA-384 of the bytes served, which are the pinned ones: a published version never changes', () => {
    const credential = untpPassportCredential(state('https://id.gs1.org/01/09520123456788/21/SN-42'), CONTEXT) as Record<string, any>;
    const context = passportContext(PINNED_CONTEXT_BASE);
    expect(context.text).toBe(pinnedPassportContext(PINNED_CONTEXT_BASE));
    expect(credential['@context']).toEqual(['https://www.w3.org/ns/credentials/v2', 'https://test.uncefact.org/vocabulary/untp/dpp/0.6.1/', `${PINNED_CONTEXT_BASE}/contexts/passport/v1`]);
    const digest = `sha384-${createHash('sha384').update(pinnedPassportContext(PINNED_CONTEXT_BASE)).digest('base64')}`;
    expect(credential.relatedResource).toEqual([{ id: `${PINNED_CONTEXT_BASE}/contexts/passport/v1`, mediaType: 'application/ld+json', digestSRI: digest }]);
  });

  it('claims the one conformity the issuer assessed, the config vector against its registry model, where tests-untp’s tier 3 looks for claims', async () => {
    const credential = untpPassportCredential(state('https://id.gs1.org/01/09520123456788/21/SN-42'), CONTEXT) as Record<string, any>;
    const validation = 'https://dpp.example.com/registry/models/battery-passport/validate?version=2';
    expect(credential.credentialSubject.conformityClaim).toEqual([
      expect.objectContaining({
        id: 'https://dpp.example.com/issuer/passports/p-1#model-conformity',
        conformance: true,
        conformityTopic: 'governance.transparency',
        assessmentDate: at(-3600).toISOString().slice(0, 10),
        assessmentCriteria: [expect.objectContaining({ id: validation, conformityTopic: 'governance.transparency', status: 'active' })],
      }),
    ]);
    // Nothing said of regulations: the model's schema was checked, not the product against a law.
    expect(credential.credentialSubject.conformityClaim[0]).not.toHaveProperty('referenceRegulation');
    expect(await productsWithClaims(credential, issuerBase)).toEqual([
      {
        product: 'https://id.gs1.org/01/09520123456788/21/SN-42',
        name: 'battery-passport v2, GTIN 09520123456788',
        claims: [
          {
            id: 'https://dpp.example.com/issuer/passports/p-1#model-conformity',
            topic: 'https://test.uncefact.org/vocabulary/untp/core/0/conformityTopicCode#governance.transparency',
            conformance: 'true',
            criteria: ['Product data valid against registry model battery-passport v2'],
          },
        ],
      },
    ]);
  });
});

describe('vc+jwt', () => {
  it('is a JWS jose verifies under the key, with typ vc+jwt, cty vc, alg EdDSA and the given kid; deterministic', async () => {
    const key = ed25519Key();
    const credential = { '@context': ['https://www.w3.org/ns/credentials/v2'], type: ['VerifiableCredential'], issuer: 'did:web:x', credentialSubject: { id: 'urn:x' } };
    const jwt = signVcJwt(credential, key.signer, `did:web:x#${key.jwk.kid}`);
    expect(signVcJwt(credential, key.signer, `did:web:x#${key.jwk.kid}`)).toBe(jwt);
    const { payload, protectedHeader } = await jose.jwtVerify(jwt, await jose.importJWK({ ...key.jwk }, 'EdDSA'), { typ: 'vc+jwt' });
    expect(protectedHeader).toEqual({ alg: 'EdDSA', typ: 'vc+jwt', cty: 'vc', kid: `did:web:x#${key.jwk.kid}` });
    expect(payload).toEqual(credential);
    // Our own verifier agrees, given the key under the DID URL's fragment.
    const byFragment = resolverOf(key);
    expect(verifyVcJwt(jwt, (header) => byFragment({ ...header, kid: String(header.kid).split('#')[1] })).credential).toEqual(credential);
    expect(envelope(jwt)).toEqual({ '@context': 'https://www.w3.org/ns/credentials/v2', id: `data:application/vc+jwt,${jwt}`, type: 'EnvelopedVerifiableCredential' });
  });
});

describe('did:web', () => {
  it.each([
    ['https://w3c-ccg.github.io', 'did:web:w3c-ccg.github.io', 'https://w3c-ccg.github.io/.well-known/did.json', '/.well-known/did.json'],
    ['https://w3c-ccg.github.io/user/alice', 'did:web:w3c-ccg.github.io:user:alice', 'https://w3c-ccg.github.io/user/alice/did.json', '/did.json'],
    ['https://example.com:3000/user/alice/', 'did:web:example.com%3A3000:user:alice', 'https://example.com:3000/user/alice/did.json', '/did.json'],
    ['http://127.0.0.1:3000/issuer', 'did:web:127.0.0.1%3A3000:issuer', 'https://127.0.0.1:3000/issuer/did.json', '/did.json'],
  ])('%s is %s, resolved at %s (served at %s)', (base, did, documentUrl, path) => {
    expect(didWebOf(base)).toBe(did);
    expect(didWebDocumentUrl(did)).toBe(documentUrl);
    expect(didDocumentPath(base)).toBe(path);
  });

  it('lists keys as JsonWebKey with public members only; only asserting keys in assertionMethod', () => {
    const [one, two] = [ed25519Key(), ed25519Key()];
    const document = didDocument('did:web:x', [
      { kid: one.jwk.kid, jwk: { ...one.jwk, purpose: 'event', iat: 1 }, asserts: false },
      { kid: two.jwk.kid, jwk: { ...two.jwk, alg: 'Ed25519' }, asserts: true },
    ]);
    expect(document.verificationMethod[0]).toEqual({ id: `did:web:x#${one.jwk.kid}`, type: 'JsonWebKey', controller: 'did:web:x', publicKeyJwk: one.jwk });
    expect(document.assertionMethod).toEqual([`did:web:x#${two.jwk.kid}`]);
  });
});

describe('Bitstring Status List', () => {
  it('encodes entry i as the i-th bit from the left, which an independent decoder reads back', async () => {
    const bits = new Uint8Array(STATUS_LIST_BYTES);
    for (const entry of [0, 9, 131_071]) bits[entry >> 3]! |= 0x80 >> (entry & 7);
    const encoded = encodeStatusList(bits);
    expect(encoded.startsWith('u')).toBe(true);
    expect(encodeStatusList(bits)).toBe(encoded);
    const decoded = new Bitstring({ buffer: await Bitstring.decodeBits({ encoded: encoded.slice(1) }) });
    expect(decoded.length).toBe(131_072);
    expect([0, 1, 8, 9, 10, 131_070, 131_071].map((entry) => decoded.get(entry))).toEqual([true, false, false, true, false, false, true]);
    expect(decodeStatusList(encoded)).toEqual(bits);
    expect(() => encodeStatusList(new Uint8Array(100))).toThrow(/131072/);
  });

  it('makes the list credential of a purpose, every term of it defined by the VC 2.0 context', async () => {
    const credential = statusListCredential({
      url: 'https://x/status-lists/suspension/0',
      issuer: { id: 'did:web:x', name: 'X' },
      purpose: 'suspension',
      validFrom: at(0),
      bits: new Uint8Array(STATUS_LIST_BYTES),
    });
    expect(credential).toMatchObject({
      type: ['VerifiableCredential', 'BitstringStatusListCredential'],
      validFrom: at(0).toISOString(),
      credentialSubject: { id: 'https://x/status-lists/suspension/0#list', type: 'BitstringStatusList', statusPurpose: 'suspension' },
    });
    await expandSafely(credential, 'https://x');
  });
});

describe('credential representations by Accept', () => {
  it.each([
    [undefined, 'application/vc+jwt'],
    ['*/*', 'application/vc+jwt'],
    ['text/html', 'application/vc+jwt'],
    ['application/vc', 'application/vc'],
    ['application/json', 'application/json'],
    ['application/*', 'application/vc+jwt'],
    ['application/vc+jwt;q=0.5, application/json', 'application/json'],
    ['application/json;q=0, */*', 'application/vc+jwt'],
  ])('%s gives %s', (accept, mediaType) => {
    expect(credentialMediaType(accept)).toBe(mediaType);
  });
});
