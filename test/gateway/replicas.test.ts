/**
 * Two replicas of every subgraph behind the gateway, on one PostgreSQL (SUBGRAPH_REPLICAS=2, issue
 * 17 item 6): the gateway spreads requests over both; concurrent event appends to one passport
 * through different replicas make one linear, hash-chained log; a key revoked through one replica
 * stands revoked at the other on the very next read (the bound docs/SCALING.md gives: none beyond
 * the commit, for no replica keeps state between requests).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize } from '../../lib/crypto/jcs.js';
import { SERVICES } from '../../lib/config/services.js';
import { createModel, createPassport, objectEvent } from '../issuer/support.js';
import { startTestStack, TOKENS, type TestStack } from '../support/stack.js';
import { compactCredential, DAY, fromNow, newKey, seconds } from '../trust/support.js';

let platform: TestStack;

/** A GraphQL request straight to one replica, with the writer's token. */
async function atReplica(url: string, query: string, variables: Record<string, unknown> = {}, as: keyof typeof TOKENS = 'writer'): Promise<{ data?: any; errors?: any[] }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS[as]}` }, body: JSON.stringify({ query, variables }) });
  return (await response.json()) as { data?: any; errors?: any[] };
}

beforeAll(async () => {
  platform = await startTestStack({ env: { SUBGRAPH_REPLICAS: '2' } });
}, 120_000);
afterAll(() => platform?.stop());

describe('two replicas of each subgraph', () => {
  it('run on ports of their own, and the gateway sends requests to both', async () => {
    for (const service of SERVICES) {
      const urls = platform.stack.replicaUrls[service];
      expect(urls).toHaveLength(2);
      expect(new Set(urls).size).toBe(2);
    }
    const before = platform.stack.replicaStatements().registry;
    // Reads through the gateway go to each replica in turn: both replicas' pools send SQL.
    for (let i = 0; i < 6; i += 1) expect((await platform.graphql(`{ registryRecord(id: "nothing-here-${i}", kind: "model") { id } }`)).errors).toBeUndefined();
    const after = platform.stack.replicaStatements().registry;
    expect(after[0]!).toBeGreaterThan(before[0]!);
    expect(after[1]!).toBeGreaterThan(before[1]!);
  });

  it('append concurrent events to one passport through different replicas as one linear log', async () => {
    await createModel(platform, 'replica-model');
    const passport = await createPassport(platform, 'replica-model');
    const append = `mutation ($passportId: ID!, $payload: JSONObject!) { appendPassportEvent(passportId: $passportId, type: "ObjectEvent", payload: $payload) { event } }`;
    const [first, second] = platform.stack.replicaUrls.issuer as [string, string];
    // 24 appends at once: 8 to each replica directly, 8 through the REST facade (the gateway's turns).
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, () => atReplica(first, append, { passportId: passport.passport_id, payload: objectEvent() })),
      ...Array.from({ length: 8 }, () => atReplica(second, append, { passportId: passport.passport_id, payload: objectEvent() })),
      ...Array.from({ length: 8 }, async () => {
        const response = await platform.rest('issuer', `/passports/${passport.passport_id}/events`, { body: { type: 'ObjectEvent', payload: objectEvent() }, as: 'writer' });
        expect(response.status, JSON.stringify(response.body)).toBe(201);
        return { data: { appendPassportEvent: response.body }, errors: undefined };
      }),
    ]);
    for (const answer of answers) expect(answer.errors).toBeUndefined();

    const read = await platform.graphql(`query ($id: ID!) { passport(id: $id) { logSize events } }`, { id: passport.passport_id });
    const events = read.data.passport.events as { seq: number; prev_hash: string }[];
    expect(read.data.passport.logSize).toBe(24);
    expect(events.map((event) => event.seq)).toEqual(Array.from({ length: 24 }, (_, i) => i));
    // Each event chained to the one before it: no fork, no gap, nothing lost.
    for (const [i, event] of events.entries())
      expect(event.prev_hash).toBe(
        i === 0
          ? '0'.repeat(64)
          : createHash('sha256')
              .update(canonicalize(events[i - 1]))
              .digest('hex'),
      );
    const verdict = await platform.rest('issuer', `/passports/${passport.passport_id}/verdict`);
    expect(verdict.status).toBe(200);
    expect(verdict.body.event_signature_audit).toMatchObject({ verified: 24, total: 24 });
  });

  it('see a key revoked through one replica at the other on the next read', async () => {
    const [rootKey, issuerKey] = [await newKey(), await newKey()];
    const keyIat = seconds(new Date(Date.now() - 30 * DAY));
    const upsert = `mutation ($input: TrustNodeInput!) { upsertTrustNode(input: $input) { created } }`;
    const [first, second] = platform.stack.replicaUrls.trust as [string, string];
    expect((await atReplica(first, upsert, { input: { id: 'replica-root', kind: 'root', keys: [{ ...rootKey.jwk, iat: keyIat }] } }, 'admin')).errors).toBeUndefined();
    expect((await atReplica(second, upsert, { input: { id: 'replica-issuer', kind: 'issuer', keys: [{ ...issuerKey.jwk, iat: keyIat }] } }, 'admin')).errors).toBeUndefined();
    const credential = await compactCredential({ iss: 'replica-root', sub: 'replica-issuer', scope: {}, iat: fromNow(-DAY), exp: fromNow(365 * DAY) }, rootKey);
    expect((await atReplica(first, `mutation ($credential: JSON!) { addTrustEdge(credential: $credential) { created } }`, { credential }, 'admin')).errors).toBeUndefined();

    const standing = `query ($kid: String!, $at: DateTimeISO!) { trustKeyStanding(kid: $kid, at: $at) }`;
    const now = new Date().toISOString();
    expect((await atReplica(second, standing, { kid: issuerKey.jwk.kid, at: now })).data.trustKeyStanding.standing).toBe('valid');
    expect((await atReplica(first, standing, { kid: issuerKey.jwk.kid, at: now })).data.trustKeyStanding.standing).toBe('valid');

    // Revoked through the first replica, as of an hour ago …
    const revokedAt = seconds(new Date(Date.now() - 3_600_000));
    const revoked = await atReplica(
      first,
      upsert,
      { input: { id: 'replica-issuer', keys: [{ ...issuerKey.jwk, iat: keyIat, revoked: { revoked_at: revokedAt, reason: 'keyCompromise' } }] } },
      'admin',
    );
    expect(revoked.errors).toBeUndefined();
    // … and the second replica's very next answer knows it.
    expect((await atReplica(second, standing, { kid: issuerKey.jwk.kid, at: now })).data.trustKeyStanding.standing).toBe('revoked');
    expect((await platform.graphql(standing, { kid: issuerKey.jwk.kid, at: now })).data.trustKeyStanding.standing).toBe('revoked');
  });
});
