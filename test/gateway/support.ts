/**
 * Data across the four services for the cross-service tests: a registry model, a trust root that
 * delegates to the issuer's current keys, passports of that model with events and a pack, and
 * archive snapshots of them.
 */
import { expect } from 'vitest';
import { createModel, createPassport, appendEvent, keyring, PAYLOADS } from '../issuer/support.js';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';
import { DAY, fromNow, newKey, seconds, signedJsonCredential } from '../trust/support.js';

/** The cross-service query the tests, the documentation and GraphiQL run: one request, four services. */
export const PASSPORTS_ACROSS_SERVICES = `query PassportsAcrossServices($ids: [ID!]!) {
  passports(ids: $ids) {
    id
    status
    typeRef { id version }
    typeRecord { id version kind status body }
    snapshots { id createdAt sha512 size notaryKid }
    signingKeys {
      role
      kid
      firstUsed
      lastUsed
      standingAtFirstUse { standing revoked rootId path { id iss sub } node { id kind } reason }
      standingAtLastUse { standing revoked reason }
    }
  }
}`;

/** Makes trust vouch for the issuer's current keys: a root, the issuer as a node, the root's delegation to it. */
export async function trustTheIssuer(platform: SharedTestStack, names = { root: 'root-one-graph', issuer: 'issuer-one-graph' }): Promise<void> {
  const root = await newKey();
  const rootNode = await platform.rest('trust', '/nodes', { body: { id: names.root, kind: 'root', keys: [{ ...root.jwk, iat: seconds(new Date(Date.now() - DAY)) }] }, as: 'admin' });
  expect(rootNode.status, JSON.stringify(rootNode.body)).toBe(201);
  const keys = (await keyring(platform)).filter((key) => !key.exp).map(({ kty, crv, x, y, kid, alg, iat }) => ({ kty, crv, x, ...(y ? { y } : {}), kid, alg, iat }));
  const node = await platform.rest('trust', '/nodes', { body: { id: names.issuer, kind: 'issuer', keys }, as: 'admin' });
  expect(node.status, JSON.stringify(node.body)).toBeLessThan(300);
  const credential = await signedJsonCredential({ iss: names.root, sub: names.issuer, scope: {}, iat: fromNow(-DAY / 2), exp: fromNow(365 * DAY) }, root);
  const edge = await platform.rest('trust', '/edges', { body: credential, as: 'admin' });
  expect(edge.status, JSON.stringify(edge.body)).toBe(201);
}

/** The names trust vouches for the issuer under on the worker's shared stack. */
export const SHARED_TRUST = { root: 'root-shared-stack', issuer: 'issuer-shared-stack' } as const;

const sharedTrust = new WeakMap<SharedTestStack, Promise<void>>();

/**
 * trustTheIssuer on the worker's shared stack (sharedTestStack), once for all its files, under
 * SHARED_TRUST's names: a second holder of the same keys would answer their standing through
 * whichever came first, so the files on that stack share this one.
 */
export function trustTheIssuerOnce(platform: SharedTestStack): Promise<typeof SHARED_TRUST> {
  let trusted = sharedTrust.get(platform);
  if (!trusted) {
    trusted = trustTheIssuer(platform, SHARED_TRUST);
    // A failed attempt is not kept: the next file tries again rather than inherit the error.
    trusted.catch(() => sharedTrust.delete(platform));
    sharedTrust.set(platform, trusted);
  }
  return trusted.then(() => SHARED_TRUST);
}

/**
 * `count` passports of one model, each with an event (and, every `packEvery`th, a pack), each with
 * a snapshot; created `parallel` at a time. Returns their ids in creation order.
 */
export async function passportsAcrossServices(platform: SharedTestStack, model: string, count: number, options: { parallel?: number; snapshots?: boolean } = {}): Promise<string[]> {
  const ids: string[] = [];
  const parallel = options.parallel ?? 10;
  for (let start = 0; start < count; start += parallel) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(parallel, count - start) }, async (_, offset) => {
        const passport = await createPassport(platform, model);
        const appended = await appendEvent(platform, passport.passport_id, 'ObjectEvent', PAYLOADS.ObjectEvent!());
        expect(appended.status, JSON.stringify(appended.body)).toBe(201);
        if ((start + offset) % 3 === 0) {
          const pack = await platform.rest('issuer', `/passports/${passport.passport_id}/pack`, { method: 'POST', as: 'writer' });
          expect(pack.status, JSON.stringify(pack.body)).toBeLessThan(300);
        }
        if (options.snapshots !== false) {
          const snapshot = await platform.rest('archive', '/snapshots', { as: 'writer', body: { passport_id: passport.passport_id } });
          expect(snapshot.status, JSON.stringify(snapshot.body)).toBe(201);
        }
        return passport.passport_id;
      }),
    );
    ids.push(...batch);
  }
  return ids;
}

export { createModel };

/**
 * The worker's shared stack, the issuer trusted there (trustTheIssuerOnce), and `count` passports of
 * a new model `model`, each with one event (an ObjectEvent) and one archive snapshot.
 */
export async function sharedStackWithPassports(model: string, count: number): Promise<{ platform: SharedTestStack; ids: string[] }> {
  const platform = await sharedTestStack();
  await createModel(platform, model);
  await trustTheIssuerOnce(platform);
  return { platform, ids: await passportsAcrossServices(platform, model, count) };
}
