/**
 * A passport's new snapshots as a subscriber meets them at the gateway, with the graphql-ws and
 * graphql-sse client libraries: snapshots taken through REST, each delivered once, in order, with
 * fields of another subgraph (the issuer's passport); a client dropped mid-stream resumes after its
 * last cursor and gets exactly the snapshots it missed.
 */
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { appendEvent, createModel, createPassport, PAYLOADS } from '../issuer/support.js';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';
import { collector, settle } from './live-support.js';

const MODEL = 'battery-live-snapshots';
let platform: SharedTestStack;
let passportId = '';

const SNAPSHOTS = `subscription Snapshots($id: ID!, $after: String) {
  passportSnapshots(passportId: $id, after: $after) { cursor snapshot { id passportId sha512 passport { status } } }
}`;

interface Delivered {
  cursor: string;
  snapshot: { id: string; passportId: string; sha512: string; passport: { status: string } };
}

beforeAll(async () => {
  platform = await sharedTestStack();
  await createModel(platform, MODEL);
  passportId = (await createPassport(platform, MODEL)).passport_id;
}, 180_000);

/** Takes a snapshot of the passport (an event first, so each one is of a different log); its id. */
async function snapshot(): Promise<string> {
  const appended = await appendEvent(platform, passportId, 'ObjectEvent', PAYLOADS.ObjectEvent!());
  expect(appended.status, appended.text).toBe(201);
  const taken = await platform.rest('archive', '/snapshots', { as: 'writer', body: { passport_id: passportId } });
  expect(taken.status, taken.text).toBe(201);
  return taken.body.id;
}

describe('Subscription.passportSnapshots', () => {
  it('delivers each new snapshot once, in order, with the passport from the issuer; a dropped client resumes after its last cursor', async () => {
    const first = await snapshot();
    const ws = createWsClient({ url: platform.stack.gateway.graphqlUrl.replace(/^http/, 'ws'), webSocketImpl: WebSocket, lazy: false, retryAttempts: 0 });
    const before = collector<Delivered>('passportSnapshots');
    ws.subscribe({ query: SNAPSHOTS, variables: { id: passportId, after: null } }, before.sink);
    await before.until(1);
    const second = await snapshot();
    await before.until(2);
    expect(before.items.map((item) => item.snapshot.id)).toEqual([first, second]);
    expect(before.items[1]!.snapshot).toMatchObject({ passportId, sha512: expect.stringMatching(/^[0-9a-f]{128}$/), passport: { status: 'draft' } });
    const last = before.items.at(-1)!.cursor;
    // The connection drops; snapshots go on meanwhile.
    await ws.dispose();
    const missed = [await snapshot(), await snapshot()];

    const sse = createSseClient({ url: platform.stack.gateway.graphqlUrl, singleConnection: false, retryAttempts: 0 });
    const after = collector<Delivered>('passportSnapshots');
    const dispose = sse.subscribe({ query: SNAPSHOTS, variables: { id: passportId, after: last } }, after.sink);
    try {
      await after.until(2);
      const live = await snapshot();
      await after.until(3);
      await settle();
      expect(after.items.map((item) => item.snapshot.id)).toEqual([...missed, live]);
      expect(after.errors).toEqual([]);
    } finally {
      dispose();
      sse.dispose();
    }
  });
});
