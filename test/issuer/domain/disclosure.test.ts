/**
 * Restricted attributes as salted digests (lib/formats/issuer/disclosure.ts), held to RFC 9901's own
 * examples and to an independent computation (node:crypto's SHA-256 over the disclosure's text).
 */
import { createHash } from 'node:crypto';
import * as jose from 'jose';
import { describe, expect, it } from 'vitest';
import { applyDisclosures, commitManifest, discloseMember, disclosureDigest, isIssuerError, manifestDigest, readDisclosure } from '../../../lib/formats/issuer/index.js';
import type { JwsHeader } from '../../../lib/crypto/jws.js';
import { envelope, signVcSdJwt, verifyVcSdJwt } from '../../../lib/formats/vc/index.js';
import { ed25519Key, resolverOf } from './fixtures.js';

const independentDigest = (disclosure: string) => createHash('sha256').update(disclosure, 'ascii').digest('base64url');

describe('RFC 9901 examples', () => {
  // §4.2.1 and §4.2.3: an object member, and its digest over the base64url text.
  const FAMILY_NAME = 'WyJfMjZiYzRMVC1hYzZxMktJNmNCVzVlcyIsICJmYW1pbHlfbmFtZSIsICJNw7ZiaXVzIl0';
  // §5.1, the example SD-JWT's given_name.
  const GIVEN_NAME = 'WyIyR0xDNDJzS1F2ZUNmR2ZyeU5STjl3IiwgImdpdmVuX25hbWUiLCAiSm9obiJd';

  it('give the digests the RFC gives', () => {
    expect(disclosureDigest(FAMILY_NAME)).toBe('X9yH0Ajrdm1Oij4tWso9UzzKJvPoDxwmuEcO3XAdRC0');
    expect(disclosureDigest(GIVEN_NAME)).toBe('jsu9yVulwQQlhFlM_3JlzMaSFzglhQG0DpfayQwLUK4');
  });

  it('read back as the members they disclose, whatever the JSON spacing', () => {
    expect(readDisclosure(FAMILY_NAME)).toMatchObject({ name: 'family_name', value: 'Möbius', digest: 'X9yH0Ajrdm1Oij4tWso9UzzKJvPoDxwmuEcO3XAdRC0' });
    // §4.2.1's other encodings of the same member: other text, so another digest.
    const escaped = 'WyJfMjZiYzRMVC1hYzZxMktJNmNCVzVlcyIsICJmYW1pbHlfbmFtZSIsICJNXHUwMGY2Yml1cyJd';
    expect(readDisclosure(escaped)).toMatchObject({ name: 'family_name', value: 'Möbius', digest: independentDigest(escaped) });
  });

  it('are rebuilt from their salt, name and value, and refused when they are array elements', () => {
    // Ours is JSON.stringify's spacing: the same member, another text than the RFC's spaced one.
    const ours = discloseMember('family_name', 'Möbius', '_26bc4LT-ac6q2KI6cBW5es');
    expect(ours.disclosure).toBe(Buffer.from('["_26bc4LT-ac6q2KI6cBW5es","family_name","Möbius"]').toString('base64url'));
    expect(ours.digest).toBe(independentDigest(ours.disclosure));
    // §4.2.2: ["lklxF5jMYlGTPUovMNIvCA", "FR"] discloses an array element, which a manifest member is not.
    expect(() => readDisclosure('WyJsa2x4RjVqTVlsR1RQVW92TU5JdkNBIiwgIkZSIl0')).toThrow(/salt, name and value/);
  });

  it('process as §7.1 says: a presented disclosure in place, an unpresented one hidden', () => {
    const payload = { iss: 'https://issuer.example.com', _sd: ['jsu9yVulwQQlhFlM_3JlzMaSFzglhQG0DpfayQwLUK4', 'X9yH0Ajrdm1Oij4tWso9UzzKJvPoDxwmuEcO3XAdRC0'], _sd_alg: 'sha-256' };
    expect(applyDisclosures(payload, [GIVEN_NAME]).processed).toEqual({ iss: 'https://issuer.example.com', given_name: 'John' });
    expect(applyDisclosures(payload, []).processed).toEqual({ iss: 'https://issuer.example.com' });
  });
});

describe('a committed manifest', () => {
  const manifest = { chemistry: 'LFP', state_of_health: { soh_pct: 97 }, declaration_of_conformity_url: 'https://example.com/doc.pdf' };
  const audiences = { state_of_health: 'legitimate-interest', declaration_of_conformity_url: 'authority', chemistry: 'public' } as const;

  it('is the config vector itself when nothing is restricted', () => {
    const plain = commitManifest(manifest, { chemistry: 'public' });
    expect(plain.committed).toBe(manifest);
    expect(plain.disclosures).toEqual([]);
    expect(manifestDigest(manifest)).toBe(
      createHash('sha256')
        .update(JSON.stringify({ chemistry: 'LFP', declaration_of_conformity_url: 'https://example.com/doc.pdf', state_of_health: { soh_pct: 97 } }))
        .digest('hex'),
    );
  });

  it('holds the public members and a sorted digest of each restricted one, and no restricted value', () => {
    const { committed, disclosures } = commitManifest(manifest, audiences);
    expect(Object.keys(committed).sort()).toEqual(['_sd', 'chemistry']);
    expect(JSON.stringify(committed)).not.toMatch(/soh_pct|example\.com/);
    expect(disclosures.map((disclosure) => [disclosure.name, disclosure.audience])).toEqual([
      ['state_of_health', 'legitimate-interest'],
      ['declaration_of_conformity_url', 'authority'],
    ]);
    expect(committed._sd).toEqual(disclosures.map((disclosure) => independentDigest(disclosure.disclosure)).sort());
    for (const { disclosure, name, value } of disclosures) {
      const [salt, ...rest] = JSON.parse(Buffer.from(disclosure, 'base64url').toString('utf8')) as [string, string, unknown];
      expect(rest).toEqual([name, value]);
      expect(Buffer.from(salt, 'base64url').length).toBeGreaterThanOrEqual(16);
    }
    // Fresh salts: the same value is committed to by another digest each time.
    expect(commitManifest(manifest, audiences).committed._sd).not.toEqual(committed._sd);
  });

  it('gives back the members of the disclosures presented, and refuses one it does not commit to, or one twice', () => {
    const { committed, disclosures } = commitManifest(manifest, audiences);
    const [health, conformity] = disclosures.map((disclosure) => disclosure.disclosure) as [string, string];
    expect(applyDisclosures(committed, [health]).processed).toEqual({ chemistry: 'LFP', state_of_health: { soh_pct: 97 } });
    expect(applyDisclosures(committed, [health, conformity]).processed).toEqual(manifest);
    const forged = discloseMember('state_of_health', { soh_pct: 100 }).disclosure;
    const refusal = (texts: string[]) => {
      try {
        applyDisclosures(committed, texts);
      } catch (error) {
        return isIssuerError(error) ? error.code : error;
      }
      return undefined;
    };
    expect(refusal([forged])).toBe('INVALID_DISCLOSURE');
    expect(refusal([health, health])).toBe('INVALID_DISCLOSURE');
    expect(refusal(['not base64url!'])).toBe('INVALID_DISCLOSURE');
  });
});

describe('a vc+sd-jwt', () => {
  it('is a JWS jose verifies, then disclosures found by digest in its _sd; ours verifies each view and refuses a forged one', async () => {
    const key = ed25519Key();
    const kid = `did:web:x#${key.jwk.kid}`;
    const { committed, disclosures } = commitManifest({ chemistry: 'LFP', state_of_health: { soh_pct: 97 } }, { state_of_health: 'legitimate-interest' });
    const credential = { '@context': ['https://www.w3.org/ns/credentials/v2'], type: ['VerifiableCredential'], issuer: 'did:web:x', credentialSubject: { id: 'urn:x', characteristics: committed } };
    const texts = disclosures.map((disclosure) => disclosure.disclosure);
    const full = signVcSdJwt(credential, texts, key.signer, kid);
    const publicView = signVcSdJwt(credential, [], key.signer, kid);
    expect(full).toBe(`${publicView}${texts[0]}~`);
    expect(publicView.endsWith('~')).toBe(true);

    const [jws, presented] = full.split('~') as [string, string];
    const { payload, protectedHeader } = await jose.compactVerify(jws, await jose.importJWK({ ...key.jwk }, 'EdDSA'));
    expect(protectedHeader).toEqual({ alg: 'EdDSA', typ: 'vc+sd-jwt', cty: 'vc', kid });
    const signed = JSON.parse(new TextDecoder().decode(payload));
    expect(signed._sd_alg).toBe('sha-256');
    expect(signed.credentialSubject.characteristics._sd).toEqual([independentDigest(presented)]);

    const byFragment = resolverOf(key);
    const resolve = (header: JwsHeader) => byFragment({ ...header, kid: String(header.kid).split('#')[1] });
    expect(verifyVcSdJwt(full, resolve).credential.credentialSubject).toEqual({ id: 'urn:x', characteristics: { chemistry: 'LFP', state_of_health: { soh_pct: 97 } } });
    expect(verifyVcSdJwt(publicView, resolve).credential.credentialSubject).toEqual({ id: 'urn:x', characteristics: { chemistry: 'LFP' } });
    expect(() => verifyVcSdJwt(`${publicView}${discloseMember('state_of_health', { soh_pct: 100 }).disclosure}~`, resolve)).toThrow(/_sd/);
    expect(envelope(full).id).toBe(`data:application/vc+sd-jwt,${full}`);
  });
});
