/**
 * Snapshots of real passports, end to end: a passport is created and given events through the
 * issuer's REST interface, snapshotted with POST /snapshots (the archive gathers it through the
 * gateway in one request), fetched three times and again after a restart of the whole stack,
 * checked by an independent BagIt validator, verified by following the recipe, and tampered with.
 *
 * It needs the issuer's `passport(id)`, the trust service's `trustAnchorBundle` (CONTRACTS.md) and
 * the issuer's and registry's REST paths. When they are missing, the first hook fails with what is
 * missing: nothing here is skipped.
 */
import { sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize } from '../../lib/crypto/jcs.js';
import type { NotarizationRecipe } from '../../subgraphs/archive/domain/index.js';
import { GATHER_QUERY } from '../../subgraphs/archive/service/gather.js';
import { sql } from '../support/database.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { bagFromTar, validateBag } from './support/bagit-check.js';
import { issuePassport, registryModel, type IssuedPassport, type RestCaller } from './support/issuer-fixture.js';
import { followRecipe } from './support/recipe.js';

let platform: TestStack;
let rest: RestCaller;
let passport: IssuedPassport;
let created: { status: number; headers: Headers; body: any };

beforeAll(async () => {
  platform = await startTestStack();
  rest = (service, path, init) => platform.rest(service, path, init);
  const probe = await platform.graphql(GATHER_QUERY, { id: 'probe-of-the-contract' });
  if (probe.errors?.length) {
    throw new Error(`The graph does not answer the archive's gather query; this test needs the issuer's passport(id) and the trust service's trustAnchorBundle: ${JSON.stringify(probe.errors)}`);
  }
  expect(probe.data.passport).toBeNull();
  const model = await registryModel(rest);
  passport = await issuePassport(rest, { traceEvents: 30, serial: `ARCHIVE-E2E-${process.pid}`, pack: true, model });
  created = await platform.rest('archive', '/snapshots', { as: 'writer', body: { passport_id: passport.id } });
}, 180_000);
afterAll(() => platform?.stop());

async function fetchArchive(url: string) {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

async function snapshotCount(): Promise<number> {
  const { rows } = await sql<{ count: string }>(platform.databaseUrl, 'SELECT count(*) FROM archive.snapshot');
  return Number(rows[0]!.count);
}

describe('POST /snapshots of an issued passport', () => {
  it('answers 201 with the snapshot, its location and its notarization', () => {
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.headers.get('location')).toBe(`${platform.base('archive')}/snapshots/${created.body.id}`);
    expect(created.body).toMatchObject({ passport_id: passport.id, media_type: 'application/x-tar' });
    expect(created.body.notarization).toMatchObject({ snapshot_id: created.body.id, passport_id: passport.id, bag_sha512: created.body.sha512, bag_size: created.body.size });
  });

  it('serves the same bytes three times, with the SHA-512 notarized at creation', async () => {
    const hashes = [];
    for (let fetchNumber = 0; fetchNumber < 3; fetchNumber += 1) {
      const { status, headers, bytes } = await fetchArchive(created.headers.get('location')!);
      expect(status).toBe(200);
      expect(headers.get('etag')).toBe(`"${created.body.sha512}"`);
      hashes.push(bytesToHex(sha512(bytes)));
    }
    expect(hashes).toEqual([created.body.sha512, created.body.sha512, created.body.sha512]);
  });

  it('holds the passport as the issuer serves it, in a bag an independent validator accepts', async () => {
    const { bytes } = await fetchArchive(created.headers.get('location')!);
    const { name, bag } = bagFromTar(bytes);
    expect(name).toBe(created.body.id);
    expect(validateBag(bag)).toEqual([]);
    const text = (path: string) => new TextDecoder().decode(bag.files.get(path));
    const issued = await platform.rest('issuer', `/passports/${encodeURIComponent(passport.id)}`);
    expect(issued.status).toBe(200);
    expect(text('data/passport/core.json')).toBe(canonicalize(issued.body.core));
    expect(text('data/passport/events.jsonl').split('\n').filter(Boolean)).toHaveLength(passport.events);
    expect(bag.files.has('data/passport/pack.txt')).toBe(true);
    expect(JSON.parse(text('data/keys/issuer-keyring.json'))).toEqual((await platform.rest('issuer', '/keyring')).body);
    expect(JSON.parse(text('data/keys/trust-keyring.json'))).toEqual((await platform.rest('trust', '/keyring')).body);
  });

  it('is verified by following the recipe of the discovery document literally', async () => {
    const recipe = (await platform.rest('archive', '/')).body.notarization_recipe as NotarizationRecipe;
    const outcome = await followRecipe(recipe, { id: created.body.id, notaryKid: created.body.notary_kid });
    expect(outcome.failedStep, outcome.output).toBeUndefined();
    expect(outcome.output).toContain(`verified: snapshot ${created.body.id} of passport ${passport.id}`);
  });

  it('is listed under its passport', async () => {
    const listed = await platform.rest('archive', `/snapshots?passport_id=${encodeURIComponent(passport.id)}`);
    expect(listed.body.snapshots.map((snapshot: { id: string }) => snapshot.id)).toEqual([created.body.id]);
  });

  it('shows a flipped byte to the BagIt check and to the notarized digest', async () => {
    const { bytes } = await fetchArchive(created.headers.get('location')!);
    const copy = Buffer.from(bytes);
    copy[copy.indexOf('"type":"ObjectEvent"')]! ^= 0x01;
    expect(validateBag(bagFromTar(copy).bag)).toEqual(['data/passport/events.jsonl does not match its digest in manifest-sha512.txt']);
    expect(bytesToHex(sha512(copy))).not.toBe(created.body.notarization.bag_sha512);
  });

  it('refuses a passport the issuer does not know with 422, storing nothing, and logs both attempts', async () => {
    const before = await snapshotCount();
    const unknown = await platform.rest('archive', '/snapshots', { as: 'writer', body: { passport_id: 'no-such-passport' } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.code).toBe('UNKNOWN_PASSPORT');
    expect(await snapshotCount()).toBe(before);
    const log = await platform.rest('archive', '/admin/log', { as: 'admin' });
    expect(log.body.entries.slice(0, 2)).toMatchObject([
      { action: 'createSnapshot', target: 'no-such-passport', outcome: 'UNKNOWN_PASSPORT' },
      { action: 'createSnapshot', target: passport.id, outcome: 'ok' },
    ]);
  });

  it('serves the same bytes after a restart of the whole stack', async () => {
    await platform.restart();
    const { status, bytes } = await fetchArchive(`${platform.base('archive')}/snapshots/${created.body.id}`);
    expect(status).toBe(200);
    expect(bytesToHex(sha512(bytes))).toBe(created.body.sha512);
  });
});
