import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ed25519PublicJwk, generateSecretKey, jwkThumbprint, publicKeyOf, rawKeySigner, type Signer } from '../../../lib/crypto/index.js';
import { buildBag, notarizationRecipe, notarize, oaisMapping, snapshotBag, type BagLocation, type NotarizationRecipe, type OaisPart } from '../../../subgraphs/archive/domain/index.js';
import { bagFromTar, parseBagInfo } from '../support/bagit-check.js';
import { syntheticPassport } from '../support/synthetic-passport.js';
import { newcomerEnv } from '../../support/environment.js';

const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'recipe-test-'));
const SNAPSHOT_ID = 'snap-0192';

function notary(): { signer: Signer; jwk: Record<string, unknown> } {
  const secret = generateSecretKey('Ed25519');
  const jwk = ed25519PublicJwk(publicKeyOf('Ed25519', secret));
  const kid = jwkThumbprint(jwk);
  return { signer: rawKeySigner('Ed25519', kid, secret), jwk: { ...jwk, kid, iat: 1_700_000_000 } };
}

async function notarizedSnapshot(signer: Signer, tamper?: (bytes: Uint8Array) => void) {
  const content = syntheticPassport(120);
  const { bytes, summary } = await buildBag(snapshotBag({ snapshotId: SNAPSHOT_ID, baggedAt: '2025-06-01T08:00:00Z', content, sourceOrganization: 'Archive', softwareAgent: 'test' }));
  tamper?.(bytes);
  const notarization = notarize(
    {
      snapshot_id: SNAPSHOT_ID,
      passport_id: content.passportId,
      // A tampered bag is notarized as it is, as a careless or dishonest notary would.
      bag_sha512: tamper ? bytesToHex(sha512(bytes)) : summary.sha512,
      bag_size: summary.size,
      notarized_at: '2025-06-01T08:00:01Z',
      tagmanifest_sha512: summary.tagmanifestSha512,
    },
    signer,
  );
  return { bytes, notarization };
}

/** What the archive would serve, from a local HTTP server the recipe's curl commands reach. */
const served: { tar?: Uint8Array; notarization?: unknown; keyring?: unknown } = {};
let server: Server;
let recipe: NotarizationRecipe;

beforeAll(async () => {
  server = createServer((request, response) => {
    const body =
      request.url === `/archive/snapshots/${SNAPSHOT_ID}`
        ? served.tar
        : request.url === `/archive/snapshots/${SNAPSHOT_ID}/notarization`
          ? JSON.stringify(served.notarization, null, 2)
          : request.url === '/archive/keyring'
            ? JSON.stringify(served.keyring)
            : undefined;
    response.writeHead(body === undefined ? 404 : 200).end(body);
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/archive`;
  recipe = notarizationRecipe({ snapshot: `${base}/snapshots/{id}`, notarization: `${base}/snapshots/{id}/notarization`, keyring: `${base}/keyring` });
});

afterAll(async () => {
  await new Promise((closed) => server.close(closed));
  rmSync(scratch, { recursive: true, force: true });
});

/** Follows the recipe literally in an empty directory; returns the step that failed, if any. */
async function followRecipe(pinnedKid: string): Promise<{ failedStep?: number; output: string[] }> {
  const directory = mkdtempSync(join(scratch, 'verifier-'));
  // The recipe's prerequisite "npm install jose@6", satisfied from this project's dependencies.
  symlinkSync(fileURLToPath(new URL('../../../node_modules', import.meta.url)), join(directory, 'node_modules'));
  const fill = (text: string) => text.replaceAll('{id}', SNAPSHOT_ID).replaceAll('{notary_kid}', pinnedKid);
  const output: string[] = [];
  for (const step of recipe.steps) {
    for (const file of step.files ?? []) writeFileSync(join(directory, file.name), fill(file.content));
    for (const command of step.run) {
      try {
        const { stdout } = await run('sh', ['-c', fill(command)], { cwd: directory, env: newcomerEnv({ LC_ALL: 'C' }) });
        output.push(stdout);
      } catch {
        return { failedStep: step.step, output };
      }
    }
  }
  return { output };
}

describe('notarization recipe', () => {
  it('is followed literally with curl, jq, sha512sum, tar and jose on a real snapshot, and succeeds', async () => {
    const { signer, jwk } = notary();
    const { bytes, notarization } = await notarizedSnapshot(signer);
    Object.assign(served, { tar: bytes, notarization, keyring: { keys: [jwk] } });
    const result = await followRecipe(signer.kid);
    expect(result.failedStep).toBeUndefined();
    expect(result.output.join('')).toContain(`verified: snapshot ${SNAPSHOT_ID}`);
    expect(result.output.join('')).toContain('snapshot.tar: OK');
    expect(result.output.join('')).toContain('data/passport/events.jsonl: OK');
  });

  it('stops at the digest check when the served bytes are not the notarized ones', async () => {
    const { signer, jwk } = notary();
    const { bytes, notarization } = await notarizedSnapshot(signer);
    const tampered = bytes.slice();
    tampered[Buffer.from(tampered).indexOf('"seq":60')]! ^= 0x01;
    Object.assign(served, { tar: tampered, notarization, keyring: { keys: [jwk] } });
    expect((await followRecipe(signer.kid)).failedStep).toBe(2);
  });

  it('stops at the signature check when the notary is not the pinned key', async () => {
    const pinned = notary();
    const impostor = notary();
    const { bytes, notarization } = await notarizedSnapshot(impostor.signer);
    Object.assign(served, { tar: bytes, notarization, keyring: { keys: [pinned.jwk, impostor.jwk] } });
    expect((await followRecipe(pinned.signer.kid)).failedStep).toBe(3);
  });

  it('stops at the signature check when a claim was altered', async () => {
    const { signer, jwk } = notary();
    const { bytes, notarization } = await notarizedSnapshot(signer);
    Object.assign(served, { tar: bytes, notarization: { ...notarization, notarized_at: '2020-01-01T00:00:00Z' }, keyring: { keys: [jwk] } });
    expect((await followRecipe(signer.kid)).failedStep).toBe(3);
  });

  it('stops at the payload check when the notary signed a bag whose payload does not match its manifest', async () => {
    const { signer, jwk } = notary();
    const { bytes, notarization } = await notarizedSnapshot(signer, (bag) => {
      bag[Buffer.from(bag).indexOf('"seq":60')]! ^= 0x01;
    });
    Object.assign(served, { tar: bytes, notarization, keyring: { keys: [jwk] } });
    expect((await followRecipe(signer.kid)).failedStep).toBe(7);
  });

  it('numbers its steps 1..n and gives each a check that can fail', () => {
    expect(recipe.steps.map((step) => step.step)).toEqual(recipe.steps.map((_, index) => index + 1));
    for (const step of recipe.steps) expect(step.run.length).toBeGreaterThan(0);
    expect(Object.keys(recipe.placeholders)).toEqual(['{id}', '{notary_kid}']);
  });
});

describe('OAIS mapping', () => {
  const parts = (): [string, OaisPart][] => {
    const mapping = oaisMapping();
    return [
      ['packaging', mapping.packaging],
      ['content_data_object', mapping.content_information.content_data_object],
      ['representation_information', mapping.content_information.representation_information],
      ...Object.entries(mapping.preservation_description_information),
      ['descriptive_information', mapping.descriptive_information],
    ];
  };

  it('covers content information and the five kinds of preservation description information', () => {
    expect(Object.keys(oaisMapping().preservation_description_information).sort()).toEqual(['access_rights', 'context', 'fixity', 'provenance', 'reference']);
    for (const [name, part] of parts()) {
      expect(part.description.length, name).toBeGreaterThan(20);
      expect(part.in_bag.length + (part.outside_bag?.length ?? 0), name).toBeGreaterThan(0);
    }
  });

  it('points only at files and bag-info elements that a snapshot bag really has, and misses none of its files', async () => {
    const { bytes } = await notarizedSnapshot(notary().signer);
    const { bag } = bagFromTar(bytes);
    const info = parseBagInfo(bag.files.get('bag-info.txt')!);
    const locations: BagLocation[] = parts().flatMap(([, part]) => [...part.in_bag]);
    for (const location of locations) {
      expect(bag.files.has(location.path), location.path).toBe(true);
      if (location.element) expect(info.has(location.element), location.element).toBe(true);
    }
    const referenced = new Set(locations.map((location) => location.path));
    expect([...bag.files.keys()].filter((path) => !referenced.has(path))).toEqual([]);
  });
});
