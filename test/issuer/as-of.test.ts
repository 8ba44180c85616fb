/**
 * A passport as it stood at an instant (EN 18222 ReadDPPVersionByIdAndDate), through the REST
 * facade (`GET /passports/{id}?at=`) and the graph (`passport(id:, at:)`): status from the log, the
 * head signed then (checked with jose against the keyring), the events up to then, and the head
 * then as a prefix of today's signed log, checked by recomputing its root from today's events and
 * with the consistency proof the issuer gives. And what a stranger gets wrong: an instant before
 * the passport, in the future, malformed, with an offset, exactly at an event.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize } from '../../lib/crypto/jcs.js';
import { hashFromHex, verifyConsistency } from '../../lib/formats/issuer/merkle.js';
import { sql } from '../support/database.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { appendEvent, createModel, createPassport, keyring, PAYLOADS, verifySignedJson } from './support.js';
import { referenceTreeHash as mth } from '../support/merkle-reference.js';

let platform: TestStack;
const MODEL = 'issuer-as-of-battery';

/** The passport's life: created, activated, observed, suspended, reinstated, then a pack minted. */
let id: string;
let created: Awaited<ReturnType<typeof createPassport>>;
const appended: { event: { recorded_at: string; seq: number }; log_head: Record<string, unknown>; status: string }[] = [];
let today: { log_head: { size: number; root_hash: string }; log: Record<string, unknown>[]; status: string };

beforeAll(async () => {
  platform = await startTestStack();
  await createModel(platform, MODEL);
  created = await createPassport(platform, MODEL, { capability_class: 'verify-offline' });
  id = created.passport_id;
  for (const type of ['activated', 'ObjectEvent', 'suspended', 'reinstated']) {
    // Apart by a few milliseconds, so that each event has an instant of its own.
    await sleep(5);
    const response = await appendEvent(platform, id, type, PAYLOADS[type]!());
    expect(response.status, response.text).toBe(201);
    appended.push(response.body);
  }
  await sleep(5);
  expect((await platform.rest('issuer', `/passports/${id}/pack`, { method: 'POST', as: 'writer' })).status).toBe(201);
  today = (await platform.rest('issuer', `/passports/${id}?include_events=true`)).body;
}, 60_000);
afterAll(() => platform?.stop());

const readAt = (at: string, extra = '') => platform.rest('issuer', `/passports/${id}?at=${encodeURIComponent(at)}${extra}`);
const shifted = (instant: string, ms: number) => new Date(Date.parse(instant) + ms).toISOString();

describe('GET /passports/{id}?at=', () => {
  it('answers each instant of the passport’s life with the status, events and the head signed then', async () => {
    const keys = await keyring(platform);
    const statuses = ['active', 'active', 'suspended', 'active'];
    for (const [i, { event, log_head }] of appended.entries()) {
      // Exactly at the event's timestamp: the event is included.
      const response = await readAt(event.recorded_at, '&include_events=true&include_proof=true');
      expect(response.status, response.text).toBe(200);
      const then = response.body;
      expect(then).toMatchObject({ passport_id: id, status: statuses[i], core: { status: statuses[i] }, log_size: i + 1, latest_pack: null });
      // The checkpoint the issuer signed at that append, verbatim, and it verifies with jose.
      expect(then.log_head).toEqual(log_head);
      expect((await verifySignedJson(then.log_head, keys)).protectedHeader?.alg).toBe('Ed25519');
      expect(then.log).toEqual(today.log.slice(0, i + 1));
      expect(then.as_of).toMatchObject({ at: event.recorded_at, head_signed: true, last_event_at: event.recorded_at, current_log_head: today.log_head });

      // A prefix of today's log: its root recomputed from today's first events, and the proof verifies.
      expect(then.log_head.root_hash).toBe(mth(today.log.slice(0, i + 1).map((record) => canonicalize(record))));
      const proof = (then.as_of.consistency_proof as string[]).map((hex) => hashFromHex(hex)!);
      expect(verifyConsistency(i + 1, today.log_head.size, proof, hashFromHex(then.log_head.root_hash)!, hashFromHex(today.log_head.root_hash)!)).toBe(true);

      // A millisecond before it, the state before it.
      const before = await readAt(shifted(event.recorded_at, -1));
      expect(before.body).toMatchObject({ status: i === 0 ? 'draft' : statuses[i - 1], log_size: i });
      expect(before.body.as_of).not.toHaveProperty('consistency_proof');
    }
    // The current row says active; the log says suspended then.
    expect(today.status).toBe('active');
  });

  it('gives the head of the empty log signed at creation from the creation instant until the first event', async () => {
    const response = await readAt(created.core.created_at, '&include_events=true');
    expect(response.status, response.text).toBe(200);
    expect(response.body).toMatchObject({ status: 'draft', log_size: 0, log: [], log_head: created.log_head, as_of: { head_signed: true, last_event_at: null } });
  });

  it('answers an instant before the passport existed with a 404 problem saying so', async () => {
    const response = await readAt(shifted(created.core.created_at, -1));
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({ status: 404, code: 'NOT_YET_ISSUED', created_at: created.core.created_at });
    expect(response.body.detail).toMatch(/did not exist yet/);
    // An unknown passport stays the plain 404.
    expect((await platform.rest('issuer', '/passports/no-such-passport?at=2026-01-01T00:00:00Z')).body).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });

  it('answers a future instant with the state of now, the pack included', async () => {
    const response = await readAt('2999-12-31T23:59:59Z', '&include_events=true');
    expect(response.status).toBe(200);
    const { as_of, ...rest } = response.body;
    expect(rest).toEqual(today);
    expect(rest.latest_pack).toMatch(/^DPP1:/);
    expect(as_of).toEqual({ at: '2999-12-31T23:59:59.000Z', head_signed: true, last_event_at: appended.at(-1)!.event.recorded_at, current_log_head: today.log_head });
  });

  it('reads an instant written with an offset as the same instant', async () => {
    const suspendedAt = appended[2]!.event.recorded_at;
    const plusTwo = new Date(Date.parse(suspendedAt) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    const withOffset = await readAt(plusTwo);
    expect(withOffset.status, withOffset.text).toBe(200);
    expect(withOffset.body).toEqual((await readAt(suspendedAt)).body);
    expect(withOffset.body.status).toBe('suspended');
  });

  it('refuses a malformed instant, and a proof without one, with 400 problems', async () => {
    for (const at of ['yesterday', '2026-02-30T00:00:00Z', '2026-01-01', '2026-01-01T12:00:00']) {
      const response = await readAt(at);
      expect(response.status, at).toBe(400);
      expect(response.body, at).toMatchObject({ code: 'INVALID_QUERY' });
    }
    // An unencoded + reads as a space in a query string: the problem says how to write it.
    const plusAsSpace = await platform.rest('issuer', `/passports/${id}?at=2026-01-01T12:00:00+02:00`);
    expect(plusAsSpace.status).toBe(400);
    expect(plusAsSpace.body.detail).toMatch(/%2B/);
    const proofAlone = await platform.rest('issuer', `/passports/${id}?include_proof=true`);
    expect(proofAlone.status).toBe(400);
    expect(proofAlone.body).toMatchObject({ code: 'INVALID_QUERY' });
  });

  it('gives an unsigned head and a proof to today’s signed head for an event appended before heads were kept', async () => {
    const other = await createPassport(platform, MODEL);
    const first = await appendEvent(platform, other.passport_id, 'activated', PAYLOADS.activated!());
    await sleep(5);
    expect((await appendEvent(platform, other.passport_id, 'ObjectEvent', PAYLOADS.ObjectEvent!())).status).toBe(201);
    // As a version before this one left it: no head with the event.
    await sql(platform.databaseUrl, 'UPDATE "issuer".passport_event SET log_head = NULL WHERE passport_id = $1 AND seq = 0', [other.passport_id]);
    const response = await platform.rest('issuer', `/passports/${other.passport_id}?at=${encodeURIComponent(first.body.event.recorded_at)}&include_proof=true`);
    expect(response.status, response.text).toBe(200);
    const { log_head, as_of } = response.body;
    expect(as_of.head_signed).toBe(false);
    expect(log_head).toEqual({ passport_id: other.passport_id, size: 1, root_hash: first.body.log_head.root_hash, timestamp: first.body.event.recorded_at });
    const proof = (as_of.consistency_proof as string[]).map((hex) => hashFromHex(hex)!);
    expect(verifyConsistency(1, 2, proof, hashFromHex(log_head.root_hash)!, hashFromHex(as_of.current_log_head.root_hash)!)).toBe(true);
  });
});

describe('passport(id:, at:) in the graph', () => {
  it('answers the passport as it stood, with the proof to today’s head', async () => {
    const suspended = appended[2]!;
    const { data, errors } = await platform.graphql(
      `query ($id: ID!, $at: String) { passport(id: $id, at: $at) { status logSize logHead events latestPack asOf { at headSigned lastEventAt currentLogHead consistencyProof } } }`,
      { id, at: suspended.event.recorded_at },
    );
    expect(errors).toBeUndefined();
    expect(data.passport).toMatchObject({ status: 'suspended', logSize: 3, logHead: suspended.log_head, events: today.log.slice(0, 3), latestPack: null });
    expect(data.passport.asOf).toMatchObject({ at: suspended.event.recorded_at, headSigned: true, lastEventAt: suspended.event.recorded_at, currentLogHead: today.log_head });
    const proof = (data.passport.asOf.consistencyProof as string[]).map((hex) => hashFromHex(hex)!);
    expect(verifyConsistency(3, today.log_head.size, proof, hashFromHex(suspended.log_head.root_hash as string)!, hashFromHex(today.log_head.root_hash)!)).toBe(true);
    // The verdict of then: the log up to then against the head signed then.
    const verdict = await platform.graphql(`query ($id: ID!, $at: String) { passport(id: $id, at: $at) { verdict } }`, { id, at: suspended.event.recorded_at });
    expect(verdict.data.passport.verdict.log_verdict).toMatchObject({ ok: true, size: 3, replay: { status: 'suspended' }, head: { ok: true, checked: true } });
    // Without `at`, asOf is null and the passport is today's.
    expect((await platform.graphql(`query ($id: ID!) { passport(id: $id) { status asOf { at } } }`, { id })).data).toEqual({ passport: { status: 'active', asOf: null } });
  });

  it('refuses a malformed instant and an instant before the passport with the problems REST gives', async () => {
    const malformed = await platform.graphql(`query ($id: ID!) { passport(id: $id, at: "last week") { status } }`, { id });
    expect(malformed.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_QUERY' });
    const early = await platform.graphql(`query ($id: ID!, $at: String) { passport(id: $id, at: $at) { status } }`, { id, at: '2000-01-01T00:00:00Z' });
    expect(early.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_YET_ISSUED' });
  });
});
