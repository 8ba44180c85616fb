/**
 * A passport's state at an instant, from its log alone: status by rule I6's table, the head over the
 * events recorded up to then (inclusive), and the signed head it carries checked against that head.
 */
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../../lib/crypto/jcs.js';
import { signLogHead } from '../../../lib/formats/issuer/checkpoint.js';
import { appendEvent, emptyLogState, type EventRecord, type LogState } from '../../../lib/formats/issuer/event-log.js';
import { consistencyProof, EMPTY_FRONTIER, hashFromHex, leafHash, verifyConsistency } from '../../../lib/formats/issuer/merkle.js';
import { passportStateAt } from '../../../lib/formats/issuer/passport-state.js';
import { at, ed25519Key, objectEvent } from './fixtures.js';
import { referenceTreeHash as mth } from '../../support/merkle-reference.js';

const key = ed25519Key();
const passportId = 'passport-at';
const created = at(-10);

// draft → (ObjectEvent) → active → suspended → (ObjectEvent) → active, one event a second from at(0).
const inputs = [
  objectEvent('commissioning', 0),
  { type: 'activated', payload: { placed_on_market_at: at(1).toISOString() } },
  { type: 'suspended', payload: { reason: 'recall investigation' } },
  objectEvent('inspecting', 3),
  { type: 'reinstated', payload: { reason: 'investigation closed' } },
];
let state: LogState = emptyLogState(passportId);
const events: EventRecord[] = [];
const heads = [signLogHead(passportId, EMPTY_FRONTIER, key.signer, created)];
inputs.forEach((input, i) => {
  const appended = appendEvent(state, input, key.signer, at(i));
  state = appended.state;
  events.push(appended.event);
  heads.push(signLogHead(passportId, state.frontier, key.signer, at(i)));
});

const stateAt = (instant: Date, extra: { signed_head?: (typeof heads)[number]; texts?: string[] } = {}) =>
  passportStateAt({ passport_id: passportId, created_at: created, at: instant, events, ...extra });

describe('passportStateAt', () => {
  it('says the passport did not exist before its creation, and was a draft with an empty log from then', () => {
    expect(stateAt(new Date(created.getTime() - 1))).toBeUndefined();
    expect(stateAt(created, { signed_head: heads[0]! })).toEqual({
      passport_id: passportId,
      at: created.toISOString(),
      status: 'draft',
      event_count: 0,
      head: { size: 0, root_hash: mth([]) },
      signed_head: heads[0],
    });
  });

  it('follows the status through suspension and reinstatement, counting events recorded at the instant itself', () => {
    const expected = ['draft', 'active', 'suspended', 'suspended', 'active'];
    expected.forEach((status, i) => {
      const exactly = stateAt(at(i), { signed_head: heads[i + 1]! });
      expect(exactly).toMatchObject({ status, event_count: i + 1, last_event_at: at(i).toISOString(), signed_head: heads[i + 1] });
      expect(exactly!.head.root_hash).toBe(mth(events.slice(0, i + 1).map((event) => canonicalize(event))));
      // A millisecond before the event, the state before it.
      expect(stateAt(new Date(at(i).getTime() - 1))).toMatchObject({ status: i === 0 ? 'draft' : expected[i - 1], event_count: i });
    });
    expect(stateAt(at(1000))).toMatchObject({ status: 'active', event_count: 5, head: { root_hash: mth(events.map((event) => canonicalize(event))) } });
  });

  it('gives a head of which today’s is an extension: the RFC 6962 consistency proof verifies', () => {
    const leaves = events.map((event) => leafHash(new TextEncoder().encode(canonicalize(event))));
    const today = hashFromHex(stateAt(at(1000))!.head.root_hash)!;
    for (let i = 0; i <= events.length; i += 1) {
      const then = stateAt(new Date(at(i).getTime() - 1))!;
      expect(verifyConsistency(then.event_count, events.length, consistencyProof(leaves, then.event_count), hashFromHex(then.head.root_hash)!, today)).toBe(true);
    }
  });

  it('hashes the stored texts when given them, to the same head', () => {
    const texts = events.map((event) => canonicalize(event));
    expect(stateAt(at(2), { texts })).toEqual(stateAt(at(2)));
  });

  it('refuses a signed head that does not cover the events up to the instant, and a log out of order or of another passport', () => {
    expect(() => stateAt(at(2), { signed_head: heads[2]! })).toThrow(expect.objectContaining({ code: 'LOG_MISMATCH' }));
    expect(() => stateAt(at(2), { signed_head: { ...heads[3]!, passport_id: 'other' } })).toThrow(expect.objectContaining({ code: 'LOG_MISMATCH' }));
    expect(() => passportStateAt({ passport_id: passportId, created_at: created, at: at(9), events: [events[0]!, events[2]!] })).toThrow(expect.objectContaining({ code: 'LOG_MISMATCH' }));
    expect(() => passportStateAt({ passport_id: 'other', created_at: created, at: at(9), events })).toThrow(expect.objectContaining({ code: 'LOG_MISMATCH' }));
  });

  it('refuses a log that breaks rule I6', () => {
    const reinstatedFirst = { ...events[4]!, seq: 0, prev_hash: '0'.repeat(64) };
    expect(() => passportStateAt({ passport_id: passportId, created_at: created, at: at(9), events: [reinstatedFirst] })).toThrow(expect.objectContaining({ code: 'ILLEGAL_TRANSITION' }));
  });
});
