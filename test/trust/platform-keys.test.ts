/**
 * A new deployment vouches for its own keys: from the first start the trust graph holds every
 * service's keyring in the `platform` root node, so a passport issued, logged and packed through
 * REST is `verified` with full coverage, without any setup step. Restarts add nothing twice, and a
 * rotation or revocation, however it is asked for, brings the change into the graph at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICES } from '../../lib/config/services.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { appendEvent, createModel, createPassport, PAYLOADS } from '../issuer/support.js';

let platform: TestStack;
const MODEL = 'platform-keys-battery';

beforeAll(async () => {
  platform = await startTestStack();
  await createModel(platform, MODEL);
}, 60_000);
afterAll(() => platform?.stop());

const graph = async () => (await platform.rest('trust', '/graph')).body as { nodes: { id: string; kind: string; keys: Record<string, unknown>[] }[]; edges: unknown[] };
/** Every service's published keyring (a service without GET /keyring publishes it in its discovery document). */
async function keyrings(): Promise<Record<string, any>[]> {
  const answer = await platform.graphql(`{ ${SERVICES.map((service) => `${service} { keyring }`).join(' ')} }`);
  return SERVICES.flatMap((service) => answer.data[service].keyring.keys);
}

async function freshPassportVerdict() {
  const { passport_id: id } = await createPassport(platform, MODEL);
  await appendEvent(platform, id, 'activated', PAYLOADS.activated!());
  expect((await platform.rest('issuer', `/passports/${id}/pack`, { method: 'POST', as: 'writer' })).status).toBe(201);
  return (await platform.rest('issuer', `/passports/${id}/verdict`)).body;
}

/** GET /graph's `platform` root node holds every published key as it is published, less purpose and signs. */
async function expectPlatformNodeHoldsKeyrings(): Promise<void> {
  const platformNode = (await graph()).nodes.find((node) => node.id === 'platform');
  expect(platformNode?.kind).toBe('root');
  const published = await keyrings();
  expect(platformNode!.keys.map((key) => key.kid).sort()).toEqual(published.map((key) => key.kid).sort());
  for (const key of published) {
    const { purpose, signs, operator: _operator, ...jwk } = key;
    expect([purpose, platformNode!.keys.find((held) => held.kid === key.kid)]).toEqual([purpose, jwk]);
  }
}

describe("the platform's own keys in the trust graph", () => {
  it('make a freshly issued passport verified with full coverage on a fresh deployment', async () => {
    const verdict = await freshPassportVerdict();
    expect(verdict.coverage).toEqual({ checks_run: 12, checks_total: 12, not_run: [] });
    expect(verdict.outcome).toBe('verified');
    const standing = verdict.checks.find((check: { check: string }) => check.check === 'key_standing.pack');
    expect(standing).toMatchObject({ outcome: 'passed' });
  });

  it('are visible in GET /graph as the platform root node, one key per keyring entry, without purpose', async () => {
    await expectPlatformNodeHoldsKeyrings();
    // The trust anchor bundle a verifier pins carries the platform root too.
    const bundle = (await platform.rest('trust', '/anchor-bundle')).body;
    expect(bundle.roots.map((root: { id: string }) => root.id)).toContain('platform');
  });

  it('are placed again at a restart without adding a node, key or edge twice', async () => {
    const before = await graph();
    await platform.restart();
    await platform.restart();
    expect(await graph()).toEqual(before);
    expect(before.nodes.filter((node) => node.id === 'platform')).toHaveLength(1);
  });

  it('follow a rotation made by the bare mutation: the new key is vouched for, the old one keeps its standing for what it signed', async () => {
    const rotated = await platform.graphql('mutation { issuerRotateKey(purpose: "event") }', {}, 'admin');
    expect(rotated.errors).toBeUndefined();
    const newKid = rotated.data.issuerRotateKey.kid as string;
    const platformNode = async () => (await graph()).nodes.find((node) => node.id === 'platform')!;
    const keys = (await platformNode()).keys as { kid: string; exp?: number }[];
    expect(keys.map((key) => key.kid)).toContain(newKid);
    const published = await keyrings();
    const retired = published.find((key) => key.purpose === 'event' && key.exp !== undefined)!;
    expect(keys.find((key) => key.kid === retired.kid)?.exp).toBe(retired.exp);
    // Placing again by hand changes nothing; without the admin token nothing is placed.
    const refused = await platform.graphql('mutation { placePlatformKeys { created } }', {}, 'writer');
    expect(refused.errors?.[0]?.extensions?.code).toBe('INSUFFICIENT_ROLE');
    const placed = await platform.graphql('mutation { placePlatformKeys { created node { id keys } } }', {}, 'admin');
    expect(placed.errors).toBeUndefined();
    expect(placed.data.placePlatformKeys.created).toBe(false);
    expect(placed.data.placePlatformKeys.node.keys).toEqual(keys);

    const verdict = await freshPassportVerdict();
    expect(verdict.outcome).toBe('verified');
    expect(verdict.event_signature_audit.total).toBeGreaterThan(0);
  });

  it('follow a revocation made by the bare mutation: the graph holds the revocation and the replacement key', async () => {
    const current = (await keyrings()).find((key) => key.purpose === 'notary' && key.exp === undefined && key.revoked === undefined);
    expect(current).toBeDefined();
    const revoked = await platform.graphql('mutation($kid: String!) { archiveRevokeKey(kid: $kid, reason: "keyCompromise") }', { kid: current!.kid }, 'admin');
    expect(revoked.errors).toBeUndefined();
    await expectPlatformNodeHoldsKeyrings();
    const held = (await graph()).nodes.find((node) => node.id === 'platform')!.keys.find((key) => key.kid === current!.kid);
    expect(held?.revoked).toMatchObject({ reason: 'keyCompromise' });
  });

  it("are taken by POST /nodes as every service's keyring publishes them, retired and revoked ones too; an unknown member still is not", async () => {
    // Each keyring as a client reads it over REST (the registry's is in its discovery document).
    const published: Record<string, unknown>[] = [];
    for (const service of SERVICES) {
      const answer = await platform.rest(service, service === 'registry' ? '/' : '/keyring');
      expect(answer.status, answer.text).toBe(200);
      published.push(...(answer.body.keyring?.keys ?? answer.body.keys));
    }
    expect(new Set(published.map((key) => key.purpose))).toEqual(new Set(['service', 'event', 'carrier', 'credential', 'notary']));
    expect(published.some((key) => key.exp !== undefined) && published.some((key) => key.revoked !== undefined)).toBe(true);
    for (const [index, key] of published.entries()) {
      const node = await platform.rest('trust', '/nodes', { body: { id: `pinned-${index}`, kind: 'issuer', keys: [key] }, as: 'admin' });
      expect(node.status, `${JSON.stringify(key)}: ${node.text}`).toBe(201);
      // The node holds the key and its lifetime; purpose, signs and operator stay the keyring's.
      const { purpose: _purpose, signs: _signs, operator: _operator, ...held } = key;
      expect(node.body.keys).toEqual([held]);
    }
    // A keyring key twice (both keys of a service at once) merges as any keys do.
    const issuer = published.filter((key) => key.purpose === 'event');
    expect((await platform.rest('trust', '/nodes', { body: { id: 'pinned-issuer', kind: 'issuer', keys: issuer }, as: 'admin' })).status).toBe(201);

    for (const extra of [{ colour: 'red' }, { d: 'nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A' }, { purpose: 7 }, { x5t: 'not a thumbprint' }]) {
      const refused = await platform.rest('trust', '/nodes', { body: { id: 'pinned-refused', kind: 'issuer', keys: [{ ...published[0], ...extra }] }, as: 'admin' });
      expect([refused.status, refused.body.code], refused.text).toEqual([422, 'INVALID_KEY']);
    }
  });
});
