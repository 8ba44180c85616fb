/** The master list end to end: witness sets, cosigned entries, live verdicts on every read. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../support/database.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { cosign, newKey, type Key } from './support.js';

let platform: TestStack;
let witnesses: Key[];
let origin: string;

const post = (path: string, body: unknown) => platform.rest('trust', path, { body, as: 'admin' });
const masterList = async () => (await platform.rest('trust', '/master-list')).body;
const entry = (id: string) => ({ id, body: { jurisdiction: 'DE', root: id, keys: [`${id}-key`] } });

beforeAll(async () => {
  platform = await startTestStack();
  witnesses = await Promise.all(Array.from({ length: 5 }, () => newKey()));
  origin = (await masterList()).origin;
});
afterAll(() => platform?.stop());

describe('witness set', () => {
  it('starts empty and is replaced by a valid {m, keys}', async () => {
    expect(await masterList()).toMatchObject({ shape: 'none', m: null, k: 0, witnesses: [], entries: [] });
    expect(origin).toMatch(/^[\x21-\x7e]+$/);
    const replaced = await post('/master-list/witnesses', { m: 3, keys: witnesses.map((witness) => witness.jwk) });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ m: 3, keys: witnesses.map((witness) => witness.jwk) });
    expect(await masterList()).toMatchObject({ shape: '3-of-5', m: 3, k: 5, witnesses: witnesses.map((witness) => witness.jwk) });
  });

  it.each([
    ['m = 0', () => ({ m: 0, keys: witnesses.map((witness) => witness.jwk) })],
    ['m > K', () => ({ m: 6, keys: witnesses.map((witness) => witness.jwk) })],
    ['a repeated key', () => ({ m: 2, keys: [witnesses[0]!.jwk, witnesses[1]!.jwk, witnesses[0]!.jwk] })],
    ['no keys', () => ({ m: 1, keys: [] })],
    ['a key with private material', () => ({ m: 1, keys: [{ ...witnesses[0]!.jwk, d: 'AAAA' }] })],
    ['a key that is not Ed25519', () => ({ m: 1, keys: [{ kty: 'RSA', n: 'AQAB', e: 'AQAB' }] })],
  ])('refuses %s with 422 and keeps the set', async (_name, body) => {
    const before = await masterList();
    const response = await post('/master-list/witnesses', body());
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('INVALID_WITNESS_SET');
    expect(await masterList()).toEqual(before);
  });

  it('answers an ill-typed m with 400 and no token with 401', async () => {
    expect((await post('/master-list/witnesses', { m: 'three', keys: [] })).status).toBe(400);
    expect((await platform.rest('trust', '/master-list/witnesses', { body: { m: 1, keys: [witnesses[0]!.jwk] } })).status).toBe(401);
  });
});

describe('entries and their live verdicts', () => {
  it('verifies an entry at once on upsert: three Node-made cosignatures of five make it quorate', async () => {
    const subject = entry('de-root-1');
    const response = await post('/master-list/entries', { ...subject, cosignatures: witnesses.slice(0, 3).map((witness) => cosign(witness, origin, subject)) });
    // A new entry is a creation: 201, Location the master list; replacing it is 200.
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`${platform.base('trust')}/master-list`);
    expect(response.body.verdict).toMatchObject({ valid: 3, required: 3, quorate: true });
    expect(response.body.verdict.reasons.map((reason: { outcome: string }) => reason.outcome)).toEqual(['VALID', 'VALID', 'VALID']);
    expect(response.body.body).toEqual(subject.body);
  });

  it('counts only valid cosignatures from distinct witnesses of the current set, saying why', async () => {
    const subject = entry('de-root-2');
    const stranger = await newKey();
    const tampered = cosign(witnesses[1]!, origin, { ...subject, body: { ...subject.body, root: 'other' } });
    const elsewhere = cosign(witnesses[2]!, 'staging.example/master-list', subject);
    const cosignatures = [cosign(witnesses[0]!, origin, subject), cosign(witnesses[0]!, origin, subject, 1), cosign(stranger, origin, subject), tampered, elsewhere];
    const response = await post('/master-list/entries', { ...subject, cosignatures });
    expect(response.body.verdict).toMatchObject({ valid: 1, required: 3, quorate: false });
    expect(response.body.verdict.reasons.map((reason: { outcome: string }) => reason.outcome)).toEqual(['VALID', 'DUPLICATE', 'UNKNOWN_WITNESS', 'BAD_SIGNATURE', 'BAD_SIGNATURE']);
    expect(response.body.verdict.explanation).toContain('not quorate');

    // Upserting again with more cosignatures re-verifies it.
    const more = await post('/master-list/entries', { ...subject, cosignatures: [...cosignatures, ...witnesses.slice(3).map((witness) => cosign(witness, origin, subject))] });
    expect(more.status).toBe(200);
    expect(more.headers.get('location')).toBeNull();
    expect(more.body.verdict).toMatchObject({ valid: 3, quorate: true });
  });

  it('recomputes every verdict on the next read when the witness set is replaced', async () => {
    const before = await masterList();
    expect(before.entries.map((item: any) => item.verdict.quorate)).toEqual([true, true]);
    // Without witnesses 0 and 1: entry 1 keeps one valid cosignature, entry 2 keeps witnesses 3 and 4.
    expect((await post('/master-list/witnesses', { m: 2, keys: witnesses.slice(2).map((witness) => witness.jwk) })).status).toBe(200);
    const after = await masterList();
    expect(after.shape).toBe('2-of-3');
    expect(after.entries.map((item: any) => [item.id, item.verdict.valid, item.verdict.quorate])).toEqual([
      ['de-root-1', 1, false],
      ['de-root-2', 2, true],
    ]);
    expect(after.entries[0].verdict.reasons.map((reason: { outcome: string }) => reason.outcome)).toEqual(['UNKNOWN_WITNESS', 'UNKNOWN_WITNESS', 'VALID']);
    await post('/master-list/witnesses', { m: 3, keys: witnesses.map((witness) => witness.jwk) });
  });

  it('re-verifies on every read: an entry body altered in the database loses its cosignatures', async () => {
    await sql(platform.databaseUrl, `UPDATE trust.master_list_entry SET body = jsonb_set(body, '{root}', '"forged"') WHERE id = 'de-root-1'`);
    const tampered = (await masterList()).entries.find((item: any) => item.id === 'de-root-1');
    expect(tampered.verdict).toMatchObject({ valid: 0, quorate: false });
    expect(tampered.verdict.reasons.map((reason: { outcome: string }) => reason.outcome)).toEqual(['BAD_SIGNATURE', 'BAD_SIGNATURE', 'BAD_SIGNATURE']);
  });

  it.each([
    ['an id with a space', { id: 'de root', body: {} }, 422],
    ['a cosignature without time', { id: 'x', body: {}, cosignatures: [{ kid: 'k', signature: 's' }] }, 422],
    ['a time in milliseconds as text', { id: 'x', body: {}, cosignatures: [{ kid: 'k', time: '1700000000', signature: 's' }] }, 422],
    ['a body that is not an object', { id: 'x', body: [1] }, 422],
    ['a body that is text', { id: 'x', body: 'text' }, 422],
    ['witness keys that are not objects', { id: 'x', body: {}, cosignatures: [7] }, 422],
    ['no body', { id: 'x' }, 400],
    ['text with U+0000, which PostgreSQL cannot store', { id: 'x', body: { note: 'a\u0000b' } }, 422],
    ['a lone surrogate', { id: 'x', body: { note: '\ud800' } }, 422],
  ])('refuses %s, storing nothing', async (_name, body, status) => {
    const before = await masterList();
    const response = await post('/master-list/entries', body);
    expect(response.status).toBe(status);
    expect(await masterList()).toEqual(before);
  });

  it('takes concurrent upserts of one new entry without a conflict, keeping one of them whole', async () => {
    const subject = entry('de-root-3');
    const bodies = witnesses.map((witness) => ({ ...subject, cosignatures: [cosign(witness, origin, subject)] }));
    const responses = await Promise.all(bodies.map((body) => post('/master-list/entries', body)));
    // Exactly one of them created it.
    expect(responses.map((response) => response.status).sort()).toEqual([200, 200, 200, 200, 201]);
    const stored = (await masterList()).entries.find((item: any) => item.id === 'de-root-3');
    expect(bodies.map((body) => body.cosignatures)).toContainEqual(stored.cosignatures);
    expect(stored.verdict).toMatchObject({ valid: 1, quorate: false });
  });

  it('keeps its origin across a restart, so the cosignatures made for it stay valid', async () => {
    const before = await masterList();
    await platform.restart();
    const after = await masterList();
    expect(after.origin).toBe(origin);
    expect(after).toEqual(before);
  });

  it('is the same in the federated graph', async () => {
    const result = await platform.graphql('{ trustMasterList { shape entries { id verdict { valid required quorate } } } }');
    expect(result.errors).toBeUndefined();
    expect(result.data.trustMasterList.shape).toBe('3-of-5');
    expect(result.data.trustMasterList.entries).toHaveLength(3);
    expect(result.data.trustMasterList.entries[1]).toEqual({ id: 'de-root-2', verdict: { valid: 3, required: 3, quorate: true } });
  });
});
