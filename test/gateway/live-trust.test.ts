/**
 * The trust service's feeds as a subscriber meets them at the gateway, with the graphql-ws and
 * graphql-sse client libraries: revocations declared and trust-list changes made through REST, each
 * delivered once, in order; a client dropped mid-stream resumes after its last cursor and gets
 * exactly what it missed.
 */
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';
import { collector, settle } from './live-support.js';

let platform: SharedTestStack;
const TAG = (process.pid % 46_656).toString(36);
/** A subdivision code no other file registers. */
const JURISDICTION = `ZZ-${TAG}`.toUpperCase();

beforeAll(async () => {
  platform = await sharedTestStack();
}, 180_000);

const wsClient = () => createWsClient({ url: platform.stack.gateway.graphqlUrl.replace(/^http/, 'ws'), webSocketImpl: WebSocket, lazy: false, retryAttempts: 0 });
const sseClient = () => createSseClient({ url: platform.stack.gateway.graphqlUrl, singleConnection: false, retryAttempts: 0 });

describe('Subscription.trustRevocationsRecorded', () => {
  const REVOCATIONS = 'subscription($after: String) { trustRevocationsRecorded(after: $after) { cursor revocation { subject reason recordedAt } } }';
  type Recorded = { cursor: string; revocation: { subject: string; reason: string } };

  async function revoke(name: string): Promise<string> {
    const subject = `live-${TAG}-${name}`;
    expect((await platform.rest('trust', '/nodes', { body: { id: subject, kind: 'witness' }, as: 'admin' })).status).toBe(201);
    const revoked = await platform.rest('trust', '/revocations', { body: { subject, reason: 'superseded' }, as: 'admin' });
    expect(revoked.status, revoked.text).toBe(201);
    return subject;
  }

  it('delivers each revocation once, in order; a dropped client resumes after its last cursor with exactly what it missed', async () => {
    const ours = (item: Recorded) => item.revocation.subject.startsWith(`live-${TAG}-`);
    const first = wsClient();
    const before = collector<Recorded>('trustRevocationsRecorded', ours);
    first.subscribe({ query: REVOCATIONS, variables: { after: null } }, before.sink);
    const a = await revoke('a');
    await before.until(1);
    const b = await revoke('b');
    await before.until(2);
    expect(before.items.map((item) => item.revocation.subject)).toEqual([a, b]);
    await first.dispose();
    const missed = [await revoke('c'), await revoke('d')];

    const sse = sseClient();
    // After the cursor, every revocation recorded is one of this test's.
    const after = collector<Recorded>('trustRevocationsRecorded');
    const dispose = sse.subscribe({ query: REVOCATIONS, variables: { after: before.items.at(-1)!.cursor } }, after.sink);
    try {
      await after.until(2);
      const live = await revoke('e');
      await after.until(3);
      await settle();
      expect(after.items.map((item) => item.revocation.subject)).toEqual([...missed, live]);
      expect(after.items[2]!.revocation.reason).toBe('superseded');
      expect(after.errors).toEqual([]);
    } finally {
      dispose();
      sse.dispose();
    }
  });
});

describe('Subscription.trustListChanges', () => {
  const CHANGES = 'subscription($jurisdiction: String, $after: String) { trustListChanges(jurisdiction: $jurisdiction, after: $after) { cursor jurisdiction sequenceNumber change document } }';
  type Recorded = { cursor: string; jurisdiction: string; sequenceNumber: number; change: string; document: { entry?: { id: string } } };

  const entry = async (id: string) => {
    const upserted = await platform.rest('trust', `/trust-lists/${JURISDICTION}/entries`, {
      body: { id, service_type: 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC', name: `Entry ${id}` },
      as: 'admin',
    });
    expect(upserted.status, upserted.text).toBe(201);
  };

  it("delivers a list's registration and each entry change once, in order, and resumes after a dropped connection with exactly what it missed", async () => {
    const first = wsClient();
    // Named in lower case: the list is the same.
    const before = collector<Recorded>('trustListChanges');
    first.subscribe({ query: CHANGES, variables: { jurisdiction: JURISDICTION.toLowerCase(), after: null } }, before.sink);
    const registered = await platform.rest('trust', '/trust-lists', { body: { jurisdiction: JURISDICTION, framework: 'eIDAS' }, as: 'admin' });
    expect(registered.status, registered.text).toBe(201);
    await before.until(1);
    await entry('one');
    await before.until(2);
    expect(before.items.map(({ jurisdiction, sequenceNumber, change }) => [jurisdiction, sequenceNumber, change])).toEqual([
      [JURISDICTION, 1, 'registration'],
      [JURISDICTION, 2, 'entry'],
    ]);
    await first.dispose();
    await entry('two');
    await entry('three');

    const sse = sseClient();
    const after = collector<Recorded>('trustListChanges');
    const dispose = sse.subscribe({ query: CHANGES, variables: { jurisdiction: JURISDICTION, after: before.items.at(-1)!.cursor } }, after.sink);
    try {
      await after.until(2);
      await entry('four');
      await after.until(3);
      await settle();
      expect(after.items.map((item) => item.document.entry?.id)).toEqual(['two', 'three', 'four']);
      expect(after.items.map((item) => item.sequenceNumber)).toEqual([3, 4, 5]);
      expect(after.errors).toEqual([]);
    } finally {
      dispose();
      sse.dispose();
    }
  });
});
