/**
 * Content codings as HTTP clients use them: answers compressed with gzip or brotli for a client that
 * accepts them (JSON, OpenAPI, GraphQL answers), sent as they are when small or already packed (an
 * archive package stays byte for byte what its Content-Digest names); request bodies sent gzip-,
 * deflate- or brotli-encoded taken by the facade and the gateway; and a compression bomb refused 413
 * once a body limit of it is decoded, not after inflating it all.
 */
import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import { brotliCompressSync, brotliDecompressSync, deflateSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openArchive, PLATFORM, stubGateway, type ArchiveParts } from '../archive/support/harness.js';
import { syntheticPassport } from '../archive/support/synthetic-passport.js';
import { sharedTestStack, TOKENS, type SharedTestStack } from '../support/stack.js';

let platform: SharedTestStack;
let archive: ArchiveParts;
let snapshotId: string;
beforeAll(async () => {
  platform = await sharedTestStack();
  archive = await openArchive(platform.databaseUrl, stubGateway([syntheticPassport(40, { passportId: 'pp-compression' })]));
  snapshotId = (await archive.service.create('pp-compression', PLATFORM)).id;
  // A list of some size: items with labels as long as a product's name and description.
  for (let index = 0; index < 12; index += 1) {
    const label = `Battery pack ${index}, 48 V, 100 Ah, lithium iron phosphate; for stationary storage in homes and small businesses`;
    expect((await platform.rest('registry', '/', { body: { kind: 'item', id: `compressed-list-${index}`, body: { label } }, as: 'writer' })).status).toBe(201);
  }
}, 120_000);
afterAll(async () => {
  await archive?.close();
});

interface Exchanged {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as it came over the wire, not decoded. */
  body: Buffer;
}

/** One request over node:http, which decodes nothing: the answer's bytes as sent. */
function exchange(url: string, init: { method?: string; headers?: Record<string, string>; body?: Buffer } = {}): Promise<Exchanged> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: init.method ?? 'GET', headers: { ...init.headers, ...(init.body ? { 'content-length': String(init.body.length) } : {}) } }, (response) => {
      const pieces: Buffer[] = [];
      response.on('data', (piece: Buffer) => pieces.push(piece));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(pieces) }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(init.body);
  });
}

const DECODE: Record<string, (body: Buffer) => Buffer> = { gzip: gunzipSync, br: brotliDecompressSync };
const json = (body: Buffer) => JSON.parse(body.toString('utf8'));

describe('answers', () => {
  const INTROSPECTION = JSON.stringify({ query: '{ __schema { types { name kind fields { name } } } }' });
  const answers = () => [
    { what: 'an OpenAPI document', url: `${platform.stack.facade.url}/docs/registry/openapi.json`, init: {} },
    { what: 'a list of records', url: `${platform.base('registry')}/items`, init: {} },
    { what: 'a GraphQL answer', url: platform.stack.gateway.graphqlUrl, init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from(INTROSPECTION) } },
  ];

  it('are compressed with the coding the client accepts, and decode to what an identity answer says', async () => {
    for (const { what, url, init } of answers()) {
      const plain = await exchange(url, init);
      expect({ what, status: plain.status, coding: plain.headers['content-encoding'] }).toEqual({ what, status: 200, coding: undefined });
      for (const [accept, coding] of [
        ['gzip, deflate, br', 'gzip'],
        ['br', 'br'],
        ['gzip;q=0.5, br', 'br'],
      ] as const) {
        const compressed = await exchange(url, { ...init, headers: { ...init.headers, 'accept-encoding': accept } });
        expect({ what, accept, coding: compressed.headers['content-encoding'], vary: compressed.headers.vary }).toEqual({ what, accept, coding, vary: expect.stringMatching(/accept-encoding/i) });
        expect(compressed.body.length).toBeLessThan(plain.body.length / 2);
        expect(json(DECODE[coding]!(compressed.body))).toEqual(json(plain.body));
      }
    }
  });

  it('are sent as they are when small, or when the client accepts no coding', async () => {
    const small = await exchange(`${platform.stack.gateway.url}/livez`, { headers: { 'accept-encoding': 'gzip, br' } });
    expect([small.status, small.headers['content-encoding'], json(small.body)]).toEqual([200, undefined, { status: 'live' }]);
    const identity = await exchange(`${platform.base('registry')}/items`, { headers: { 'accept-encoding': 'identity' } });
    expect(identity.headers['content-encoding']).toBeUndefined();
  });

  it('leave an archive package byte for byte what its Content-Digest names', async () => {
    const url = `${platform.base('archive')}/snapshots/${snapshotId}`;
    const plain = await exchange(url);
    const offered = await exchange(url, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect([plain.status, offered.status, offered.headers['content-encoding']]).toEqual([200, 200, undefined]);
    expect(offered.body.equals(plain.body)).toBe(true);
    expect(offered.headers['content-digest']).toBe(`sha-512=:${createHash('sha512').update(offered.body).digest('base64')}:`);
  });
});

describe('request bodies', () => {
  const createItem = (body: Buffer, coding: string) =>
    exchange(`${platform.base('registry')}/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS.writer}`, 'content-type': 'application/json', 'content-encoding': coding },
      body,
    });
  const item = (id: string) => Buffer.from(JSON.stringify({ kind: 'item', id, body: { label: `sent ${id}` } }));

  it('are taken gzip-, deflate- or brotli-encoded by the facade and the gateway', async () => {
    for (const [coding, encode] of [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
    ] as const) {
      const created = await createItem(encode(item(`encoded-${coding}`)), coding);
      expect({ coding, status: created.status, id: json(created.body).id }).toEqual({ coding, status: 201, id: `encoded-${coding}` });
      const queried = await exchange(platform.stack.gateway.graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': coding },
        body: encode(Buffer.from(JSON.stringify({ query: `{ registryRecord(kind: "item", id: "encoded-${coding}") { id } }` }))),
      });
      expect({ coding, status: queried.status, data: json(queried.body).data }).toEqual({ coding, status: 200, data: { registryRecord: { id: `encoded-${coding}` } } });
    }
  });

  it('in a coding not taken are refused 415 naming the codings taken; one that does not decode, 400; nothing is made', async () => {
    const unknown = await createItem(item('encoded-zstd'), 'zstd');
    expect([unknown.status, unknown.headers['content-type'], unknown.headers['accept-encoding'], json(unknown.body).code]).toEqual([
      415,
      'application/problem+json',
      'gzip, deflate, br',
      'UNSUPPORTED_CONTENT_ENCODING',
    ]);
    const broken = await createItem(item('encoded-broken'), 'gzip');
    expect([broken.status, json(broken.body).code]).toEqual([400, 'MALFORMED_CONTENT_ENCODING']);
    const atGateway = await exchange(platform.stack.gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: Buffer.from('{}') });
    expect([atGateway.status, json(atGateway.body).errors[0].extensions.code]).toEqual([400, 'MALFORMED_CONTENT_ENCODING']);
    for (const id of ['encoded-zstd', 'encoded-broken']) expect((await platform.rest('registry', `/items/${id}`)).status).toBe(404);
  });

  it('that inflate past the body limit (a compression bomb) are refused 413 once the limit is decoded, not after inflating it all', async () => {
    // 10 gzip members of 10 MB of zeros each: 100 MB decoded from 100 KB sent.
    const member = gzipSync(Buffer.alloc(10_000_000));
    const bomb = Buffer.concat(Array.from({ length: 10 }, () => member));
    expect(bomb.length).toBeLessThan(128 * 1024);
    let started = process.cpuUsage();
    gunzipSync(bomb);
    const inflatingAll = process.cpuUsage(started);

    started = process.cpuUsage();
    const atFacade = await createItem(bomb, 'gzip');
    const atGateway = await exchange(platform.stack.gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: bomb });
    const refusing = process.cpuUsage(started);

    expect([atFacade.status, atFacade.headers['content-type'], json(atFacade.body).code]).toEqual([413, 'application/problem+json', 'BODY_TOO_LARGE']);
    expect([atGateway.status, json(atGateway.body).errors[0].extensions.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    // The stack runs in this process: both refusals together cost it less than inflating the bomb once
    // (measured: 0.09 CPU-s against 1.7 for a bomb twice this size; inflating it all at each door costs twice the bound).
    expect(refusing.user + refusing.system).toBeLessThan(inflatingAll.user + inflatingAll.system);
  });

  it('that are refused while still arriving leave a kept-alive connection usable for the next request', async () => {
    // The bomb's first 64 KB inflate past the limit; the rest, and 4 MB more than the socket buffers
    // hold, come after the 413 has been read, as over a slow link.
    const member = gzipSync(Buffer.alloc(10_000_000));
    const body = Buffer.concat([...Array.from({ length: 10 }, () => member), Buffer.alloc(4 * 1024 * 1024)]);
    const doors = [
      { door: 'facade', url: `${platform.base('registry')}/`, headers: { authorization: `Bearer ${TOKENS.writer}` }, next: `${platform.base('registry')}/items` },
      { door: 'gateway', url: platform.stack.gateway.graphqlUrl, headers: {}, next: `${platform.stack.gateway.url}/livez` },
    ];
    for (const { door, url, headers, next } of doors) {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const refused = await new Promise<{ status: number; port: number | undefined }>((resolve, reject) => {
          const outgoing = request(
            url,
            { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(body.length) } },
            (response) => {
              response.resume();
              response.on('end', () => outgoing.end(body.subarray(64 * 1024), () => resolve({ status: response.statusCode!, port: outgoing.socket?.localPort })));
            },
          );
          outgoing.on('error', reject);
          outgoing.write(body.subarray(0, 64 * 1024));
        });
        const answered = await new Promise<{ status: number; port: number | undefined }>((resolve, reject) => {
          const outgoing = request(next, { agent }, (response) => {
            response.resume();
            response.on('end', () => resolve({ status: response.statusCode!, port: outgoing.socket?.localPort }));
          });
          outgoing.on('error', reject);
          outgoing.end();
        });
        expect({ door, refused: refused.status, next: answered.status, sameConnection: answered.port === refused.port }).toEqual({ door, refused: 413, next: 200, sameConnection: true });
      } finally {
        agent.destroy();
      }
    }
  });
});
