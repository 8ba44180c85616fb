/**
 * GET /issuer/passports/{id}/events as an event stream, as a REST client meets it: an EventSource
 * gets the log and then each event appended through REST; a client that lost the stream sends its
 * last id as Last-Event-ID and gets exactly what it missed; the refusals are problems; the route is in
 * the issuer's OpenAPI document.
 */
import { EventSource } from 'eventsource';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';
import { appendEvent, createModel, createPassport, PAYLOADS } from './support.js';

const MODEL = 'battery-event-stream';
let platform: SharedTestStack;
let passportId = '';

beforeAll(async () => {
  platform = await sharedTestStack();
  await createModel(platform, MODEL);
  passportId = (await createPassport(platform, MODEL)).passport_id;
  await append(2);
}, 120_000);

async function append(count: number): Promise<void> {
  for (let index = 0; index < count; index += 1) {
    const appended = await appendEvent(platform, passportId, 'ObjectEvent', PAYLOADS.ObjectEvent!());
    expect(appended.status, JSON.stringify(appended.body)).toBe(201);
  }
}

const eventsUrl = () => `${platform.base('issuer')}/passports/${passportId}/events`;

/** Reads an event stream with fetch until `count` events came: their ids and data. */
async function readStream(
  headers: Record<string, string>,
  count: number,
  url = eventsUrl(),
): Promise<{ status: number; type: string | null; events: { id: string; data: any }[]; retry: string | undefined }> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const events: { id: string; data: any }[] = [];
  let retry: string | undefined;
  let text = '';
  const decoder = new TextDecoder();
  const timer = setTimeout(() => controller.abort(), 15_000);
  try {
    for await (const chunk of response.body!) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      let end: number;
      while ((end = text.indexOf('\n\n')) >= 0) {
        const block = text.slice(0, end);
        text = text.slice(end + 2);
        const fields = Object.fromEntries(block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]));
        if (fields.retry) retry = fields.retry;
        if (fields.data !== undefined) events.push({ id: fields.id!, data: JSON.parse(fields.data) });
      }
      if (events.length >= count) break;
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return { status: response.status, type: response.headers.get('content-type'), events, retry };
}

describe('GET /passports/{id}/events as Server-Sent Events', () => {
  it('streams the log, then each event appended, to an EventSource', async () => {
    const source = new EventSource(eventsUrl());
    const got: { id: string; data: any }[] = [];
    try {
      const arrived = (count: number) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`${got.length} of ${count} events`)), 15_000);
          const check = () => {
            if (got.length < count) return;
            clearTimeout(timer);
            resolve();
          };
          source.onmessage = (event) => {
            got.push({ id: event.lastEventId, data: JSON.parse(event.data) });
            check();
          };
          check();
        });
      await arrived(2);
      await append(1);
      await arrived(3);
      expect(got.map(({ id, data }) => [id, data.seq, data.type, data.passport_id])).toEqual([
        ['0', 0, 'ObjectEvent', passportId],
        ['1', 1, 'ObjectEvent', passportId],
        ['2', 2, 'ObjectEvent', passportId],
      ]);
      expect(got[2]!.data.signature).toMatch(/^[\w-]+\.\.[\w-]+$/);
    } finally {
      source.close();
    }
  });

  it('resumes after Last-Event-ID with exactly the events missed, and says when to reconnect', async () => {
    const { logSize } = (await platform.graphql('query($id: ID!) { passport(id: $id) { logSize } }', { id: passportId })).data.passport;
    const first = await readStream({}, logSize);
    expect(first).toMatchObject({ status: 200, type: 'text/event-stream', retry: '1000' });
    const last = first.events.at(-1)!.id;
    await append(2);
    const resumed = await readStream({ 'last-event-id': last }, 2);
    expect(resumed.events.map(({ id, data }) => [id, data.seq])).toEqual([
      [String(logSize), logSize],
      [String(logSize + 1), logSize + 1],
    ]);
    // A first connection may start after a cursor too.
    const after = await readStream({}, 1, `${eventsUrl()}?after=${logSize}`);
    expect(after.events.map(({ id }) => id)).toEqual([String(logSize + 1)]);
  });

  it('refuses another Accept 406, an unknown passport 404 and a bad cursor 400, as problems', async () => {
    const json = await platform.rest('issuer', `/passports/${passportId}/events`, { headers: { accept: 'application/json' } });
    expect([json.status, json.headers.get('content-type'), json.body.code]).toEqual([406, 'application/problem+json', 'NOT_ACCEPTABLE']);
    const unknown = await platform.rest('issuer', '/passports/no-such-passport/events', { headers: { accept: 'text/event-stream' } });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'NOT_FOUND']);
    const badCursor = await platform.rest('issuer', `/passports/${passportId}/events`, { headers: { accept: 'text/event-stream', 'last-event-id': 'abc' } });
    expect([badCursor.status, badCursor.body.code]).toEqual([400, 'INVALID_CURSOR']);
  });

  it("is in the issuer's OpenAPI document as an event stream", async () => {
    const openapi = (await (await fetch(`${platform.stack.facade.url}/docs/issuer/openapi.json`)).json()) as any;
    const get = openapi.paths['/passports/{id}/events'].get;
    expect(Object.keys(get.responses['200'].content)).toEqual(['text/event-stream']);
    expect(get.responses['406']).toBeDefined();
    expect(get.summary).toMatch(/Last-Event-ID/);
  });
});
