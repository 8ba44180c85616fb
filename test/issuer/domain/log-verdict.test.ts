import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalize, signJson } from '../../../lib/crypto/index.js';
import { signLogHead } from '../../../lib/formats/issuer/checkpoint.js';
import { frontierOf, leafHash } from '../../../lib/formats/issuer/merkle.js';
import type { EventRecord } from '../../../lib/formats/issuer/event-log.js';
import { verifyLog } from '../../../lib/formats/issuer/log-verdict.js';
import { at, buildLog, ed25519Key, resolverOf } from './fixtures.js';

const key = ed25519Key();
const resolve = resolverOf(key);
const { events, state } = buildLog('passport-9', key, 6);
const head = signLogHead('passport-9', state.frontier, key.signer, at(100));
const headFor = (list: EventRecord[]) => signLogHead('passport-9', frontierOf(list.map((event) => leafHash(new TextEncoder().encode(canonicalize(event))))), key.signer, at(100));

describe('log verdict', () => {
  it('passes an intact log', async () => {
    const verdict = await verifyLog(events, head, resolve, 'passport-9');
    expect(verdict).toMatchObject({
      ok: true,
      size: 8,
      chain: { ok: true },
      replay: { ok: true, status: 'active' },
      head: { ok: true, checked: true, kid: key.signer.kid },
      root: { ok: true, checked: true, computed: head.root_hash, signed: head.root_hash },
      signatures: { ok: true, verified: 8, total: 8, first_failing_seq: null },
      problems: [],
    });
  });

  it('judges stored texts as the committed bytes: the same verdict when canonical, failures when not', async () => {
    const texts = events.map((event) => canonicalize(event));
    expect(await verifyLog(events, head, resolve, 'passport-9', texts)).toEqual(await verifyLog(events, head, resolve, 'passport-9'));
    // The same content, reformatted: not what the log committed to.
    const spaced = [...texts];
    spaced[3] = JSON.stringify(events[3], null, 1);
    const reformatted = await verifyLog(events, head, resolve, 'passport-9', spaced);
    expect(reformatted.ok).toBe(false);
    expect(reformatted.chain.problems).toEqual([expect.objectContaining({ code: 'PREV_HASH_MISMATCH', seq: 4 })]);
    expect(reformatted.root.ok).toBe(false);
    // A text whose content was changed, parsed into the event list as a store would.
    const altered = [...texts];
    altered[2] = altered[2]!.replace('"action":"OBSERVE"', '"action":"ADD"');
    const parsed = altered.map((text) => JSON.parse(text) as unknown);
    expect(altered[2]).not.toBe(texts[2]);
    const verdict = await verifyLog(parsed, head, resolve, 'passport-9', altered);
    expect(verdict.signatures).toMatchObject({ verified: 7, first_failing_seq: 2 });
    expect(verdict.root.ok).toBe(false);
  });

  it('passes an empty log against the head of the empty tree', async () => {
    const empty = signLogHead('passport-9', frontierOf([]), key.signer, at(0));
    expect(await verifyLog([], empty, resolve, 'passport-9')).toMatchObject({ ok: true, size: 0, signatures: { verified: 0, total: 0 } });
  });

  it('names the event whose payload was altered, and the link and root it breaks', async () => {
    const altered = events.map((event, i) => (i === 3 ? { ...event, payload: { ...event.payload, bizStep: 'destroying' } } : event));
    const verdict = await verifyLog(altered, head, resolve, 'passport-9');
    expect(verdict.ok).toBe(false);
    expect(verdict.signatures).toMatchObject({ verified: 7, total: 8, first_failing_seq: 3, failures: [{ seq: 3, reason: 'BAD_SIGNATURE' }] });
    expect(verdict.chain.problems).toEqual([expect.objectContaining({ code: 'PREV_HASH_MISMATCH', seq: 4 })]);
    expect(verdict.root).toMatchObject({ ok: false, checked: true });
    expect(verdict.problems.map((problem) => problem.code)).toEqual(['PREV_HASH_MISMATCH', 'ROOT_MISMATCH', 'SIGNATURE_INVALID']);
  });

  it('notices a removed event', async () => {
    const shortened = [...events.slice(0, 2), ...events.slice(3)];
    const verdict = await verifyLog(shortened, head, resolve, 'passport-9');
    expect(verdict.chain.problems.map((problem) => [problem.code, problem.seq])).toEqual(
      expect.arrayContaining([
        ['SEQ_OUT_OF_ORDER', 2],
        ['PREV_HASH_MISMATCH', 2],
      ]),
    );
    expect(verdict.head.problems).toEqual([expect.objectContaining({ code: 'HEAD_SIZE_MISMATCH' })]);
    expect(verdict.root.checked).toBe(false);
    expect(verdict.signatures.ok).toBe(true);
  });

  it('notices a truncated log that still matches an older head only through that head', async () => {
    const prefix = events.slice(0, 5);
    expect((await verifyLog(prefix, headFor(prefix), resolve, 'passport-9')).ok).toBe(true);
    expect((await verifyLog(prefix, head, resolve, 'passport-9')).head.problems[0]!.code).toBe('HEAD_SIZE_MISMATCH');
  });

  it('reports signatures by unknown keys, heads of other passports, forged heads, and a missing head', async () => {
    const stranger = ed25519Key();
    expect(await verifyLog(events, head, resolverOf(stranger), 'passport-9')).toMatchObject({
      signatures: { verified: 0, total: 8, first_failing_seq: 0 },
      head: { problems: [expect.objectContaining({ code: 'HEAD_SIGNATURE_INVALID' })] },
    });
    const otherHead = signLogHead('passport-10', state.frontier, key.signer, at(100));
    expect((await verifyLog(events, otherHead, resolve, 'passport-9')).head.problems[0]!.code).toBe('HEAD_PASSPORT_MISMATCH');
    const forged = { ...head, root_hash: 'ab'.repeat(32) };
    expect((await verifyLog(events, forged, resolve, 'passport-9')).head.problems[0]!.code).toBe('HEAD_SIGNATURE_INVALID');
    const resignedWrongRoot = signJson({ passport_id: 'passport-9', size: 8, root_hash: 'ab'.repeat(32), timestamp: head.timestamp }, key.signer);
    expect((await verifyLog(events, resignedWrongRoot, resolve, 'passport-9')).problems.map((p) => p.code)).toEqual(['ROOT_MISMATCH']);
    expect(await verifyLog(events, undefined, resolve, 'passport-9')).toMatchObject({ ok: true, head: { checked: false }, root: { checked: false } });
  });

  it('replays statuses and flags a stored illegal transition (rule I6) by seq', async () => {
    // Forge a log with a signed but illegal 'reinstated' while active, as a faulty writer might store it.
    const last = events.at(-1)!;
    const { signature: _s, ...unsigned } = last;
    const illegal = signJson(
      { ...unsigned, seq: 8, type: 'reinstated' as const, payload: { reason: 'x' }, prev_hash: createHash('sha256').update(canonicalize(last)).digest('hex') },
      key.signer,
    ) as EventRecord;
    const log = [...events, illegal];
    const verdict = await verifyLog(log, headFor(log), resolve, 'passport-9');
    expect(verdict.replay).toMatchObject({ ok: false, problems: [{ code: 'ILLEGAL_TRANSITION', seq: 8 }] });
    expect(verdict.chain.ok && verdict.root.ok && verdict.signatures.ok).toBe(true);
  });

  it('keeps going past a malformed record', async () => {
    const broken = events.map((event, i) => (i === 2 ? { ...event, seq: 'two' } : event)) as unknown[];
    const verdict = await verifyLog(broken, head, resolve, 'passport-9');
    // Its canonical form changed, so the next link breaks too.
    expect(verdict.chain.problems.map((problem) => [problem.code, problem.seq])).toEqual([
      ['MALFORMED_EVENT', 2],
      ['PREV_HASH_MISMATCH', 3],
    ]);
    expect(verdict.signatures).toMatchObject({ verified: 7, first_failing_seq: 2 });
  });

  it('flags a record whose recorded_at goes back in time', async () => {
    const { signature: _s, ...unsigned } = events[5]!;
    const early = signJson({ ...unsigned, recorded_at: at(-50).toISOString() }, key.signer) as EventRecord;
    const log = events.map((event, i) => (i === 5 ? early : event));
    const codes = (await verifyLog(log, headFor(log), resolve, 'passport-9')).chain.problems.map((problem) => [problem.code, problem.seq]);
    expect(codes).toEqual([
      ['TIME_REGRESSION', 5],
      ['PREV_HASH_MISMATCH', 6],
    ]);
  });
});
