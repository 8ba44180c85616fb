/**
 * POST /snapshots as in production — REST facade → gateway → archive subgraph, whose gather query
 * goes back through the gateway — with a stand-in subgraph serving the contract's issuer and trust
 * fields, so that creation is tested end to end before the issuer exists.
 */
import { sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize } from '../../lib/crypto/jcs.js';
import { createTestDatabase, sql } from '../support/database.js';
import { TOKENS, testAccessTokens } from '../support/stack.js';
import { bagFromTar, validateBag } from './support/bagit-check.js';
import { startStandInGraph, type StandInGraph } from './support/stand-in-graph.js';
import { syntheticPassport } from './support/synthetic-passport.js';

let databaseUrl: string;
let graph: StandInGraph;

beforeAll(async () => {
  databaseUrl = await createTestDatabase();
  graph = await startStandInGraph({
    databaseUrl,
    tokens: testAccessTokens(),
    passports: [syntheticPassport(60, { passportId: 'pp-real' }), syntheticPassport(10_000, { passportId: 'pp-long' })],
  });
});
afterAll(() => graph?.stop());

async function post(body: unknown, as: keyof typeof TOKENS | null = 'writer') {
  const response = await fetch(`${graph.archiveBase}/snapshots`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(as ? { authorization: `Bearer ${TOKENS[as]}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

async function counts() {
  const { rows } = await sql<{ snapshots: string; chunks: string }>(
    databaseUrl,
    'SELECT (SELECT count(*) FROM archive.snapshot) AS snapshots, (SELECT count(*) FROM archive.snapshot_chunk) AS chunks',
  );
  return { snapshots: Number(rows[0]!.snapshots), chunks: Number(rows[0]!.chunks) };
}

describe('POST /snapshots through the gateway', () => {
  it('gathers the passport in one request and answers 201 with location and notarization', async () => {
    const asked = graph.passportRequests();
    const created = await post({ passport_id: 'pp-real' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(graph.passportRequests()).toBe(asked + 1);
    expect(created.headers.get('location')).toBe(`${graph.archiveBase}/snapshots/${created.body.id}`);
    expect(created.body).toMatchObject({ passport_id: 'pp-real', media_type: 'application/x-tar', href: created.headers.get('location') });
    expect(created.body.notarization).toMatchObject({ snapshot_id: created.body.id, passport_id: 'pp-real', bag_sha512: created.body.sha512, bag_size: created.body.size });

    const response = await fetch(created.headers.get('location')!);
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytesToHex(sha512(bytes))).toBe(created.body.sha512);
    const { bag } = bagFromTar(bytes);
    expect(validateBag(bag)).toEqual([]);
    const content = graph.passports.get('pp-real')!;
    expect(new TextDecoder().decode(bag.files.get('data/passport/log-head.json'))).toBe(canonicalize(content.logHead));
    expect(new TextDecoder().decode(bag.files.get('data/keys/trust-anchor-bundle.json'))).toBe(canonicalize(content.keys.trustAnchorBundle));
    expect(new TextDecoder().decode(bag.files.get('data/passport/pack.txt'))).toBe(content.pack);
  });

  it('snapshots a 10,000-event passport, streamed back byte-identically', async () => {
    const created = await post({ passport_id: 'pp-long' });
    expect(created.status).toBe(201);
    expect(created.body.size).toBeGreaterThan(4 * 1024 * 1024);
    const response = await fetch(created.headers.get('location')!);
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.length).toBe(created.body.size);
    expect(bytesToHex(sha512(bytes))).toBe(created.body.sha512);
    expect(response.headers.get('content-digest')).toBe(`sha-512=:${Buffer.from(sha512(bytes)).toString('base64')}:`);
  });

  it('answers 422 for a passport the issuer does not know, storing nothing', async () => {
    const before = await counts();
    const unknown = await post({ passport_id: 'pp-nobody' });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toMatchObject({ code: 'UNKNOWN_PASSPORT', status: 422 });
    expect(await counts()).toEqual(before);
  });

  it('needs a writer token, and logs every attempt with its outcome', async () => {
    expect((await post({ passport_id: 'pp-real' }, null)).status).toBe(401);
    const log = await fetch(`${graph.archiveBase}/admin/log`, { headers: { authorization: `Bearer ${TOKENS.admin}` } });
    const entries = ((await log.json()) as { entries: { action: string; target: string; outcome: string; actor: string }[] }).entries;
    // The refused attempt too (DESIGN: every refused write is logged), under the operation it asked for.
    expect(entries.slice(0, 4)).toMatchObject([
      { action: 'createSnapshot', target: null, outcome: 'MISSING_TOKEN', actor: 'anonymous' },
      { action: 'createSnapshot', target: 'pp-nobody', outcome: 'UNKNOWN_PASSPORT', actor: 'test-writer' },
      { action: 'createSnapshot', target: 'pp-long', outcome: 'ok' },
      { action: 'createSnapshot', target: 'pp-real', outcome: 'ok' },
    ]);
  });
});
