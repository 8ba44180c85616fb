/**
 * Revocations end to end: a real 3-of-5 FROST(Ed25519) ceremony (DKG, RFC 9591 signing) whose
 * aggregate goes through the API, member-key slots made by Node, and the bitemporal query table.
 */
import { createPublicKey, verify as nodeVerify } from 'node:crypto';
import { ed25519_FROST as frost } from '@noble/curves/ed25519.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.js';
import { DAY, fromNow, newKey, revocationStatement, seconds, type Key } from './support.js';

let platform: TestStack;
let members: Key[];
let subjectKey: Key;
let otherKey: Key;

const post = (path: string, body: unknown) => platform.rest('trust', path, { body, as: 'admin' });
const revocations = async (query = '') => {
  const response = await platform.rest('trust', `/revocations${query}`);
  expect(response.status).toBe(200);
  return response.body.revocations as any[];
};

// A 3-of-5 FROST key set made by distributed key generation: no party ever holds the group secret.
const ids = [1, 2, 3, 4, 5].map((n) => frost.Identifier.fromNumber(n));
const dkgRound1 = ids.map((id) => frost.DKG.round1(id, { min: 3, max: 5 }));
const dkgRound2 = ids.map((_, i) =>
  frost.DKG.round2(
    dkgRound1[i]!.secret,
    dkgRound1.filter((_, j) => j !== i).map((round) => round.public),
  ),
);
const participants = ids.map((id, i) =>
  frost.DKG.round3(
    dkgRound1[i]!.secret,
    dkgRound1.filter((_, j) => j !== i).map((round) => round.public),
    ids.flatMap((_, j) => (j === i ? [] : [dkgRound2[j]![id]!])),
  ),
);
const groupKey = participants[0]!.public.commitments[0]!;
const groupJwk = { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(groupKey).toString('base64url') };

/** RFC 9591 signing by the chosen participants: commit, sign shares, verify shares, aggregate. */
function frostSign(chosen: readonly number[], message: Uint8Array): Uint8Array {
  const rounds = chosen.map((index) => ({ index, ...frost.commit(participants[index]!.secret) }));
  const commitments = rounds.map((round) => round.commitments);
  const shares: Record<string, Uint8Array> = {};
  for (const { index, nonces } of rounds) {
    const { secret, public: pub } = participants[index]!;
    shares[ids[index]!] = frost.signShare(secret, pub, nonces, commitments, message);
    expect(frost.verifyShare(pub, commitments, message, ids[index]!, shares[ids[index]!]!)).toBe(true);
  }
  return frost.aggregate(participants[0]!.public, commitments, message, shares);
}

const slot = (member: Key, message: Buffer) => ({ kid: member.jwk.kid, signature: member.sign(message).toString('base64url') });

beforeAll(async () => {
  platform = await startTestStack();
  members = await Promise.all([newKey(), newKey('P-256'), newKey(), newKey(), newKey()]);
  [subjectKey, otherKey] = await Promise.all([newKey(), newKey()]);
  const iat = seconds(new Date(Date.now() - 60 * DAY));
  const nodes = [
    { id: 'council', kind: 'quorum', threshold: 3, keys: members.map((member) => ({ ...member.jwk, iat })), group_key: groupJwk },
    {
      id: 'acme',
      kind: 'issuer',
      keys: [
        { ...subjectKey.jwk, iat },
        { ...otherKey.jwk, iat },
      ],
    },
    { id: 'rogue', kind: 'issuer', keys: [] },
    { id: 'old-issuer', kind: 'issuer', keys: [] },
    { id: 'root', kind: 'root', keys: [] },
  ];
  for (const node of nodes) expect((await post('/nodes', node)).status).toBe(201);
});
afterAll(() => platform?.stop());

/** Times of the three revocations recorded below. */
const T1 = fromNow(-10 * DAY); // R1 effective (retroactive, FROST)
const T_R2 = fromNow(-5 * DAY); // R2 effective (retroactive, slots)
const T_R3 = fromNow(DAY); // R3 effective (declared ahead)
let R1: any;
let R2: any;
let R3: any;

describe('a retroactive revocation attested by a FROST group signature', () => {
  const subject = () => `acme#${subjectKey.jwk.kid}`;

  it('is refused without an attestation (422 MISSING_QUORUM) and nothing is stored', async () => {
    const response = await post('/revocations', { subject: subject(), reason: 'keyCompromise', effective_at: T1 });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('MISSING_QUORUM');
    expect(await revocations()).toEqual([]);
  });

  it('is accepted with the aggregate of 3 of 5 shares, which Node also verifies as a plain Ed25519 signature', async () => {
    const message = revocationStatement(subject(), 'keyCompromise', T1);
    const signature = frostSign([0, 2, 4], message);
    const groupPublicKey = createPublicKey({ format: 'jwk', key: groupJwk });
    expect(nodeVerify(null, message, groupPublicKey, signature)).toBe(true);

    const before = Date.now();
    const response = await post('/revocations', {
      subject: subject(),
      reason: 'keyCompromise',
      effective_at: T1,
      attestation: { quorum: 'council', group_signature: Buffer.from(signature).toString('base64url') },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`${platform.base('trust')}/revocations?subject=${encodeURIComponent(subject())}`);
    R1 = response.body;
    expect(R1).toMatchObject({ subject: subject(), reason: 'keyCompromise', effective_at: T1, retroactive: true });
    // recorded_at is the server's clock, not anything the caller said.
    expect(Date.parse(R1.recorded_at)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(R1.recorded_at)).toBeLessThanOrEqual(Date.now() + 1);
  });

  it.each([
    ['another set of 3 shares over another effective time', () => ({ effective_at: fromNow(-9 * DAY), sign: T1 }), 'BAD_ATTESTATION'],
    ['a signature by a stranger key', () => ({ effective_at: T1, stranger: true }), 'BAD_ATTESTATION'],
    ['a quorum that is not a quorum node', () => ({ effective_at: T1, quorum: 'root' }), 'UNKNOWN_QUORUM'],
  ])('is refused for %s, storing nothing', async (_name, make, code) => {
    const { effective_at, sign = effective_at, stranger = false, quorum = 'council' } = make() as Record<string, any>;
    const message = revocationStatement(`acme#${otherKey.jwk.kid}`, 'keyCompromise', sign);
    const signature = stranger ? (await newKey()).sign(message) : frostSign([1, 2, 3], message);
    const before = await revocations();
    const response = await post('/revocations', {
      subject: `acme#${otherKey.jwk.kid}`,
      reason: 'keyCompromise',
      effective_at,
      attestation: { quorum, group_signature: Buffer.from(signature).toString('base64url') },
    });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe(code);
    expect(await revocations()).toEqual(before);
  });
});

describe('a retroactive revocation attested by member-key slots', () => {
  const message = () => revocationStatement('rogue', 'cACompromise', T_R2);
  const declare = (slots: unknown[]) => post('/revocations', { subject: 'rogue', reason: 'cACompromise', effective_at: T_R2, attestation: { quorum: 'council', slots } });

  it.each([
    ['two slots of a threshold of three', () => [slot(members[0]!, message()), slot(members[1]!, message())], 'MISSING_QUORUM'],
    ['a slot that does not verify', () => [slot(members[0]!, message()), slot(members[1]!, message()), slot(members[2]!, Buffer.from('other'))], 'BAD_ATTESTATION'],
    ['the same member twice', () => [slot(members[0]!, message()), slot(members[0]!, message()), slot(members[2]!, message())], 'BAD_ATTESTATION'],
    ['a key that is not a member', () => [slot(members[0]!, message()), slot(members[1]!, message()), slot(subjectKey, message())], 'BAD_ATTESTATION'],
  ])('is refused with %s, storing nothing', async (_name, slots, code) => {
    const before = await revocations();
    const response = await declare(slots());
    expect(response.status).toBe(422);
    expect(response.body.code).toBe(code);
    expect(await revocations()).toEqual(before);
  });

  it('is accepted with three distinct members, one of them P-256 (ES256 r||s)', async () => {
    const response = await declare([slot(members[1]!, message()), slot(members[3]!, message()), slot(members[4]!, message())]);
    expect(response.status).toBe(201);
    R2 = response.body;
    expect(R2).toMatchObject({ subject: 'rogue', retroactive: true, attestation: { quorum: 'council' } });
  });
});

describe('a revocation declared ahead of time', () => {
  it('needs no attestation and is not retroactive', async () => {
    const response = await post('/revocations', { subject: 'old-issuer', reason: 'cessationOfOperation', effective_at: T_R3 });
    expect(response.status).toBe(201);
    R3 = response.body;
    expect(R3).toMatchObject({ retroactive: false, effective_at: T_R3 });
    expect(R3.attestation).toBeUndefined();
  });

  it.each([
    ['an unknown subject', { subject: 'nobody', reason: 'superseded' }, 422, 'UNKNOWN_SUBJECT'],
    ['an unknown key of a known node', { subject: `acme#${'A'.repeat(43)}`, reason: 'superseded' }, 422, 'UNKNOWN_SUBJECT'],
    ['an unknown reason', { subject: 'acme', reason: 'boredom' }, 422, 'INVALID_REVOCATION'],
    ['an effective time that is no date', { subject: 'acme', reason: 'superseded', effective_at: 'tomorrow' }, 422, 'INVALID_REVOCATION'],
    ['an unknown member', { subject: 'acme', reason: 'superseded', colour: 'red' }, 400, 'INVALID_REQUEST'],
    ['an attestation that is text', { subject: 'acme', reason: 'superseded', attestation: 'trust me' }, 422, 'BAD_ATTESTATION'],
  ])('refuses %s, storing nothing', async (_name, body, status, code) => {
    const before = await revocations();
    const response = await post('/revocations', body);
    expect(response.status).toBe(status);
    expect(response.body.code).toBe(code);
    expect(await revocations()).toEqual(before);
  });

  it("needs the platform admin's token", async () => {
    expect((await platform.rest('trust', '/revocations', { body: { subject: 'acme', reason: 'superseded' } })).status).toBe(401);
    expect((await platform.rest('trust', '/revocations', { body: { subject: 'acme', reason: 'superseded' }, as: 'writer' })).status).toBe(403);
  });
});

describe('GET /revocations, bitemporal', () => {
  const shift = (instant: string, millis: number) => new Date(Date.parse(instant) + millis).toISOString();
  const q = (params: Record<string, string>) => `?${new URLSearchParams(params).toString()}`;

  // [case, query, subjects expected] — R1 effective T1 recorded T2; R2 effective T_R2 recorded after T2; R3 effective tomorrow.
  const table: [string, () => Record<string, string>, () => string[]][] = [
    ['no filter: everything recorded', () => ({}), () => [R1.subject, R2.subject, R3.subject]],
    ['before anything took effect, as known then', () => ({ at: shift(T1, -DAY), known_by: shift(T1, -DAY) }), () => []],
    ['between T1 and T2, as known at that same instant: not revoked', () => ({ at: shift(T1, DAY), known_by: shift(T1, DAY) }), () => []],
    ['between T1 and T2, as known after T2: revoked', () => ({ at: shift(T1, DAY), known_by: shift(R1.recorded_at, 1) }), () => [R1.subject]],
    ['between T1 and T2, as known exactly at T2: revoked (recorded_at <= known_by)', () => ({ at: shift(T1, DAY), known_by: R1.recorded_at }), () => [R1.subject]],
    ['between T1 and T2, as known just before T2: not revoked', () => ({ at: shift(T1, DAY), known_by: shift(R1.recorded_at, -1) }), () => []],
    ['now, as known now: R3 is not effective yet', () => ({ at: new Date().toISOString() }), () => [R1.subject, R2.subject]],
    ['after R3 takes effect', () => ({ at: shift(T_R3, 1) }), () => [R1.subject, R2.subject, R3.subject]],
    ['at exactly T1 (effective_at <= at)', () => ({ at: T1 }), () => [R1.subject]],
    ['known by T2 only, at any time', () => ({ known_by: R1.recorded_at }), () => [R1.subject]],
    ['window around T1', () => ({ window: `${shift(T1, -DAY)}/${shift(T1, DAY)}` }), () => [R1.subject]],
    ['window open at the start, ending at T_R2 (exclusive)', () => ({ window: `../${T_R2}` }), () => [R1.subject]],
    ['window from T_R2, open end', () => ({ window: `${T_R2}/` }), () => [R2.subject, R3.subject]],
    ['subject: the node matches its key revocation', () => ({ subject: 'acme' }), () => [R1.subject]],
    ['subject: that key', () => ({ subject: R1.subject }), () => [R1.subject]],
    ['subject: another key of the node', () => ({ subject: `acme#${otherKey.jwk.kid}` }), () => []],
    ['subject: a key of a revoked node matches the node revocation', () => ({ subject: `rogue#${subjectKey.jwk.kid}` }), () => [R2.subject]],
    ['retroactive only', () => ({ retroactive: 'true' }), () => [R1.subject, R2.subject]],
    ['not retroactive', () => ({ retroactive: 'false' }), () => [R3.subject]],
    ['combined: retroactive, effective now, known before R2 was recorded', () => ({ retroactive: 'true', at: new Date().toISOString(), known_by: shift(R2.recorded_at, -1) }), () => [R1.subject]],
  ];

  it.each(table.map(([name, query, expected]) => [name, query, expected] as const))('%s', async (_name, query, expected) => {
    expect((await revocations(q(query()))).map((revocation) => revocation.subject)).toEqual(expected());
  });

  it('returns the records verbatim, attestations included', async () => {
    expect(await revocations()).toEqual([R1, R2, R3]);
  });

  it.each([
    ['at', 'yesterday'],
    ['known_by', '2026-02-30T00:00:00Z'],
    ['window', '2026-01-02T00:00:00Z/2026-01-01T00:00:00Z'],
    ['retroactive', 'maybe'],
    ['subject', 'a b'],
    ['colour', 'red'],
  ])('answers a bad %s with 400', async (name, value) => {
    const response = await platform.rest('trust', `/revocations${q({ [name]: value })}`);
    expect(response.status).toBe(400);
    expect(response.body.code).toMatch(/^INVALID_(QUERY|REQUEST)$/);
  });

  it('gives a key its standing as known at an instant, in the federated graph', async () => {
    const query = 'query($kid: String!, $at: DateTimeISO!, $knownBy: String) { trustKeyStanding(kid: $kid, at: $at, knownBy: $knownBy) }';
    const at = shift(T1, DAY);
    const asKnownThen = await platform.graphql(query, { kid: subjectKey.jwk.kid, at, knownBy: at });
    expect(asKnownThen.errors).toBeUndefined();
    // Not revoked as known then; and with no root delegating to acme, trust cannot vouch for it.
    expect(asKnownThen.data.trustKeyStanding.standing).toBe('unknown');
    const asKnownNow = await platform.graphql(query, { kid: subjectKey.jwk.kid, at });
    expect(asKnownNow.data.trustKeyStanding).toMatchObject({ standing: 'revoked', node_id: 'acme' });
    const rows = await platform.graphql('{ trustRevocations(retroactive: true) { subject recordedAt attestation } }');
    expect(rows.data.trustRevocations.map((row: { subject: string }) => row.subject)).toEqual([R1.subject, R2.subject]);
  });
});
