/**
 * What the status-change feed costs the issuer, counted in SQL statements (the stack's own counts):
 * a page of changes reads its passports in one query however many there are (the issuer's passport
 * loader batches the `passport` of every change), and a subscription to a set of passports is woken
 * by their status changes only, not by every event of theirs.
 */
import { createClient as createSseClient } from 'graphql-sse';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendEvent, createModel, createPassport, PAYLOADS } from '../issuer/support.js';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';
import { collector, settle } from './live-support.js';

const MODEL = 'battery-live-work';
let platform: SharedTestStack;

beforeAll(async () => {
  platform = await sharedTestStack();
  await createModel(platform, MODEL);
}, 180_000);

async function append(passportId: string, type: string): Promise<void> {
  const appended = await appendEvent(platform, passportId, type, PAYLOADS[type]!());
  expect(appended.status, JSON.stringify(appended.body)).toBe(201);
}

/** Activated passports of the default operator. */
async function activePassports(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const id = (await createPassport(platform, MODEL)).passport_id;
    await append(id, 'activated');
    ids.push(id);
  }
  return ids;
}

/** The issuer's SQL statements while `drive` runs. */
async function issuerStatements(drive: () => Promise<unknown>): Promise<number> {
  const before = platform.stack.sqlStatements().issuer;
  await drive();
  return platform.stack.sqlStatements().issuer - before;
}

/**
 * The fewest of the issuer's statements over runs of `drive`, until it is `atMost` or `runs` are
 * made: work of the stack's other users (files before this one on the worker's shared stack: a
 * refusal log's window written at its end, a feed they left) can add a statement to one run, never
 * take one away, while a cost of `drive`'s own is in every run.
 */
async function fewestIssuerStatements(drive: () => Promise<unknown>, atMost = 0, runs = 3): Promise<number> {
  let fewest = Number.POSITIVE_INFINITY;
  for (let run = 0; run < runs && fewest > atMost; run += 1) fewest = Math.min(fewest, await issuerStatements(drive));
  return fewest;
}

describe('the status-change feed', () => {
  it("reads a page's passports in one query: as many statements for 6 changes as for 2", async () => {
    const ids = await activePassports(6);
    // The reads their activations wake (any subscriber to every passport's changes) end before counting.
    await settle();
    const read = (passportIds: string[]) =>
      fetch(platform.stack.gateway.graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: 'query($ids: [ID!]) { passportStatusChangesAfter(passportIds: $ids, first: 100) { nodes { passportId passport { id status } } } }',
          variables: { ids: passportIds },
        }),
      }).then(async (response) => (await response.json()) as { data: { passportStatusChangesAfter: { nodes: { passport: { id: string; status: string } }[] } } });
    let two: Awaited<ReturnType<typeof read>> | undefined;
    let six: Awaited<ReturnType<typeof read>> | undefined;
    const forTwo = await fewestIssuerStatements(async () => (two = await read(ids.slice(0, 2))), 0, 2);
    const forSix = await fewestIssuerStatements(async () => (six = await read(ids)), forTwo);
    expect(two!.data.passportStatusChangesAfter.nodes).toHaveLength(2);
    expect(six!.data.passportStatusChangesAfter.nodes.map(({ passport }) => passport)).toEqual(ids.map((id) => ({ id, status: 'active' })));
    expect(forSix).toBe(forTwo);
  });

  it('a subscription to a set of passports is woken by their status changes, not by their other events: appends cost the issuer what they cost unwatched', async () => {
    const [watched] = await activePassports(1);
    // The reads its activation wakes (any subscriber to every passport's changes) end before counting.
    await settle();
    const events = (count: number) => async () => {
      for (let index = 0; index < count; index += 1) await append(watched!, 'ObjectEvent');
      // Time for the reads a wake would make.
      await settle();
    };
    const unwatched = await fewestIssuerStatements(events(4), 0, 2);

    const got = collector<{ passportId: string; to: string }>('passportStatusChanges');
    const client = createSseClient({ url: platform.stack.gateway.graphqlUrl, singleConnection: false, retryAttempts: 0 });
    const dispose = client.subscribe({ query: 'subscription($ids: [ID!]) { passportStatusChanges(passportIds: $ids) { passportId to } }', variables: { ids: [watched] } }, got.sink);
    try {
      // The replay: its activation.
      await got.until(1);
      await settle();
      const whileWatched = await fewestIssuerStatements(events(4), unwatched);
      expect(whileWatched).toBe(unwatched);
      // Its status changes still wake it.
      await append(watched!, 'suspended');
      await got.until(2);
      expect(got.items.map(({ to }) => to)).toEqual(['active', 'suspended']);
    } finally {
      dispose();
      client.dispose();
    }
  });
});
