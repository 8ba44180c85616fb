/**
 * A real GraphQL client (urql, with its document cache and fetch exchanges) running the cross-service passport query
 * through the gateway, writing through it with a token, and reading a refusal with the service name.
 */
import { cacheExchange, Client, fetchExchange, gql } from '@urql/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTestStack, TOKENS, type SharedTestStack } from '../support/stack.js';
import { createModel, PASSPORTS_ACROSS_SERVICES, passportsAcrossServices, SHARED_TRUST, trustTheIssuerOnce } from './support.js';

const MODEL = 'battery-urql';
let platform: SharedTestStack;
let ids: string[];

beforeAll(async () => {
  platform = await sharedTestStack();
  await createModel(platform, MODEL);
  await trustTheIssuerOnce(platform);
  ids = await passportsAcrossServices(platform, MODEL, 3);
}, 180_000);

/**
 * urql sends queries as GET when they fit in a URL; the gateway (Apollo Server's CSRF prevention)
 * answers a GET only with a header a browser form cannot send. So: POST, or GET with that header.
 */
const client = (token?: string, method: 'POST' | 'GET' = 'POST') =>
  new Client({
    url: platform.stack.gateway.graphqlUrl,
    exchanges: [cacheExchange, fetchExchange],
    requestPolicy: 'network-only',
    preferGetMethod: method === 'GET' ? 'within-url-limit' : false,
    fetchOptions: () => ({
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(method === 'GET' ? { 'apollo-require-preflight': 'true' } : {}) },
    }),
  });

describe('urql through the gateway', () => {
  it('runs the cross-service passport query', async () => {
    const result = await client().query(gql(PASSPORTS_ACROSS_SERVICES), { ids }).toPromise();
    expect(result.error).toBeUndefined();
    const passports = result.data.passports as any[];
    expect(passports.map((passport) => passport.id)).toEqual(ids);
    for (const passport of passports) {
      // urql asks for __typename, which each subgraph answers for its own part of the passport.
      expect(passport.__typename).toBe('Passport');
      expect(passport.typeRecord).toMatchObject({ __typename: 'RegistryRecord', id: MODEL, version: 1, kind: 'model' });
      expect(passport.snapshots).toEqual([expect.objectContaining({ __typename: 'Snapshot', sha512: expect.stringMatching(/^[0-9a-f]{128}$/) })]);
      expect(passport.signingKeys.length).toBeGreaterThanOrEqual(2);
      for (const use of passport.signingKeys) {
        expect(use.standingAtFirstUse).toMatchObject({ __typename: 'TrustKeyStanding', standing: 'valid', rootId: SHARED_TRUST.root, node: { id: SHARED_TRUST.issuer } });
      }
    }
  });

  it('runs it as a GET too, with the preflight header the gateway asks of GETs', async () => {
    const result = await client(undefined, 'GET')
      .query(gql(PASSPORTS_ACROSS_SERVICES), { ids: [ids[1]] })
      .toPromise();
    expect(result.error).toBeUndefined();
    expect(result.data.passports[0]).toMatchObject({ id: ids[1], typeRecord: { id: MODEL } });
  });

  it('writes with a token, and the new snapshot shows on the passport at once', async () => {
    const created = await client(TOKENS.writer)
      .mutation(gql`mutation Snap($passportId: ID!) { createSnapshot(passportId: $passportId) { id passport { id typeRecord { id } } } }`, { passportId: ids[0] })
      .toPromise();
    expect(created.error).toBeUndefined();
    expect(created.data.createSnapshot.passport).toMatchObject({ id: ids[0], typeRecord: { id: MODEL } });
    const read = await client()
      .query(gql(PASSPORTS_ACROSS_SERVICES), { ids: [ids[0]] })
      .toPromise();
    expect(read.data.passports[0].snapshots.map((snapshot: { id: string }) => snapshot.id)).toContain(created.data.createSnapshot.id);
  });

  it('gets a refusal as a CombinedError naming the service', async () => {
    const refused = await client().mutation(gql`mutation Snap($passportId: ID!) { createSnapshot(passportId: $passportId) { id } }`, { passportId: ids[0] }).toPromise();
    expect(refused.data?.createSnapshot ?? null).toBeNull();
    expect(refused.error?.graphQLErrors[0]?.extensions).toMatchObject({ code: 'MISSING_TOKEN', serviceName: 'archive' });
  });
});
