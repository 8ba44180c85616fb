import { describe, expect, it } from 'vitest';
import { signLogHead } from '../../../lib/formats/issuer/checkpoint.js';
import { verifyLog } from '../../../lib/formats/issuer/log-verdict.js';
import { buildPackClaims, mintPack, verifyPack } from '../../../lib/formats/issuer/pack.js';
import { assembleVerdict, keyUses, standingQuestions, type KeyStanding, type VerdictInput } from '../../../subgraphs/issuer/domain/verdict.js';
import { VERDICT_CHECKS } from '../../../lib/formats/issuer/verdict-checks.js';
import { appendEvent } from '../../../lib/formats/issuer/event-log.js';
import { at, buildLog, ed25519Key, p256Key, resolverOf } from './fixtures.js';

const eventKey = ed25519Key();
const carrierKey = p256Key();
const keyring = resolverOf(eventKey, carrierKey);
const passportId = 'passport-v';
const { events, state } = buildLog(passportId, eventKey, 3);
const head = signLogHead(passportId, state.frontier, eventKey.signer, at(60));
const packFor = (status: 'active' | 'suspended', logHead = head, last = events.at(-1)!) =>
  verifyPack(
    mintPack(
      buildPackClaims({
        issuer: 'https://issuer.example',
        passport: { id: passportId, identity: 'https://id.gs1.org/01/09520123456788/21/SN-42', type_ref: { id: 'm', version: 1 }, config_vector: {}, capability_class: 'verify-offline', status },
        head: logHead,
        last_event: last,
        now: at(70),
      }),
      carrierKey.signer,
    ).text,
    keyring,
  );
const pack = packFor('active');
const uses = keyUses(events, head, pack);
const allOk = (): KeyStanding[] => standingQuestions(uses).map((question) => ({ ...question, standing: 'valid' }));
// Top-level await: the log verdict of the fixture, computed once.
const baseLog = await verifyLog(events, head, keyring, passportId);
const baseInput = (): VerdictInput => ({
  passport: { id: passportId, status: 'active' },
  log: baseLog,
  pack,
  key_standing: { uses, answers: allOk() },
});
const outcomes = (verdict: ReturnType<typeof assembleVerdict>) => Object.fromEntries(verdict.checks.map((check) => [check.check, check.outcome]));

describe('key uses', () => {
  it('asks about each key in each role at its first and last signature', () => {
    expect(uses).toEqual([
      { role: 'event', kid: eventKey.signer.kid, first_used: at(0).toISOString(), last_used: at(4).toISOString() },
      { role: 'log_head', kid: eventKey.signer.kid, first_used: at(60).toISOString(), last_used: at(60).toISOString() },
      { role: 'pack', kid: carrierKey.signer.kid, first_used: at(70).toISOString(), last_used: at(70).toISOString() },
    ]);
    expect(standingQuestions(uses)).toHaveLength(4);
  });
});

describe('full-pipeline verdict', () => {
  it('verifies a sound passport with every check run', () => {
    const verdict = assembleVerdict(baseInput());
    expect(verdict.outcome).toBe('verified');
    expect(verdict.coverage).toEqual({ checks_run: 12, checks_total: 12, not_run: [] });
    expect(verdict.checks.map((check) => check.check)).toEqual(VERDICT_CHECKS.map((entry) => entry.check));
    expect(verdict.event_signature_audit).toEqual({ verified: 5, total: 5, first_failing_seq: null, failures: [] });
    expect(verdict.pack_verdict).toEqual({ present: true, ok: true, kid: carrierKey.signer.kid, capability_class: 'verify-offline' });
  });

  it('is incomplete, saying why, when no pack exists and the trust service was not asked', () => {
    const verdict = assembleVerdict({ ...baseInput(), pack: undefined, key_standing: undefined });
    expect(verdict.outcome).toBe('incomplete');
    expect(verdict.coverage.checks_run).toBe(6);
    expect(verdict.coverage.not_run).toEqual([
      { check: 'pack.signature', why: 'no pack has been minted' },
      { check: 'pack.head', why: 'no pack has been minted' },
      { check: 'pack.status', why: 'no pack has been minted' },
      { check: 'key_standing.event', why: 'the trust service was not consulted' },
      { check: 'key_standing.log_head', why: 'the trust service was not consulted' },
      { check: 'key_standing.pack', why: 'no pack has been minted' },
    ]);
    expect(verdict.pack_verdict).toEqual({ present: false, ok: false });
  });

  it('fails when a signing key was revoked at signing time, and names it', () => {
    const answers = allOk().map((answer) => (answer.kid === carrierKey.signer.kid ? { ...answer, standing: 'revoked' as const, reason: 'keyCompromise' } : answer));
    const verdict = assembleVerdict({ ...baseInput(), key_standing: { uses, answers } });
    expect(verdict.outcome).toBe('failed');
    expect(verdict.checks.find((check) => check.check === 'key_standing.pack')).toMatchObject({
      outcome: 'failed',
      detail: expect.stringContaining(`${carrierKey.signer.kid} at ${at(70).toISOString()}: revoked (keyCompromise)`),
    });
    expect(outcomes(verdict)['key_standing.event']).toBe('passed');
  });

  it('leaves a standing check not run when the trust service does not know a key', () => {
    const answers = allOk().filter((answer) => answer.at !== at(4).toISOString());
    const verdict = assembleVerdict({ ...baseInput(), key_standing: { uses, answers } });
    expect(verdict.outcome).toBe('incomplete');
    expect(verdict.coverage.not_run).toEqual([{ check: 'key_standing.event', why: expect.stringContaining(`${eventKey.signer.kid} at ${at(4).toISOString()}`) }]);
  });

  it('fails an expired or not yet valid key like a revoked one', () => {
    for (const standing of ['expired', 'not_yet_valid'] as const) {
      const answers = allOk().map((answer) => (answer.kid === eventKey.signer.kid ? { ...answer, standing } : answer));
      const verdict = assembleVerdict({ ...baseInput(), key_standing: { uses, answers } });
      expect(outcomes(verdict)['key_standing.event']).toBe('failed');
      expect(verdict.outcome).toBe('failed');
    }
  });

  it('says why the standing checks did not run when the trust service cannot answer', () => {
    const verdict = assembleVerdict({ ...baseInput(), key_standing: { unavailable: 'trustKeyStanding is not in the graph' } });
    expect(verdict.outcome).toBe('incomplete');
    expect(verdict.coverage.not_run.map((entry) => entry.check)).toEqual(['key_standing.event', 'key_standing.log_head', 'key_standing.pack']);
    expect(verdict.coverage.not_run[0]!.why).toContain('trustKeyStanding is not in the graph');
  });

  it('fails a stale pack and a pack with another status', async () => {
    const appended = appendEvent(state, { type: 'suspended', payload: { reason: 'recall' } }, eventKey.signer, at(80));
    const longer = [...events, appended.event];
    const newHead = signLogHead(passportId, appended.state.frontier, eventKey.signer, at(90));
    const verdict = assembleVerdict({
      passport: { id: passportId, status: 'suspended' },
      log: await verifyLog(longer, newHead, keyring, passportId),
      pack,
      key_standing: { uses: keyUses(longer, newHead, pack), answers: standingQuestions(keyUses(longer, newHead, pack)).map((q) => ({ ...q, standing: 'valid' as const })) },
    });
    expect(verdict.outcome).toBe('failed');
    expect(outcomes(verdict)).toMatchObject({ 'pack.signature': 'passed', 'pack.head': 'failed', 'pack.status': 'failed', 'log.status': 'passed' });
    const fresh = packFor('suspended', newHead, appended.event);
    expect(
      assembleVerdict({
        ...baseInput(),
        passport: { id: passportId, status: 'suspended' },
        log: await verifyLog(longer, newHead, keyring, passportId),
        pack: fresh,
        key_standing: undefined,
      }).checks.filter((c) => c.outcome === 'failed'),
    ).toEqual([]);
  });

  it('fails a stored status its events do not lead to', () => {
    const verdict = assembleVerdict({ ...baseInput(), passport: { id: passportId, status: 'suspended' } });
    expect(outcomes(verdict)).toMatchObject({ 'log.status': 'failed', 'pack.status': 'failed' });
  });

  it('carries the log verdict and signature audit of a tampered log, and does not trust claims of a broken pack', async () => {
    const tampered = events.map((event, i) => (i === 2 ? { ...event, recorded_at: at(2.5).toISOString() } : event));
    const brokenPack = { ...pack, ok: false as const, reason: 'BAD_SIGNATURE' as const, message: 'forged' };
    const verdict = assembleVerdict({ ...baseInput(), log: await verifyLog(tampered, head, keyring, passportId), pack: brokenPack });
    expect(verdict.outcome).toBe('failed');
    expect(verdict.event_signature_audit).toMatchObject({ verified: 4, total: 5, first_failing_seq: 2 });
    expect(outcomes(verdict)).toMatchObject({
      'log.chain': 'failed',
      'log.root': 'failed',
      'events.signatures': 'failed',
      'pack.signature': 'failed',
      'pack.head': 'not_run',
      'pack.status': 'not_run',
    });
    expect(verdict.checks.find((check) => check.check === 'events.signatures')!.detail).toContain('first failure at seq 2');
  });
});
