/**
 * Snapshot creation on a real database with the gathered content stood in for (the issuer's
 * `passport` query is not needed): what is stored is a valid bag, notarized over exactly the stored
 * bytes; every failure leaves nothing behind.
 */
import { sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import * as jose from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { canonicalize } from '../../lib/crypto/jcs.js';
import { ProblemError } from '../../lib/problem.js';
import { rechunk, StoredBytesCorrupt, type SnapshotRecord } from '../../subgraphs/archive/data/snapshot-repository.js';
import { GATHER_QUERY } from '../../subgraphs/archive/service/gather.js';
import { createTestDatabase, sql } from '../support/database.js';
import { bagFromTar, parseBagInfo, validateBag } from './support/bagit-check.js';
import { openArchive, PLATFORM, stubGateway, type ArchiveParts, type StubGateway } from './support/harness.js';
import { syntheticPassport } from './support/synthetic-passport.js';

let databaseUrl: string;
let gateway: StubGateway;
let archive: ArchiveParts;
/** A small chunk size, so that even modest passports span many chunks. */
const CHUNK = 16 * 1024;

beforeAll(async () => {
  databaseUrl = await createTestDatabase();
  gateway = stubGateway([syntheticPassport(40, { passportId: 'pp-small' }), syntheticPassport(2_000, { passportId: 'pp-large', withPack: false })]);
  archive = await openArchive(databaseUrl, gateway, { chunkSize: CHUNK });
});
afterAll(() => archive?.close());
beforeEach(() => {
  gateway.requests.length = 0;
  gateway.failWith(undefined);
});

const counts = async () => {
  const { rows } = await sql<{ snapshots: string; chunks: string }>(
    databaseUrl,
    'SELECT (SELECT count(*) FROM archive.snapshot) AS snapshots, (SELECT count(*) FROM archive.snapshot_chunk) AS chunks',
  );
  return { snapshots: Number(rows[0]!.snapshots), chunks: Number(rows[0]!.chunks) };
};

/** The stored bytes, read straight from the table. */
async function storedBytes(id: string): Promise<Buffer> {
  const { rows } = await sql<{ bytes: Buffer }>(databaseUrl, 'SELECT bytes FROM archive.snapshot_chunk WHERE snapshot_id = $1 ORDER BY seq', [id]);
  return Buffer.concat(rows.map((row) => row.bytes));
}

/** Verifies signed JSON with jose against a JWK Set, independently of lib/crypto. */
async function verifyWithJose(document: Record<string, unknown>, keys: jose.JWK[]) {
  const { signature, ...claims } = document;
  const [protectedHeader, , encodedSignature] = String(signature).split('.');
  const header = jose.decodeProtectedHeader(String(signature));
  const jwk = keys.find((key) => key.kid === header.kid);
  if (!jwk) throw new Error(`no key ${header.kid}`);
  return jose.flattenedVerify({ protected: protectedHeader!, payload: Buffer.from(canonicalize(claims)).toString('base64url'), signature: encodedSignature! }, await jose.importJWK(jwk, 'Ed25519'));
}

async function expectProblem(promise: Promise<unknown>, status: number, code: string) {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error, `expected a ${status} ${code} problem`).toBeInstanceOf(ProblemError);
  expect((error as ProblemError).problem).toMatchObject({ status, code });
}

describe('taking a snapshot', () => {
  let snapshot: SnapshotRecord;

  beforeAll(async () => {
    snapshot = await archive.service.create('pp-large', PLATFORM);
  });

  it('gathers the passport in one request: the contract query, with the passport id', async () => {
    await archive.service.create('pp-small', PLATFORM);
    expect(gateway.requests).toEqual([{ query: GATHER_QUERY, variables: { id: 'pp-small' } }]);
  });

  it('stores bytes that are a valid BagIt bag holding the gathered content, checked by an independent validator', async () => {
    const bytes = await storedBytes(snapshot.id);
    expect(bytes.length).toBe(snapshot.size);
    expect(snapshot.chunkCount).toBe(Math.ceil(snapshot.size / CHUNK));
    expect(snapshot.chunkCount).toBeGreaterThan(10);
    const { name, bag } = bagFromTar(bytes);
    expect(name).toBe(snapshot.id);
    expect(validateBag(bag)).toEqual([]);
    const content = gateway.passports.get('pp-large')!;
    expect(new TextDecoder().decode(bag.files.get('data/passport/core.json'))).toBe(canonicalize(content.core));
    const events = new TextDecoder().decode(bag.files.get('data/passport/events.jsonl')).split('\n');
    expect(events).toHaveLength(2_001);
    expect(events[1_999]).toBe(canonicalize(content.events[1_999]));
    expect(bag.files.has('data/passport/pack.txt')).toBe(false);
    const info = parseBagInfo(bag.files.get('bag-info.txt')!);
    expect(info.get('External-Identifier')).toEqual(['pp-large']);
    expect(info.get('Internal-Sender-Identifier')).toEqual([snapshot.id]);
    expect(info.get('Bagging-Date')).toEqual([snapshot.createdAt.toISOString().slice(0, 10)]);
  });

  it('notarizes exactly the stored bytes with the notary key, verifiable with jose', async () => {
    const bytes = await storedBytes(snapshot.id);
    const notarization = snapshot.notarization as Record<string, unknown>;
    expect(notarization).toMatchObject({
      snapshot_id: snapshot.id,
      passport_id: 'pp-large',
      bag_sha512: bytesToHex(sha512(bytes)),
      bag_size: bytes.length,
      tagmanifest_sha512: bytesToHex(sha512(bagFromTar(bytes).bag.files.get('tagmanifest-sha512.txt')!)),
    });
    expect(snapshot.sha512).toBe(bytesToHex(sha512(bytes)));
    const keyring = archive.kernel.keys.keyring();
    const notaryKid = archive.kernel.keys.signer('notary').kid;
    expect(snapshot.notaryKid).toBe(notaryKid);
    const verified = await verifyWithJose(notarization, keyring.keys as jose.JWK[]);
    expect(verified.protectedHeader?.kid).toBe(notaryKid);
    await expect(verifyWithJose({ ...notarization, bag_size: bytes.length + 1 }, keyring.keys as jose.JWK[])).rejects.toThrow();
  });

  it('gives concurrent snapshots of one passport distinct ids and complete bytes each', async () => {
    const made = await Promise.all([1, 2, 3, 4].map(() => archive.service.create('pp-small', PLATFORM)));
    expect(new Set(made.map((record) => record.id)).size).toBe(4);
    for (const record of made) {
      const bytes = await storedBytes(record.id);
      expect(bytesToHex(sha512(bytes))).toBe(record.sha512);
      expect(validateBag(bagFromTar(bytes).bag)).toEqual([]);
    }
  });
});

describe('a snapshot that cannot be taken leaves nothing behind', () => {
  it('refuses a passport the issuer does not know (422)', async () => {
    const before = await counts();
    await expectProblem(archive.service.create('pp-unknown', PLATFORM), 422, 'UNKNOWN_PASSPORT');
    expect(await counts()).toEqual(before);
  });

  it('treats an issuer answering 404 like an unknown passport', async () => {
    gateway.failWith(new ProblemError(404, 'NOT_FOUND', 'no such passport'));
    await expectProblem(archive.service.create('pp-small', PLATFORM), 422, 'UNKNOWN_PASSPORT');
  });

  it('passes a problem with the request and an unavailable service on, and reports a failing graph as 502', async () => {
    const before = await counts();
    gateway.failWith(new ProblemError(400, 'INVALID_ID', 'not a passport id'));
    await expectProblem(archive.service.create('pp-small', PLATFORM), 400, 'INVALID_ID');
    gateway.failWith(new ProblemError(503, 'GATEWAY_UNAVAILABLE', 'The GraphQL gateway does not answer.'));
    await expectProblem(archive.service.create('pp-small', PLATFORM), 503, 'GATEWAY_UNAVAILABLE');
    gateway.failWith(new ProblemError(500, 'INTERNAL_SERVER_ERROR', 'Internal error in the issuer.'));
    await expectProblem(archive.service.create('pp-small', PLATFORM), 502, 'GATHER_FAILED');
    gateway.failWith(new Error('gateway request failed: Cannot query field "passport" on type "Query".'));
    await expectProblem(archive.service.create('pp-small', PLATFORM), 502, 'GATHER_FAILED');
    expect(await counts()).toEqual(before);
  });

  it('refuses ids that cannot be passport ids without asking the graph (400)', async () => {
    for (const id of ['', ' pp-small', 'pp\nsmall', 'x'.repeat(201), 'pp\u0000']) {
      await expectProblem(archive.service.create(id, PLATFORM), 400, 'INVALID_PASSPORT_ID');
    }
    expect(gateway.requests).toEqual([]);
  });

  it('reports content the graph answered but that cannot be bagged as 502', async () => {
    const broken = { ...syntheticPassport(3, { passportId: 'pp-broken' }), core: ['not', 'an', 'object'] };
    gateway.passports.set('pp-broken', broken as never);
    const before = await counts();
    await expectProblem(archive.service.create('pp-broken', PLATFORM), 502, 'UNARCHIVABLE_CONTENT');
    expect(await counts()).toEqual(before);
  });

  it('rolls back the chunks already written when the bytes fail halfway or the seal fails', async () => {
    const before = await counts();
    async function* failingHalfway() {
      for (let index = 0; index < 5; index += 1) yield new Uint8Array(CHUNK).fill(index);
      throw new Error('source failed');
    }
    await expect(archive.repository.create('snap-halfway', failingHalfway(), () => ({}) as never)).rejects.toThrow('source failed');
    async function* fine() {
      yield new Uint8Array(3 * CHUNK);
    }
    await expect(
      archive.repository.create('snap-unsealed', fine(), () => {
        throw new Error('seal failed');
      }),
    ).rejects.toThrow('seal failed');
    expect(await counts()).toEqual(before);
  });
});

describe('stored bytes', () => {
  it('are read back chunk by chunk, and a changed or missing chunk is reported, not served', async () => {
    const record = await archive.service.create('pp-small', PLATFORM);
    const chunks = await archive.repository.chunks(record, 0, record.chunkCount);
    expect(Buffer.concat(chunks)).toEqual(await storedBytes(record.id));
    expect(await archive.repository.chunks(record, record.chunkCount, 4)).toEqual([]);

    await sql(databaseUrl, `UPDATE archive.snapshot_chunk SET bytes = set_byte(bytes, 100, get_byte(bytes, 100) # 1) WHERE snapshot_id = $1 AND seq = 1`, [record.id]);
    await expect(archive.repository.chunks(record, 0, 2)).rejects.toThrow(StoredBytesCorrupt);
    expect(await archive.repository.chunks(record, 0, 1)).toHaveLength(1);
    await sql(databaseUrl, 'DELETE FROM archive.snapshot_chunk WHERE snapshot_id = $1 AND seq = 2', [record.id]);
    await expect(archive.repository.chunks(record, 2, 1)).rejects.toThrow(/chunk 2 .* is missing/);
  });

  it('are regrouped into chunks of exactly the chunk size, the last one shorter', async () => {
    async function* pieces() {
      for (const length of [1, 7, 30, 0, 5, 64]) yield new Uint8Array(length).fill(length);
    }
    const chunks: Uint8Array[] = [];
    for await (const chunk of rechunk(pieces(), 16)) chunks.push(chunk);
    expect(chunks.map((chunk) => chunk.length)).toEqual([16, 16, 16, 16, 16, 16, 11]);
    const expected = Buffer.concat([1, 7, 30, 0, 5, 64].map((length) => Buffer.alloc(length, length)));
    expect(Buffer.concat(chunks)).toEqual(expected);
  });
});
