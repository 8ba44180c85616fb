/**
 * One graph: a passport with its registry type record, its archive snapshots and the standing in
 * trust of every key that signed for it, in one GraphQL request through the gateway; and what that
 * request costs each subgraph in SQL statements, which stays the same for 10 passports and for 100
 * (and is what docs/ONE-GRAPH.md says); and every example query of docs/ONE-GRAPH.md, run.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApolloGateway } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { parse, type OperationDefinitionNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRuntimeConfig } from '../../lib/config/runtime.js';
import { SERVICES, type ServiceName } from '../../lib/config/services.js';
import { noPhoneHomePlugins } from '../../lib/graphql/subgraph-server.js';
import { startGateway } from '../../gateway/index.js';
import { sql } from '../support/database.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { DEFAULT_OPERATOR } from '../../lib/auth/operators.js';
import { operatorNodeId } from '../../lib/formats/trust/operators.js';
import { PLATFORM_ROOT_ID } from '../../subgraphs/trust/domain/platform-keys.js';
import { createModel, PASSPORTS_ACROSS_SERVICES, passportsAcrossServices, trustTheIssuer } from './support.js';

const MODEL = 'battery-one-graph';
let platform: TestStack;
let ids: string[];

/** The passports whose snapshots the archive made (through POST /snapshots); the others' are copies of the first's. */
const SNAPSHOTS_MADE = 10;

beforeAll(async () => {
  platform = await startTestStack();
  await createModel(platform, MODEL);
  await trustTheIssuer(platform);
  const made = await passportsAcrossServices(platform, MODEL, SNAPSHOTS_MADE);
  ids = [...made, ...(await passportsAcrossServices(platform, MODEL, 100 - SNAPSHOTS_MADE, { snapshots: false }))];
  // A snapshot for each of the other 90, copied in SQL from the first passport's (row and chunks,
  // under an id of its own): the cross-service request reads the snapshot rows of the passports,
  // one statement for any number, which is what is counted here. The archive making each one
  // (gather, bag, notarization) cost ~60 ms of CPU a passport, more than the rest of the setup.
  const { rows } = await sql(
    platform.databaseUrl,
    `WITH template AS (SELECT * FROM archive.snapshot WHERE passport_id = $1),
          copy AS (SELECT gen_random_uuid()::text AS id, passport_id FROM unnest($2::text[]) AS passport_id),
          rows AS (
            INSERT INTO archive.snapshot (id, passport_id, created_at, size, sha512, tagmanifest_sha512, payload_oxum, chunk_size, chunk_count, notarization, notary_kid)
            SELECT copy.id, copy.passport_id, t.created_at, t.size, t.sha512, t.tagmanifest_sha512, t.payload_oxum, t.chunk_size, t.chunk_count, t.notarization, t.notary_kid
            FROM template AS t, copy RETURNING id)
     INSERT INTO archive.snapshot_chunk (snapshot_id, seq, bytes, sha512)
     SELECT copy.id, c.seq, c.bytes, c.sha512 FROM copy, template AS t JOIN archive.snapshot_chunk AS c ON c.snapshot_id = t.id
     RETURNING (SELECT count(*) FROM rows) AS snapshots`,
    [ids[0], ids.slice(SNAPSHOTS_MADE)],
  );
  expect(Number(rows[0]!.snapshots)).toBe(100 - SNAPSHOTS_MADE);
}, 300_000);
afterAll(() => platform?.stop());

/** Runs the query and counts the SQL statements each subgraph sent meanwhile. */
async function measured(query: string, variables: Record<string, unknown>) {
  const before = platform.stack.sqlStatements();
  const result = await platform.graphql(query, variables);
  const after = platform.stack.sqlStatements();
  const statements = Object.fromEntries(Object.keys(after).map((service) => [service, after[service as ServiceName] - before[service as ServiceName]])) as Record<ServiceName, number>;
  return { result, statements };
}

describe('a passport across the four services', () => {
  it('answers its type record, snapshots and key standing in one request', async () => {
    const { result } = await measured(PASSPORTS_ACROSS_SERVICES, { ids: [ids[0]] });
    expect(result.errors).toBeUndefined();
    const [passport] = result.data.passports;
    expect(passport).toMatchObject({ id: ids[0], status: 'draft', typeRef: { id: MODEL, version: 1 } });
    expect(passport.typeRecord).toMatchObject({ id: MODEL, version: 1, kind: 'model', status: 'active', body: { title: MODEL } });
    expect(passport.snapshots).toHaveLength(1);
    expect(passport.snapshots[0].sha512).toMatch(/^[0-9a-f]{128}$/);
    expect(passport.signingKeys.map((use: { role: string }) => use.role).sort()).toEqual(['event', 'log_head', 'pack']);
    for (const use of passport.signingKeys) {
      expect(use.standingAtFirstUse).toMatchObject({ standing: 'valid', revoked: false, rootId: 'root-one-graph', node: { id: 'issuer-one-graph', kind: 'issuer' } });
      expect(use.standingAtFirstUse.path).toEqual([expect.objectContaining({ iss: 'root-one-graph', sub: 'issuer-one-graph' })]);
      expect(use.standingAtLastUse).toMatchObject({ standing: 'valid', revoked: false });
    }
  });

  it('reaches the passport back from its snapshot, and registry records, trust nodes and snapshots by reference', async () => {
    const snapshotId = (await platform.graphql(PASSPORTS_ACROSS_SERVICES, { ids: [ids[1]] })).data.passports[0].snapshots[0].id;
    const result = await platform.graphql(`query($id: ID!) { snapshot(id: $id) { id passport { id status typeRecord { id kind } snapshots { id } } } }`, { id: snapshotId });
    expect(result.errors).toBeUndefined();
    expect(result.data.snapshot).toMatchObject({ id: snapshotId, passport: { id: ids[1], status: 'draft', typeRecord: { id: MODEL, kind: 'model' }, snapshots: [{ id: snapshotId }] } });
  });

  it('names an unknown passport null, and a key trust does not know as unknown', async () => {
    const result = await platform.graphql(PASSPORTS_ACROSS_SERVICES, { ids: ['no-such-passport', ids[2]] });
    expect(result.errors).toBeUndefined();
    expect(result.data.passports[0]).toBeNull();
    expect(result.data.passports[1].id).toBe(ids[2]);
    const standing = await platform.graphql('{ trustKeyStandings(questions: [{ kid: "no-such-kid", at: "2026-01-01T00:00:00.000Z" }]) { kid at standing revoked node { id } path { id } reason } }');
    expect(standing.errors).toBeUndefined();
    expect(standing.data.trustKeyStandings).toEqual([
      { kid: 'no-such-kid', at: '2026-01-01T00:00:00.000Z', standing: 'unknown', revoked: false, node: null, path: null, reason: expect.stringContaining('no-such-kid') },
    ]);
  });
});

describe('batched references', () => {
  it('cost each subgraph the same few SQL statements for 10 passports as for 100', async () => {
    // The first request of a stack warms caches that are not per request; it is not counted.
    await measured(PASSPORTS_ACROSS_SERVICES, { ids: ids.slice(0, 2) });
    const ten = await measured(PASSPORTS_ACROSS_SERVICES, { ids: ids.slice(0, 10) });
    const hundred = await measured(PASSPORTS_ACROSS_SERVICES, { ids });
    expect(ten.result.errors).toBeUndefined();
    expect(hundred.result.errors).toBeUndefined();
    expect(hundred.result.data.passports).toHaveLength(100);
    expect(
      hundred.result.data.passports.every(
        (passport: { snapshots: unknown[]; typeRecord: unknown; signingKeys: { standingAtFirstUse: { standing: string } }[] }) =>
          passport.snapshots.length === 1 && passport.typeRecord !== null && passport.signingKeys.every((use) => use.standingAtFirstUse.standing === 'valid'),
      ),
    ).toBe(true);
    console.log(`SQL statements per subgraph: 10 passports ${JSON.stringify(ten.statements)}, 100 passports ${JSON.stringify(hundred.statements)}`);
    expect(hundred.statements).toEqual(ten.statements);
    // issuer: the passports, and which keys signed their events (one GROUP BY); registry: the
    // records and their current versions; archive: the snapshots; trust: one recursive query over
    // the part of the graph the keys hang from, for the standings at first use and those at last
    // use, which the gateway fetches at once and so sends as one batch.
    // The documentation's table says as much.
    const documented = Object.fromEntries(
      [...(await readFile('docs/ONE-GRAPH.md', 'utf8')).matchAll(/^\| (trust|registry|issuer|archive) \| (\d+) \|/gm)].map((match) => [match[1], Number(match[2])]),
    );
    expect(ten.statements).toEqual(documented);
    const ceiling: Record<ServiceName, number> = { issuer: 2, registry: 2, archive: 1, trust: 1 };
    for (const service of ['issuer', 'registry', 'archive', 'trust'] as const) {
      expect(ten.statements[service], service).toBeGreaterThan(0);
      expect(ten.statements[service], service).toBeLessThanOrEqual(ceiling[service]);
    }
  });
});

describe('the examples of docs/ONE-GRAPH.md', () => {
  it('all run through the gateway without errors, with the answers they promise', async () => {
    const markdown = await readFile('docs/ONE-GRAPH.md', 'utf8');
    const examples = [...markdown.matchAll(/```graphql\n([\s\S]*?)```/g)].map((match) => match[1]!);
    const names = examples.map((text) => (parse(text).definitions[0] as OperationDefinitionNode).name?.value);
    expect(names).toEqual(['PassportsAcrossServices', 'PassportForAVerifier', 'SnapshotAndItsPassport', 'KeyStanding', 'SnapshotPages']);
    const first = (await platform.graphql(PASSPORTS_ACROSS_SERVICES, { ids: [ids[0]] })).data.passports[0];
    const eventKey = first.signingKeys.find((use: { role: string }) => use.role === 'event');
    const variables: Record<string, unknown> = { ids: ids.slice(0, 3), id: ids[0], snapshotId: first.snapshots[0].id, kid: eventKey.kid, at: eventKey.firstUsed };
    const answers: Record<string, any> = {};
    for (const [index, text] of examples.entries()) {
      const operation = parse(text).definitions[0] as OperationDefinitionNode;
      const wanted = Object.fromEntries((operation.variableDefinitions ?? []).map((definition) => [definition.variable.name.value, variables[definition.variable.name.value]]));
      const result = await platform.graphql(text, wanted);
      expect(result.errors, names[index]).toBeUndefined();
      answers[names[index]!] = result.data;
    }
    expect(answers.PassportsAcrossServices.passports.map((passport: { id: string }) => passport.id)).toEqual(ids.slice(0, 3));
    const verifier = answers.PassportForAVerifier;
    expect(verifier.passport.typeRecord).toMatchObject({ id: MODEL, version: 1, currentVersion: 1 });
    expect(verifier.passport.signingKeys.every((use: { standingAtLastUse: { standing: string } }) => use.standingAtLastUse.standing === 'valid')).toBe(true);
    expect(verifier.passport.snapshots[0].notarization).toMatchObject({ passport_id: ids[0] });
    expect(verifier.issuer.keyring.keys.map((key: { kid: string }) => key.kid)).toContain(eventKey.kid);
    expect(verifier.trustAnchorBundle.signature).toEqual(expect.any(String));
    expect(answers.SnapshotAndItsPassport.snapshot.passport).toMatchObject({ id: ids[0], typeRecord: { id: MODEL, kind: 'model' } });
    expect(answers.SnapshotPages.snapshots.nodes.length).toBeGreaterThan(0);
    expect(answers.SnapshotPages.snapshots.pageInfo).toEqual({ hasNextPage: true, endCursor: expect.any(String) });
    expect(answers.KeyStanding.trustKeyStandings).toEqual([
      expect.objectContaining({ kid: eventKey.kid, standing: 'valid', rootId: 'root-one-graph', node: expect.objectContaining({ id: 'issuer-one-graph' }) }),
    ]);
  });
});

describe('the supergraph SDL', () => {
  it('is written to a file from which another gateway alone serves the same graph, as Apollo Router or Hive Gateway would', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'supergraph-'));
    try {
      const file = join(directory, 'supergraph.graphql');
      const composing = await startGateway({
        host: '127.0.0.1',
        port: 0,
        subgraphs: SERVICES.map((service) => ({ name: service, url: platform.stack.subgraphUrls[service] })),
        introspection: false,
        bodyLimit: 1024 * 1024,
        limits: loadRuntimeConfig({}).graphqlLimits,
        supergraphFile: file,
      });
      await composing.stop();
      const sdl = await readFile(file, 'utf8');
      expect(sdl).toBe(composing.supergraphSdl);
      // The entities and who resolves them, as docs/ONE-GRAPH.md lists them.
      for (const join of [
        /type Passport\n(\s+@join__type\(graph: (ARCHIVE|ISSUER), key: "id"\)){2}/,
        /type RegistryRecord\n(\s+@join__type\(graph: (ISSUER, key: "id version", resolvable: false|REGISTRY, key: "id version")\)){2}/,
        /type TrustKeyStanding\n(\s+@join__type\(graph: (ISSUER, key: "kid at", resolvable: false|TRUST, key: "kid at")\)){2}/,
        /snapshots: \[Snapshot!\]! @join__field\(graph: ARCHIVE\)/,
      ]) {
        expect(sdl).toMatch(join);
      }

      const server = new ApolloServer({ gateway: new ApolloGateway({ supergraphSdl: sdl }), plugins: noPhoneHomePlugins() });
      const { url } = await startStandaloneServer(server, { listen: { host: '127.0.0.1', port: 0 } });
      try {
        const ask = async (endpoint: string) => {
          const response = await fetch(endpoint, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: PASSPORTS_ACROSS_SERVICES, variables: { ids: ids.slice(0, 5) } }),
          });
          return (await response.json()) as { data?: unknown; errors?: unknown; extensions?: unknown };
        };
        const fromFile = await ask(url);
        expect(fromFile.errors).toBeUndefined();
        // Ours adds what the operation cost (lib/graphql/cost.ts), which a plain Apollo gateway does not report.
        const { extensions, ...ours } = await ask(platform.stack.gateway.graphqlUrl);
        expect(extensions).toEqual({ cost: { estimated: expect.any(Number), actual: expect.any(Number), max: expect.any(Number) } });
        expect(fromFile).toEqual(ours);
      } finally {
        await server.stop();
      }
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

// Last in this file: it suspends a passport and revokes the issuer's signing key.
describe('what can change, through the gateway', () => {
  const FRESH = `query Fresh($id: ID!, $questions: [TrustKeyStandingQuestion!]!) {
    passport(id: $id) { id status signingKeys { kid } }
    trustKeyStandings(questions: $questions) { kid standing revoked }
  }`;
  /** Many of the same request at once, as under load: the gateway shares identical subgraph fetches in flight and batches the rest. */
  const askedAtOnce = async (id: string, kid: string) => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => platform.graphql(FRESH, { id, questions: [{ kid, at: new Date(Date.now() + 60_000).toISOString() }] })));
    for (const answer of answers) expect(answer.errors).toBeUndefined();
    return answers.map((answer) => ({ status: answer.data.passport.status, standing: answer.data.trustKeyStandings[0].standing, revoked: answer.data.trustKeyStandings[0].revoked }));
  };

  it("answers a passport's status after its suspension, and a key's standing after its revocation, as they are now", async () => {
    const id = ids.at(-1)!;
    const first = await platform.graphql(FRESH, { id, questions: [] });
    const kid = first.data.passport.signingKeys[0].kid as string;
    if (first.data.passport.status === 'draft') expect((await platform.rest('issuer', `/passports/${id}/events`, { body: { type: 'activated', payload: {} }, as: 'writer' })).status).toBe(201);
    expect(new Set((await askedAtOnce(id, kid)).map((answer) => JSON.stringify(answer)))).toEqual(new Set([JSON.stringify({ status: 'active', standing: 'valid', revoked: false })]));

    const suspended = await platform.rest('issuer', `/passports/${id}/events`, { body: { type: 'suspended', payload: { reason: 'inspection' } }, as: 'writer' });
    expect(suspended.status, suspended.text).toBe(201);
    expect((await askedAtOnce(id, kid)).every((answer) => answer.status === 'suspended' && answer.standing === 'valid')).toBe(true);

    // The key is held by three nodes: the issuer's, the platform's own root (bin/ places the platform's keys there) and the default operator's node, which the
    // platform delegates to (docs/OPERATORS.md; the default operator's keys are the platform's issuer keys). The best standing of its holders counts, so all are revoked.
    for (const node of ['issuer-one-graph', PLATFORM_ROOT_ID, operatorNodeId(DEFAULT_OPERATOR)]) {
      const revoked = await platform.rest('trust', '/revocations', { body: { subject: `${node}#${kid}`, reason: 'superseded' }, as: 'admin' });
      expect(revoked.status, revoked.text).toBe(201);
    }
    expect((await askedAtOnce(id, kid)).every((answer) => answer.status === 'suspended' && answer.standing === 'revoked' && answer.revoked)).toBe(true);
  });
});
