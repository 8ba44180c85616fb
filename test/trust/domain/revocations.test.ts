import { createPublicKey, verify as nodeVerify } from 'node:crypto';
import { ed25519_FROST } from '@noble/curves/ed25519.js';
import { describe, expect, it } from 'vitest';
import { encodeBase64Url, ed25519PublicJwk } from '../../../lib/crypto/index.js';
import {
  declareRevocation,
  parseRevocationQuery,
  revocationMatches,
  revocationMessage,
  revocationParties,
  upsertNode,
  type Revocation,
  type RevocationContext,
  type RevocationStatement,
  type TrustNode,
} from '../../../subgraphs/trust/domain/index.js';
import { ed25519Key, p256Key, t } from './fixtures.js';

const NOW = t('2025-03-01T12:00:00Z');
const iat = Date.UTC(2024, 0, 1) / 1000;

// A real 3-of-5 FROST(Ed25519, SHA-512) key set from a trusted dealer (RFC 9591 appendix C).
const frost = ed25519_FROST;
const participants = [1, 2, 3, 4, 5].map((n) => frost.Identifier.fromNumber(n));
const deal = frost.trustedDealer({ min: 3, max: 5 }, participants);
const groupKey = deal.public.commitments[0]!;

function frostSign(signers: readonly string[], message: Uint8Array): Uint8Array {
  const rounds = signers.map((id) => ({ id, ...frost.commit(deal.secretShares[id]!) }));
  const commitments = rounds.map((round) => round.commitments);
  const shares: Record<string, Uint8Array> = {};
  for (const round of rounds) {
    shares[round.id] = frost.signShare(deal.secretShares[round.id]!, deal.public, round.nonces, commitments, message);
    expect(frost.verifyShare(deal.public, commitments, message, round.id, shares[round.id]!)).toBe(true);
  }
  return frost.aggregate(deal.public, commitments, message, shares);
}

// Member keys made by Node's crypto, one of them P-256 (its slot is an ES256 r||s signature).
const members = [ed25519Key(), ed25519Key(), p256Key(), ed25519Key(), ed25519Key()];

function build(id: string, input: Record<string, unknown>): TrustNode {
  const result = upsertNode(undefined, { id, ...input });
  if (!result.ok) throw new Error(result.message);
  return result.value;
}

const subjectKey = ed25519Key();
const nodes = new Map<string, TrustNode>([
  ['acme', build('acme', { kind: 'issuer', keys: [{ ...subjectKey.jwk, iat }] })],
  ['council', build('council', { kind: 'quorum', threshold: 3, keys: members.map((member) => ({ ...member.jwk, iat })), group_key: ed25519PublicJwk(groupKey) })],
  ['slots-only', build('slots-only', { kind: 'quorum', threshold: 3, keys: members.map((member) => ({ ...member.jwk, iat })) })],
  ['root', build('root', { kind: 'root', keys: [{ ...ed25519Key().jwk, iat }] })],
]);
const context: RevocationContext = { now: NOW, node: (id) => nodes.get(id) };

const statement: RevocationStatement = { subject: `acme#${subjectKey.jwk.kid}`, reason: 'keyCompromise', effective_at: '2025-02-01T00:00:00+01:00' };
const message = revocationMessage(statement);
const slot = (index: number, bytes = message) => ({ kid: members[index]!.jwk.kid, signature: encodeBase64Url(members[index]!.sign(bytes)) });

describe('the canonical form a quorum attests', () => {
  it('is the JCS of effective_at, reason and subject exactly as declared', () => {
    expect(new TextDecoder().decode(message)).toBe(`{"effective_at":"2025-02-01T00:00:00+01:00","reason":"keyCompromise","subject":"acme#${subjectKey.jwk.kid}"}`);
  });
});

describe('retroactive revocation by FROST group signature', () => {
  const groupSignature = frostSign([participants[0]!, participants[2]!, participants[4]!], message);

  it('is an ordinary Ed25519 signature under the group key, as Node verifies it', () => {
    const publicKey = createPublicKey({ format: 'jwk', key: { kty: 'OKP', crv: 'Ed25519', x: encodeBase64Url(groupKey) } });
    expect(nodeVerify(null, message, publicKey, groupSignature)).toBe(true);
  });

  it('is accepted and recorded as retroactive', () => {
    const declared = declareRevocation({ ...statement, attestation: { quorum: 'council', group_signature: encodeBase64Url(groupSignature) } }, context);
    expect(declared).toEqual({
      ok: true,
      value: {
        ...statement,
        recorded_at: '2025-03-01T12:00:00.000Z',
        retroactive: true,
        attestation: { quorum: 'council', group_signature: encodeBase64Url(groupSignature) },
      },
    });
  });

  it('is refused over another statement, without a pinned group key, or from a non-quorum', () => {
    const other = { ...statement, reason: 'superseded' };
    expect(declareRevocation({ ...other, attestation: { quorum: 'council', group_signature: encodeBase64Url(groupSignature) } }, context)).toMatchObject({
      ok: false,
      code: 'BAD_ATTESTATION',
    });
    expect(declareRevocation({ ...statement, attestation: { quorum: 'slots-only', group_signature: encodeBase64Url(groupSignature) } }, context)).toMatchObject({
      ok: false,
      code: 'BAD_ATTESTATION',
    });
    for (const quorum of ['root', 'nobody']) {
      expect(declareRevocation({ ...statement, attestation: { quorum, group_signature: encodeBase64Url(groupSignature) } }, context)).toMatchObject({
        ok: false,
        code: 'UNKNOWN_QUORUM',
      });
    }
  });

  it('cannot be made by two of the five shares', () => {
    expect(() => frostSign([participants[0]!, participants[1]!], message)).toThrow();
    const declareSignedBy = (ids: string[]) => {
      const secret = frost.combineSecret(
        ids.map((id) => deal.secretShares[id]!),
        { min: ids.length, max: 5 },
      );
      const signature = encodeBase64Url(frost.sign(message, secret));
      return declareRevocation({ ...statement, attestation: { quorum: 'council', group_signature: signature } }, context);
    };
    // Three shares interpolate the group secret; two interpolate some other key.
    expect(declareSignedBy([participants[1]!, participants[3]!, participants[4]!]).ok).toBe(true);
    expect(declareSignedBy([participants[1]!, participants[3]!])).toMatchObject({ ok: false, code: 'BAD_ATTESTATION' });
  });
});

describe('retroactive revocation by signature slots', () => {
  const declare = (slots: unknown[], quorum = 'council') => declareRevocation({ ...statement, attestation: { quorum, slots } }, context);

  it('is accepted with three distinct member keys, one of them ES256', () => {
    expect(declare([slot(0), slot(2), slot(4)])).toMatchObject({ ok: true, value: { retroactive: true } });
    expect(declare([slot(1), slot(2), slot(3), slot(4)], 'slots-only').ok).toBe(true);
  });

  it('is refused with MISSING_QUORUM at two of five', () => {
    expect(declare([slot(0), slot(1)])).toMatchObject({ ok: false, code: 'MISSING_QUORUM' });
    expect(declare([])).toMatchObject({ ok: false, code: 'MISSING_QUORUM' });
  });

  it('is refused with BAD_ATTESTATION for a repeated, foreign or bad slot', () => {
    expect(declare([slot(0), slot(0), slot(1)])).toMatchObject({ ok: false, code: 'BAD_ATTESTATION' });
    const outsider = ed25519Key();
    expect(declare([slot(0), slot(1), { kid: outsider.jwk.kid, signature: encodeBase64Url(outsider.sign(message)) }])).toMatchObject({
      ok: false,
      code: 'BAD_ATTESTATION',
    });
    expect(declare([slot(0), slot(1), slot(2, new TextEncoder().encode('something else'))])).toMatchObject({ ok: false, code: 'BAD_ATTESTATION' });
    expect(declare([slot(0), slot(1), { kid: members[2]!.jwk.kid, signature: 'not base64url!' }])).toMatchObject({ ok: false, code: 'BAD_ATTESTATION' });
    // A valid slot with a member nobody signed would be stored unverified.
    expect(declare([slot(0), slot(1), { ...slot(2), note: 'approved' }])).toMatchObject({ ok: false, code: 'BAD_ATTESTATION' });
  });

  it('does not count a member key revoked by the time of recording', () => {
    const revokedMember: Revocation = {
      subject: `council#${members[4]!.jwk.kid}`,
      reason: 'keyCompromise',
      effective_at: '2025-03-01T00:00:00Z',
      recorded_at: '2025-03-01T00:00:00.000Z',
      retroactive: false,
    };
    expect(declareRevocation({ ...statement, attestation: { quorum: 'council', slots: [slot(0), slot(2), slot(4)] } }, { ...context, revocations: [revokedMember] })).toMatchObject({
      ok: false,
      code: 'BAD_ATTESTATION',
    });
  });
});

describe('revocationParties', () => {
  it('names the revoked node and the attesting quorum, once each, and nothing of what is not a node id', () => {
    expect(revocationParties({ subject: 'issuer-1', reason: 'keyCompromise' })).toEqual(['issuer-1']);
    expect(revocationParties({ subject: `issuer-1#${'A'.repeat(43)}`, attestation: { quorum: 'quorum-1', slots: [] } })).toEqual(['issuer-1', 'quorum-1']);
    expect(revocationParties({ subject: 'quorum-1', attestation: { quorum: 'quorum-1' } })).toEqual(['quorum-1']);
    expect(revocationParties({ subject: 'bad id', attestation: null })).toEqual([]);
    expect(revocationParties('issuer-1')).toEqual([]);
  });
});

describe('declareRevocation', () => {
  it('needs an attestation only when retroactive', () => {
    expect(declareRevocation(statement, context)).toMatchObject({ ok: false, code: 'MISSING_QUORUM' });
    expect(declareRevocation({ subject: 'acme', reason: 'cessationOfOperation' }, context)).toEqual({
      ok: true,
      value: { subject: 'acme', reason: 'cessationOfOperation', effective_at: '2025-03-01T12:00:00.000Z', recorded_at: '2025-03-01T12:00:00.000Z', retroactive: false },
    });
    expect(declareRevocation({ subject: 'acme', reason: 'superseded', effective_at: '2025-04-01T00:00:00Z' }, context)).toMatchObject({ ok: true, value: { retroactive: false } });
  });

  it.each([
    [{ subject: 'acme', reason: 'certificateHold' }, 'INVALID_REVOCATION'],
    [{ subject: 'acme', reason: 'superseded', effective_at: 'now' }, 'INVALID_REVOCATION'],
    [{ subject: 'acme#short', reason: 'superseded' }, 'INVALID_REVOCATION'],
    [{ subject: 'acme', reason: 'superseded', colour: 'red' }, 'INVALID_REVOCATION'],
    [{ subject: 'nobody', reason: 'superseded' }, 'UNKNOWN_SUBJECT'],
    [{ subject: `acme#${members[0]!.jwk.kid}`, reason: 'superseded' }, 'UNKNOWN_SUBJECT'],
  ])('refuses %j with %s', (input, code) => {
    expect(declareRevocation(input, context)).toMatchObject({ ok: false, code });
  });
});

describe('bitemporal queries', () => {
  const T0 = '2025-01-01T00:00:00Z';
  const T1 = '2025-02-01T00:00:00Z'; // effective
  const TM = '2025-02-15T00:00:00Z';
  const T2 = '2025-03-01T00:00:00Z'; // recorded
  const T3 = '2025-04-01T00:00:00Z';
  const revocation: Revocation = { subject: 'acme', reason: 'privilegeWithdrawn', effective_at: T1, recorded_at: T2, retroactive: true };

  it.each<[Record<string, string>, boolean]>([
    [{}, true],
    [{ at: T0 }, false],
    [{ at: T1 }, true],
    [{ at: TM }, true],
    [{ at: TM, known_by: TM }, false], // in force then, but not yet known then
    [{ at: TM, known_by: T2 }, true],
    [{ at: TM, known_by: T3 }, true],
    [{ at: T0, known_by: T3 }, false],
    [{ known_by: TM }, false],
    [{ known_by: T2 }, true],
    [{ at: T3, known_by: TM }, false],
    [{ window: `${T1}/${T2}` }, true],
    [{ window: `${T0}/${T1}` }, false], // half-open: ends where the revocation takes effect
    [{ window: `${T1}/..` }, true],
    [{ window: `/${T1}` }, false],
    [{ window: `${TM}/` }, false],
    [{ retroactive: 'true' }, true],
    [{ retroactive: 'false' }, false],
    [{ subject: 'acme' }, true],
    [{ subject: `acme#${subjectKey.jwk.kid}` }, true], // a node's revocation revokes its keys
    [{ subject: 'other' }, false],
    [{ at: TM, known_by: T3, retroactive: 'true', subject: 'acme', window: `${T0}/${T3}` }, true],
  ])('%j matches: %s', (params, expected) => {
    const query = parseRevocationQuery(params);
    if (!query.ok) throw new Error(query.message);
    expect(revocationMatches(revocation, query.value)).toBe(expected);
  });

  it('matches a key revocation for its node and for that key only', () => {
    const keyRevocation: Revocation = { ...revocation, subject: `acme#${subjectKey.jwk.kid}` };
    const matches = (subject: string) => revocationMatches(keyRevocation, (parseRevocationQuery({ subject }) as { value: object }).value);
    expect(matches('acme')).toBe(true);
    expect(matches(`acme#${subjectKey.jwk.kid}`)).toBe(true);
    expect(matches(`acme#${members[0]!.jwk.kid}`)).toBe(false);
  });

  it.each([
    { at: 'yesterday' },
    { known_by: '2025-02-30T00:00:00Z' },
    { at: '' },
    { window: `${T2}/${T1}` },
    { window: 'P1D' },
    { retroactive: 'yes' },
    { subject: 'acme#not-a-thumbprint' },
    { subject: '' },
  ])('refuses %j with INVALID_QUERY', (params) => {
    expect(parseRevocationQuery(params)).toMatchObject({ ok: false, code: 'INVALID_QUERY' });
  });
});
