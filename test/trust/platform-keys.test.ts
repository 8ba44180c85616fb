/**
 * A new deployment vouches for its own keys: from the first start the trust graph holds every
 * service's keyring in the `platform` root node, so a passport issued, logged and packed through
 * REST is `verified` with full coverage, without any setup step. Restarts add nothing twice, and a
 * rotation (`npm run keys -- rotate` runs placePlatformKeys after it) brings the new key in with the
 * old one's `exp`.
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

describe("the platform's own keys in the trust graph", () => {
  it('make a freshly issued passport verified with full coverage on a fresh deployment', async () => {
    const verdict = await freshPassportVerdict();
    expect(verdict.coverage).toEqual({ checks_run: 12, checks_total: 12, not_run: [] });
    expect(verdict.outcome).toBe('verified');
    const standing = verdict.checks.find((check: { check: string }) => check.check === 'key_standing.pack');
    expect(standing).toMatchObject({ outcome: 'passed' });
  });

  it('are visible in GET /graph as the platform root node, one key per keyring entry, without purpose', async () => {
    const platformNode = (await graph()).nodes.find((node) => node.id === 'platform');
    expect(platformNode?.kind).toBe('root');
    const published = await keyrings();
    expect(platformNode!.keys.map((key) => key.kid).sort()).toEqual(published.map((key) => key.kid).sort());
    for (const key of published) {
      const { purpose, signs, ...jwk } = key;
      expect([purpose, platformNode!.keys.find((held) => held.kid === key.kid)]).toEqual([purpose, jwk]);
    }
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

  it('follow a rotation: the new key is vouched for, the old one keeps its standing for what it signed', async () => {
    const rotated = await platform.graphql('mutation { issuerRotateKey(purpose: "event") }', {}, 'admin');
    expect(rotated.errors).toBeUndefined();
    const newKid = rotated.data.issuerRotateKey.kid as string;
    // Without the admin token nothing is placed.
    const refused = await platform.graphql('mutation { placePlatformKeys { created } }', {}, 'writer');
    expect(refused.errors?.[0]?.extensions?.code).toBeDefined();
    const placed = await platform.graphql('mutation { placePlatformKeys { created node { id keys } } }', {}, 'admin');
    expect(placed.errors).toBeUndefined();
    expect(placed.data.placePlatformKeys.created).toBe(false);
    const keys = placed.data.placePlatformKeys.node.keys as { kid: string; exp?: number }[];
    expect(keys.map((key) => key.kid)).toContain(newKid);
    const published = await keyrings();
    const retired = published.find((key) => key.purpose === 'event' && key.exp !== undefined)!;
    expect(keys.find((key) => key.kid === retired.kid)?.exp).toBe(retired.exp);

    const verdict = await freshPassportVerdict();
    expect(verdict.outcome).toBe('verified');
    expect(verdict.event_signature_audit.total).toBeGreaterThan(0);
  });
});
