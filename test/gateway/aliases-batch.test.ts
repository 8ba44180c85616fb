/**
 * Aliases and lists batch: N aliased `passport(id:)` fields with their type record, snapshots,
 * signing keys and key standings cost the same few subgraph HTTP requests and SQL statements for
 * N = 1, 10 and 30. Subgraph requests are counted by an HTTP proxy in front of each subgraph, which
 * a second gateway (the real one, started as bin/ starts it) is pointed at; SQL statements by the
 * statement counter every subgraph's Prisma client keeps.
 */
import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRuntimeConfig } from '../../lib/config/runtime.js';
import { SERVICES, type ServiceName } from '../../lib/config/services.js';
import { startGateway, type RunningGateway } from '../../gateway/index.js';
import { sharedTestStack, TOKENS, type SharedTestStack } from '../support/stack.js';
import { createModel, passportsAcrossServices, SHARED_TRUST, trustTheIssuerOnce } from './support.js';

const MODEL = 'battery-aliases';
let platform: SharedTestStack;
let gateway: RunningGateway;
let ids: string[];
const proxies: Server[] = [];
const requests: Record<ServiceName, number> = { trust: 0, registry: 0, issuer: 0, archive: 0 };

/** An HTTP proxy to a subgraph that counts the requests it passes on. */
async function countingProxy(service: ServiceName, target: string): Promise<string> {
  const server = createServer((incoming, outgoing) => {
    requests[service] += 1;
    const upstream = forward(new URL(incoming.url ?? '/', target), { method: incoming.method, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxies.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}${new URL(target).pathname}`;
}

beforeAll(async () => {
  platform = await sharedTestStack();
  await createModel(platform, MODEL);
  await trustTheIssuerOnce(platform);
  ids = await passportsAcrossServices(platform, MODEL, 30);
  const subgraphs = await Promise.all(SERVICES.map(async (service) => ({ name: service, url: await countingProxy(service, platform.stack.subgraphUrls[service]) })));
  gateway = await startGateway({ host: '127.0.0.1', port: 0, subgraphs, introspection: false, bodyLimit: 1024 * 1024, limits: loadRuntimeConfig({}).graphqlLimits });
}, 300_000);
afterAll(async () => {
  await gateway?.stop();
  for (const proxy of proxies) {
    proxy.closeAllConnections();
    proxy.close();
  }
});

/** One request with an aliased `passport(id:)` per id, as a client writes it. */
function aliasedPassports(count: number): string {
  const fields = ids.slice(0, count).map(
    (id, index) => `p${index}: passport(id: "${id}") {
      id
      typeRecord { id version kind status }
      snapshots { id sha512 }
      signingKeys { role kid standingAtFirstUse { standing rootId path { id } } standingAtLastUse { standing revoked } }
    }`,
  );
  return `{ ${fields.join('\n')} }`;
}

async function measured(query: string) {
  const sqlBefore = platform.stack.sqlStatements();
  const requestsBefore = { ...requests };
  const response = await fetch(gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.writer}` }, body: JSON.stringify({ query }) });
  const result = (await response.json()) as { data?: Record<string, any>; errors?: unknown[] };
  const sqlAfter = platform.stack.sqlStatements();
  const sum = (counts: Record<ServiceName, number>, minus: Record<ServiceName, number>) => SERVICES.reduce((total, service) => total + counts[service] - minus[service], 0);
  const perService = Object.fromEntries(SERVICES.map((service) => [service, `${requests[service] - requestsBefore[service]}/${sqlAfter[service] - sqlBefore[service]}`]));
  return { result, sql: sum(sqlAfter, sqlBefore), requests: sum(requests, requestsBefore), perService };
}

describe('aliased root fields', () => {
  it('cost the same few subgraph requests and SQL statements for 1, 10 and 30 passports', async () => {
    await measured(aliasedPassports(2)); // warms caches that outlive a request (compiled plans, keyrings)
    const figures: Record<number, { requests: number; sql: number }> = {};
    for (const count of [1, 10, 30]) {
      const { result, sql, requests: sent, perService } = await measured(aliasedPassports(count));
      expect(result.errors).toBeUndefined();
      const passports = Object.values(result.data!);
      expect(passports).toHaveLength(count);
      for (const [index, passport] of passports.entries()) {
        expect(passport).toMatchObject({ id: ids[index], typeRecord: { id: MODEL, version: 1, kind: 'model' }, snapshots: [{ sha512: expect.stringMatching(/^[0-9a-f]{128}$/) }] });
        expect(passport.signingKeys.length).toBeGreaterThan(0);
        for (const use of passport.signingKeys) expect(use.standingAtFirstUse).toMatchObject({ standing: 'valid', rootId: SHARED_TRUST.root });
      }
      figures[count] = { requests: sent, sql };
      console.log(`${count} aliased passport(id:) fields, subgraph HTTP requests/SQL statements: ${JSON.stringify(perService)}`);
    }
    for (const count of [1, 10, 30]) {
      expect(figures[count]!.requests, `${count} passports`).toBeLessThanOrEqual(8);
      expect(figures[count]!.sql, `${count} passports`).toBeLessThanOrEqual(15);
    }
    expect(figures[30]).toEqual(figures[10]);
  });

  it('cost the same for 5 and 20 aliased snapshot, registry record and trust node fields (60 aliases, the limit)', async () => {
    const snapshotIds: string[] = [];
    for (const [index, passport] of Object.entries((await measured(aliasedPassports(30))).result.data!)) snapshotIds[Number(index.slice(1))] = passport.snapshots[0].id;
    const aliased = (count: number) =>
      `{ ${Array.from({ length: count }, (_, i) => `s${i}: snapshot(id: "${snapshotIds[i]}") { id passport { id status } } r${i}: ${i % 2 ? `registryRecord(id: "${MODEL}")` : `registryModel(id: "${MODEL}", version: 1)`} { id version kind } t${i}: trustNode(id: "${SHARED_TRUST.issuer}") { id kind }`).join('\n')} }`;
    await measured(aliased(2));
    const five = await measured(aliased(5));
    const twenty = await measured(aliased(20));
    for (const run of [five, twenty]) {
      expect(run.result.errors).toBeUndefined();
      expect(Object.values(run.result.data!).every((value) => value !== null)).toBe(true);
    }
    console.log(`aliased snapshot/registryModel/trustNode fields, subgraph HTTP requests/SQL statements: 5 ${JSON.stringify(five.perService)}, 20 ${JSON.stringify(twenty.perService)}`);
    expect(twenty.perService).toEqual(five.perService);
  });
});

describe('a batch sent straight to a subgraph', () => {
  it('runs each mutation with its own admin-log entry, though the operations share one request', async () => {
    const logged = async () =>
      (
        (await platform.graphql('{ trust { adminLog(first: 500) { nodes { action target outcome } } } }', {}, 'admin')).data.trust.adminLog.nodes as {
          action: string;
          /** Null for what names no object (a counted refusal on the shared stack). */
          target: string | null;
          outcome: string;
        }[]
      ).filter((entry) => entry.action === 'upsertTrustNode' && entry.target?.startsWith('batched-'));
    const upsert = (id: string) => ({ query: `mutation { upsertTrustNode(input: { id: "${id}", kind: "issuer" }) { created node { id } } }` });
    const response = await fetch(platform.stack.subgraphUrls.trust, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.admin}` },
      body: JSON.stringify([upsert('batched-a'), upsert('batched-b'), upsert('batched-c')]),
    });
    const answers = (await response.json()) as { data?: { upsertTrustNode: { created: boolean } }; errors?: unknown }[];
    expect(answers.map((answer) => answer.errors)).toEqual([undefined, undefined, undefined]);
    expect(answers.map((answer) => answer.data!.upsertTrustNode.created)).toEqual([true, true, true]);
    const entries = await logged();
    expect(entries.map((entry) => `${entry.target} ${entry.outcome}`).sort()).toEqual(['batched-a ok', 'batched-b ok', 'batched-c ok']);
  });
});
